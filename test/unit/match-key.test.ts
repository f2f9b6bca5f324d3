/**
 * The index key of a wait_for_event `match` (core/expressions/match-key.ts): an equality between a plain
 * path of the event and an expression that does not read the event. The key only narrows the waiters an
 * event is tried against, so anything it does not recognise must get no key rather than a wrong one.
 */
import { expect } from 'chai';
import jsonata from 'jsonata';
import { matchKeyOf } from '../../core/expressions/match-key';

describe('the index key of a wait_for_event match', () => {
  it('is the event path and the other side of an equality, whichever side the event is on', () => {
    const expected = { eventPath: '`data`.`order_id`', valueExpression: 'input.order_id' };
    expect(matchKeyOf('event.data.order_id = input.order_id')).to.deep.equal(expected);
    expect(matchKeyOf('input.order_id = event.data.order_id')).to.deep.equal(expected);
  });

  it('is taken from one term of a conjunction, inside parentheses too', () => {
    expect(matchKeyOf('event.data.total > 5 and (event.data.k = ($string(input.k) & "-x"))')).to.deep.equal({
      eventPath: '`data`.`k`',
      valueExpression: '($string(input.k) & "-x")',
    });
    expect(matchKeyOf('(event.data.id = steps.create.output.body.id)')).to.deep.equal({
      eventPath: '`data`.`id`',
      valueExpression: 'steps.create.output.body.id',
    });
  });

  it('quotes field names, so names with dashes or spaces stay one field', () => {
    expect(matchKeyOf('event.data.`order-id` = input.id')?.eventPath).to.equal('`data`.`order-id`');
  });

  it('keeps string literals whole, parentheses inside them included', () => {
    expect(matchKeyOf('event.data.id = "a)b"')?.valueExpression).to.equal('"a)b"');
  });

  it('gives no key where the match is not such an equality', () => {
    for (const match of [
      'event.data.total > 5',
      '$lowercase(event.data.x) = "y"',
      'event.data.id = event.data.other',
      'event.data[0].id = input.id',
      'event.data.id = $$.input.id',
      'event.data.a = 1 or event.data.b = 2',
      'not a valid expression (',
    ]) {
      expect(matchKeyOf(match), match).to.equal(undefined);
    }
  });

  it('never excludes a true match: the key holds whenever the whole match holds', async () => {
    const context = { input: { order_id: 'o-1', k: 7 }, steps: {} };
    const events = [
      { id: 'e1', name: 'paid', data: { order_id: 'o-1', total: 9, k: '7-x' } },
      { id: 'e2', name: 'paid', data: { order_id: 'o-2', total: 9, k: '7-x' } },
      { id: 'e3', name: 'paid', data: [{ order_id: 'o-1' }] },
    ];
    for (const match of [
      'event.data.order_id = input.order_id',
      'event.data.total > 5 and (event.data.k = ($string(input.k) & "-x"))',
    ]) {
      const key = matchKeyOf(match)!;
      const value = JSON.stringify(await jsonata(key.valueExpression).evaluate(context));
      for (const event of events) {
        const holds = (await jsonata(match).evaluate({ ...context, event })) === true;
        const keyed = JSON.stringify(await jsonata(key.eventPath).evaluate(event)) === value;
        if (holds) expect(keyed, `${match} over ${JSON.stringify(event)}`).to.equal(true);
      }
    }
  });
});
