/**
 * A run's queued time as `GET /v1/executions/{id}` reads it from history (src/executions/history-mapper.ts,
 * docs/flow-control.md#watching-the-queue), over recorded runs of the replay corpus: queued at its
 * concurrency gate and admitted by the `admitted` signal, canceled while queued, held by its throttle after
 * taking its place at once, and debounced (queued from its start until its key was quiet).
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { optionalTsToDate } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { projectRoot } from '../../platform/paths';
import { mapExecution } from '../../src/executions/history-mapper';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const EventType = temporal.api.enums.v1.EventType;

function recorded(name: string): HistoryEvent[] {
  const file = path.join(projectRoot, 'test/replay/histories', `${name}.json`);
  const history = historyFromJSON(JSON.parse(fs.readFileSync(file, 'utf8')));
  // Through the wire format, as a history fetched from Temporal arrives (its times as Longs).
  const History = temporal.api.history.v1.History;
  return History.decode(History.encode(history).finish()).events;
}

/** The time of the `nth` event of `type` (1 for the first). */
function timeOf(events: HistoryEvent[], type: temporal.api.enums.v1.EventType, nth = 1): string {
  const event = events.filter((e) => e.eventType === type)[nth - 1];
  return optionalTsToDate(event!.eventTime)!.toISOString();
}

const UPSERT = EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES;
const STARTED = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED;
const MARKER = EventType.EVENT_TYPE_MARKER_RECORDED;
const SIGNALED = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED;

describe('queued time read from history', () => {
  it('a run queued at its concurrency: from SwitchyardQueued set to the `admitted` signal', () => {
    const events = recorded('execution-flow-control-admitted');
    const view = mapExecution('ex_admitted', { events });
    expect(view.status).to.equal('success');
    expect(view.queued_at).to.equal(timeOf(events, UPSERT));
    expect(view.admitted_at).to.equal(timeOf(events, SIGNALED));
    expect(view.queued_ms).to.equal(Date.parse(view.admitted_at!) - Date.parse(view.queued_at!));
  });

  it('a run canceled while queued: queued until its end, never admitted', () => {
    const events = recorded('execution-flow-control-canceled-queued');
    const view = mapExecution('ex_canceled', { events });
    expect(view.status).to.equal('canceled');
    expect(view.queued_at).to.equal(timeOf(events, UPSERT));
    expect(view.admitted_at).to.equal(null);
    expect(view.queued_ms).to.equal(Date.parse(view.finished_at!) - Date.parse(view.queued_at!));
  });

  it('a run held by its throttle: admitted by the `throttle_admitted` signal', () => {
    const events = recorded('execution-throttle-waited');
    const view = mapExecution('ex_throttled', { events });
    expect(view.queued_at).to.equal(timeOf(events, UPSERT));
    expect(view.admitted_at).to.equal(timeOf(events, SIGNALED));
    expect(view.queued_ms).to.be.greaterThan(1000);
  });

  it('a debounced run: queued from its start, admitted when its last `end_debounce` answered', () => {
    const events = recorded('execution-debounce-coalesced');
    const view = mapExecution('ex_debounced', { events });
    expect(view.status).to.equal('success');
    expect(view.queued_at).to.equal(timeOf(events, STARTED));
    // Two end_debounce markers: the first said to wait on, the second started the run.
    expect(view.admitted_at).to.equal(timeOf(events, MARKER, 2));
    expect(view.queued_ms).to.be.greaterThan(1000);
  });

  it('a debounced run behind a concurrency gate: admitted by its acquire after the debounce', () => {
    const events = recorded('execution-debounce-concurrency-failed');
    const view = mapExecution('ex_debounced_gated', { events });
    expect(view.queued_at).to.equal(timeOf(events, STARTED));
    expect(view.admitted_at).to.equal(timeOf(events, MARKER, 2));
  });

  it('a debounced run canceled while it waited: queued until its end', () => {
    const events = recorded('execution-debounce-canceled');
    const view = mapExecution('ex_debounced_canceled', { events });
    expect(view.status).to.equal('canceled');
    expect(view.queued_at).to.equal(timeOf(events, STARTED));
    expect(view.admitted_at).to.equal(null);
  });

  it('a run that never queued: none, while still open too', () => {
    const events = recorded('execution-flow-control-admitted');
    // The same run before its first workflow task completed: nothing queued it yet.
    const view = mapExecution('ex_open', { events: events.slice(0, 3), now: new Date() });
    expect(view).to.include({ queued_at: null, admitted_at: null, queued_ms: null });
  });

  it('a run still queued: its queued time runs to now', () => {
    const events = recorded('execution-flow-control-admitted');
    const queuedUntil = events.findIndex((e) => e.eventType === SIGNALED);
    const queuedAt = timeOf(events, UPSERT);
    const now = new Date(Date.parse(queuedAt) + 5_000);
    const view = mapExecution('ex_queued', { events: events.slice(0, queuedUntil), queued: true, now });
    expect(view.status).to.equal('queued');
    expect(view).to.include({ queued_at: queuedAt, admitted_at: null, queued_ms: 5_000 });
  });
});
