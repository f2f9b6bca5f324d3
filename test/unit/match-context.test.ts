/**
 * What a wait_for_event keeps of its step's context for its `match` (workers/activities/event-waits.ts
 * matchContext): only what the match reads, so that a waiting run leaves as little of its data at rest as
 * it can (sealed besides).
 */
import { expect } from 'chai';
import type { ExpressionContext } from '../../core/execution-types';
import { matchContext } from '../../workers/activities/event-waits';

const context = {
  input: { order_id: 'o-1', card: '4242' },
  execution: { id: 'ex_1', workflow: 'orders', version: 1 },
  steps: { quote: { status: 'success', output: 12 }, other: { status: 'success', output: 'x' } },
  order: 'o-9',
} as unknown as ExpressionContext;

describe('what a wait keeps of its context for its match', () => {
  it('keeps nothing without a match', () => {
    expect(matchContext(null, context)).to.deep.equal({});
  });

  it('keeps the names the match reads, and not `event`', () => {
    expect(matchContext('event.data.order_id = input.order_id', context)).to.deep.equal({
      input: context.input,
    });
  });

  it('keeps a container name such as a map item', () => {
    expect(matchContext('event.data.order_id = order', context)).to.deep.equal({ order: 'o-9' });
  });

  it('keeps only the steps the match names', () => {
    expect(matchContext('event.data.total >= steps.quote.output', context)).to.deep.equal({
      steps: { quote: context.steps['quote'] },
    });
  });

  it('keeps the whole context when the match may read it as a whole', () => {
    expect(matchContext('$count($keys($$)) > 0 and event.data.x = 1', context)).to.deep.equal(context);
    expect(matchContext('$keys(steps) = event.data.keys', context)).to.deep.equal(context);
  });
});
