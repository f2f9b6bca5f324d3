/**
 * A wait_for_event's `match` over an event, as a new wait tries the events that arrived while it was being
 * filed (workers/activities/event-waits.ts): it holds or not as JSONata says, and a match that fails over an
 * event does not hold (the wait goes on), as when the dispatcher tries it (src/events/wake.ts).
 */
import { expect } from 'chai';
import { evaluateExpression } from '../../core/expressions/evaluate';
import type { ExpressionContext } from '../../core/execution-types';
import { matches, type StepEvaluate } from '../../workers/activities/event-waits';

const evaluate: StepEvaluate = (expression, context) => evaluateExpression(expression, context);
const context = { input: { order_id: 'ord_7', min: 100 }, steps: {} } as unknown as ExpressionContext;
const event = (data: Record<string, unknown>) => ({
  id: 'evt_1',
  name: 'payment.succeeded',
  data,
  received_at: new Date('2026-11-26T10:00:00Z'),
});

describe("a wait_for_event's match over an event that arrived while the wait was filed", () => {
  it('holds when the expression over the context plus the event is truthy, and not otherwise', async () => {
    const match = 'event.data.order_id = input.order_id';
    expect(await matches(match, context, event({ order_id: 'ord_7' }), evaluate)).to.equal(true);
    expect(await matches(match, context, event({ order_id: 'ord_8' }), evaluate)).to.equal(false);
    expect(await matches(null, context, event({}), evaluate), 'no match: any event').to.equal(true);
  });

  it('does not hold when it fails over the event, rather than failing the step', async () => {
    // $number of a string that is no number is a JSONata error (D3030).
    const match = '$number(event.data.amount) >= input.min';
    expect(await matches(match, context, event({ amount: 'a lot' }), evaluate)).to.equal(false);
    expect(await matches(match, context, event({ amount: '250' }), evaluate)).to.equal(true);
  });
});
