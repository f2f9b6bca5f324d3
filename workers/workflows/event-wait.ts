/**
 * A wait_for_event step (docs/events.md#waiting-for-an-event) after `run_steps` filed it among its event's
 * waiters: here the run waits for the API's dispatcher to signal that an event woke it (EVENT_WOKE_SIGNAL,
 * kept in `run.eventWakes` by the handler in execution.ts and map-chunk.ts), or for its timeout, a Temporal
 * timer whose summary is the step's key (as a sleep's). Then `end_event_wait` ends the wait in the database
 * and gives the step's record: the event that claimed it (even when the timeout came first: a claim is a
 * wake), or the timeout (`on_timeout`), or a cancel. That record, a marker in history, is what reads show.
 *
 * While it waits the execution is `waiting` (waiting.ts). Inside a container that halts it stops waiting,
 * as a sleep does; canceling the execution ends the wait in a scope the cancellation cannot interrupt, so
 * that no event is claimed for it afterwards. Deterministic code only.
 */
import {
  CancellationScope,
  condition,
  defineSignal,
  isCancellation,
  proxyLocalActivities,
  setHandler,
  sleep,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { LeafStep } from '../../core/definitions/schema';
import {
  EVENT_WOKE_SIGNAL,
  type BatchNext,
  type EndEventWaitRequest,
  type EventWokeSignal,
  type StepRecord,
} from '../../core/execution-types';
import { errorPath, Halted, StepFailure, waitKey, type Frame, type Run } from './frame';
import { waitBegan, waitEnded } from './waiting';

const { end_event_wait } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '1m',
  // What throws is the database away: retried until it is back, so that the wait is ended.
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
});

const eventWoke = defineSignal<[EventWokeSignal]>(EVENT_WOKE_SIGNAL);

/**
 * Keeps the wakes the dispatcher signals, whenever they come: before the wait's own workflow task is over,
 * or again (a dispatch that did not finish is done again), which changes nothing.
 */
export function listenForEventWakes(run: Run): void {
  setHandler(eventWoke, ({ key, event_id }) => {
    if (!run.eventWakes.has(key)) run.eventWakes.set(key, event_id);
  });
}

/** Waits for the event (or the timeout); the step's output once it is done. */
export async function waitForEvent(
  run: Run,
  frame: Frame,
  step: LeafStep,
  next: Extract<BatchNext, { kind: 'event' }>,
  record: StepRecord,
): Promise<unknown> {
  const key = waitKey(frame.path, step.id);
  const request = (ended: EndEventWaitRequest['ended']): EndEventWaitRequest => ({
    record,
    key,
    ended,
    on_timeout: next.on_timeout,
  });
  run.sleeping++;
  waitBegan(run);
  const timerScope = new CancellationScope();
  let timedOut = false;
  timerScope
    .run(() => sleep(Math.max(1, next.delay_ms), { summary: key }))
    .then(
      () => (timedOut = true),
      // Canceled: the execution's cancellation reaches the condition below too.
      () => undefined,
    );
  try {
    await condition(() => run.eventWakes.has(key) || timedOut || frame.halt.stopped);
  } catch (error) {
    if (isCancellation(error))
      await CancellationScope.nonCancellable(() => end_event_wait(request('canceled')));
    throw error;
  } finally {
    run.sleeping--;
    waitEnded(run);
  }
  const woke = run.eventWakes.has(key);
  if (!timedOut) timerScope.cancel();
  const ended = woke ? 'woke' : timedOut ? 'timed_out' : 'canceled';
  const done = await end_event_wait(request(ended));
  if (done.status === 'canceled') throw new Halted();
  if (done.status === 'failed') {
    throw new StepFailure({
      step: step.id,
      ...(frame.path.length > 0 && { path: errorPath(frame, step.id) }),
      ...done.error!,
    });
  }
  frame.steps[step.id] = { status: 'success', output: done.output };
  return done.output;
}
