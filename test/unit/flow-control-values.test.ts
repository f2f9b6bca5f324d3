/**
 * What a flow control key and priority become once evaluated (core/flow-control.ts), for the values a
 * hostile input can make them: long text, objects with a "__proto__" key, huge arrays, non-numbers.
 */
import { expect } from 'chai';
import { admissionKeyOf, MAX_ADMISSION_KEY_LENGTH, priorityOf } from '../../core/flow-control';

describe('flow control key and priority values', () => {
  it('keeps a string key as it is, cut to MAX_ADMISSION_KEY_LENGTH characters', () => {
    expect(admissionKeyOf('acme')).to.equal('acme');
    expect(admissionKeyOf('x'.repeat(100_000))).to.have.length(MAX_ADMISSION_KEY_LENGTH);
  });

  it('turns a number or a boolean into its JSON text, and anything else into "null"', () => {
    expect(admissionKeyOf(42)).to.equal('42');
    expect(admissionKeyOf(true)).to.equal('true');
    expect(admissionKeyOf(Number.POSITIVE_INFINITY)).to.equal('null');
    expect(admissionKeyOf(JSON.parse('{"__proto__": {"polluted": 1}}'))).to.equal('null');
    expect(admissionKeyOf(Array.from({ length: 100_000 }, (_, i) => i))).to.equal('null');
    expect(admissionKeyOf(undefined)).to.equal('null');
    expect(({} as Record<string, unknown>)['polluted']).to.equal(undefined);
  });

  it('rounds and clamps a priority to -100..100, and makes anything but a number 0', () => {
    expect(priorityOf(7.6)).to.equal(8);
    expect(priorityOf(1e9)).to.equal(100);
    expect(priorityOf(-1e9)).to.equal(-100);
    expect(priorityOf(Number.NaN)).to.equal(0);
    expect(priorityOf('100')).to.equal(0);
    expect(priorityOf(JSON.parse('{"__proto__": 5}'))).to.equal(0);
  });
});
