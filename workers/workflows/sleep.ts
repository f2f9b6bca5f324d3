/**
 * A sleep step (docs/definitions.md#sleep) after `run_steps` began it: its record says until when
 * (`waiting_for`), and here a Temporal timer waits until then. The timer lives on the Temporal server, so
 * restarts of the worker, the API or Temporal itself do not move the wake time; canceling the execution
 * cancels the timer at once. The timer's summary is the step's key (its run path and id), by which reads
 * tell which step a timer belongs to (src/executions/history-mapper.ts) and Temporal UI names it.
 *
 * While it sleeps the execution is `waiting` (waiting.ts). Inside a container that halts (another run
 * failed), it stops sleeping, as a waiting approval stops waiting. Deterministic code only.
 */
import { CancellationScope, condition, sleep } from '@temporalio/workflow';
import type { LeafStep } from '../../core/definitions/schema';
import type { BatchNext, SleepOutput } from '../../core/execution-types';
import { Halted, waitKey, type Frame, type Run } from './frame';
import { waitBegan, waitEnded } from './waiting';

/**
 * Sleeps until `next.until`; the step's output once it woke. The timer starts when this workflow task
 * completes, a moment after the activity measured `delay_ms`: so it fires at `until` or a moment after,
 * never before.
 */
export async function sleepUntil(
  run: Run,
  frame: Frame,
  step: LeafStep,
  next: Extract<BatchNext, { kind: 'sleep' }>,
): Promise<SleepOutput> {
  const { until } = next;
  run.sleeping++;
  waitBegan(run);
  const ms = Math.max(1, next.delay_ms);
  const timerScope = new CancellationScope();
  let fired = false;
  timerScope
    .run(() => sleep(ms, { summary: waitKey(frame.path, step.id) }))
    .then(
      () => (fired = true),
      // Canceled: the execution's cancellation reaches the condition below too; a halt cancels it there.
      () => undefined,
    );
  await condition(() => fired || frame.halt.stopped);
  run.sleeping--;
  waitEnded(run);
  if (!fired) {
    timerScope.cancel();
    throw new Halted();
  }
  const output: SleepOutput = { slept_until: until };
  frame.steps[step.id] = { status: 'success', output };
  return output;
}
