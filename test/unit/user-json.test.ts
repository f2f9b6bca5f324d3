/** User JSON is data: helpers that never let a user key reach a prototype (core/user-json.ts). */
import { expect } from 'chai';
import { z } from 'zod';
import { parseUserJson } from '../../core/parse-user-json';
import { getOwn, objectFromEntries, setOwn } from '../../core/user-json';
import { resolveTemplates } from '../../core/expressions/templates';
import { evaluateExpression } from '../../core/expressions/evaluate';

const json = (text: string): unknown => JSON.parse(text) as unknown;

describe('user JSON', () => {
  it('setOwn defines "__proto__" as an entry and leaves the prototype alone', () => {
    const target = {};
    setOwn(target, '__proto__', { polluted: true });
    expect(Object.getPrototypeOf(target)).to.equal(Object.prototype);
    expect(JSON.stringify(target)).to.equal('{"__proto__":{"polluted":true}}');
  });

  it('getOwn reads own keys only', () => {
    expect(getOwn({}, '__proto__')).to.equal(undefined);
    expect(getOwn({}, 'constructor')).to.equal(undefined);
    expect(getOwn(json('{"__proto__": 1}'), '__proto__')).to.equal(1);
  });

  it('objectFromEntries keeps a "__proto__" entry', () => {
    expect(JSON.stringify(objectFromEntries([['__proto__', 1]]))).to.equal('{"__proto__":1}');
  });

  describe('parseUserJson', () => {
    const headers = z.strictObject({ headers: z.record(z.string(), z.string()) });

    it('keeps a record key "__proto__" that zod alone drops', () => {
      const value = json('{"headers": {"__proto__": "a", "b": "c"}}');
      expect(JSON.stringify(headers.parse(value))).to.equal('{"headers":{"b":"c"}}');
      const parsed = parseUserJson(headers, value);
      expect(parsed.success).to.equal(true);
      if (parsed.success)
        expect(JSON.stringify(parsed.data)).to.equal('{"headers":{"__proto__":"a","b":"c"}}');
    });

    it('validates the value under "__proto__" and names the key as written', () => {
      const parsed = parseUserJson(headers, json('{"headers": {"__proto__": 5}}'));
      expect(parsed.success).to.equal(false);
      if (!parsed.success) expect(parsed.issues[0]!.path).to.deep.equal(['headers', '__proto__']);
    });

    it('reports an unknown "__proto__" field of a strict object by its name', () => {
      const parsed = parseUserJson(headers, json('{"headers": {}, "__proto__": {}}'));
      expect(parsed.success).to.equal(false);
      if (!parsed.success)
        expect(parsed.issues[0]).to.deep.include({ code: 'unrecognized_keys', keys: ['__proto__'] });
    });

    it('leaves keys that start with U+0000 as they were', () => {
      const parsed = parseUserJson(headers, json('{"headers": {"\\u0000x": "1", "__proto__": "2"}}'));
      expect(parsed.success).to.equal(true);
      if (parsed.success) expect(Object.keys(parsed.data.headers)).to.deep.equal(['\u0000x', '__proto__']);
    });
  });

  it('templates keep a "__proto__" key of the configuration', async () => {
    const resolved = await resolveTemplates(json('{"__proto__": {"x": "{{ input.a }}"}}'), {
      input: { a: 1 },
    });
    expect(JSON.stringify(resolved)).to.equal('{"__proto__":{"x":1}}');
    expect(Object.getPrototypeOf(resolved)).to.equal(Object.prototype);
  });

  it('an expression result with a "__proto__" key keeps it', async () => {
    const result = await evaluateExpression('{"__proto__": {"polluted": 1}}', {});
    expect(JSON.stringify(result)).to.equal('{"__proto__":{"polluted":1}}');
    expect(Object.getPrototypeOf(result)).to.equal(Object.prototype);
  });
});
