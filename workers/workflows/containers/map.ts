/**
 * `map` (docs/definitions.md#composition): the step's steps run once per item, with the item (`as`, default
 * `item`) and its `index` in the context, at most `concurrency` items at once. A failed item is tolerated
 * up to `tolerated_failures` (a count, or a percentage of the items); past it the step fails with that
 * item's error, the items in flight are canceled and the pending ones never start. Output: each item's
 * last step output, in item order (null for a tolerated failure).
 *
 * Items run in this workflow's history: the interpreter's history check (interpreter.ts) fails the step
 * with `history_too_large` before a map outgrows Temporal's limits.
 */
import { CancellationScope } from '@temporalio/workflow';
import type { MapStep } from '../../../core/definitions/schema';
import { childFrame, StepFailure, type Frame, type Runner } from '../frame';
import { settleAll } from './settle';

const DEFAULT_CONCURRENCY = 10;

/** How many failed items `tolerated` allows out of `count`. */
export function toleratedFailures(tolerated: MapStep['tolerated_failures'], count: number): number {
  if (tolerated === undefined) return 0;
  if (typeof tolerated === 'number') return tolerated;
  return Math.floor((count * Number(tolerated.slice(0, -1))) / 100);
}

export async function runMap(
  runner: Runner,
  frame: Frame,
  step: MapStep,
  items: unknown[],
): Promise<unknown[]> {
  const name = step.as ?? 'item';
  const allowed = toleratedFailures(step.tolerated_failures, items.length);
  const outputs: unknown[] = new Array<unknown>(items.length).fill(null);
  const scope = new CancellationScope();
  let next = 0;
  let failed = 0;
  let stopped = false;
  const worker = async () => {
    while (!stopped && next < items.length) {
      const index = next++;
      const itemFrame = childFrame(frame, step.id, String(index), { [name]: items[index], index });
      try {
        outputs[index] = (await runner.runList(itemFrame, step.steps)).output;
      } catch (error) {
        if (!(error instanceof StepFailure) || ++failed > allowed) {
          stopped = true;
          throw error;
        }
      }
    }
  };
  const lanes = Math.min(step.concurrency ?? DEFAULT_CONCURRENCY, items.length);
  await scope.run(() =>
    settleAll(
      Array.from({ length: lanes }, () => worker),
      () => scope.cancel(),
    ),
  );
  return outputs;
}
