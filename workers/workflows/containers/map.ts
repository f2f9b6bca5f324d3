/**
 * `map` (docs/definitions.md#composition): the step's steps run once per item, with the item (`as`, default
 * `item`) and its `index` in the context, at most `concurrency` items at once. A failed item is tolerated
 * up to `tolerated_failures` (a count, or a percentage of the items); past it the step fails with that
 * item's error: pending items never start, and those in flight stop at their next step (frame.ts Halt).
 * Output: each item's last step output, in item order (null for a tolerated failure).
 *
 * Up to MAP_INLINE_ITEMS items run in this workflow's history. A larger map runs in chunks of CHUNK_ITEMS items,
 * each a child workflow (map-chunk.ts) named after the execution, the step and the chunk, so that no
 * history grows with the item count: the map's own history holds one child per chunk. `concurrency`
 * chunks run at once, each running its items one after another, so that at most `concurrency` items run
 * at once either way. Canceling the execution cancels the chunks (parent close policy REQUEST_CANCEL). When
 * the step fails (or a sibling halts it) no further item or chunk starts; what runs finishes (frame.ts Halt).
 *
 * A retry keeps the items that succeeded in the failed run (frame.ts keptRunsOf) while the items give them
 * unchanged at their index, and runs the others again; a chunk of a large map does the same with its
 * previous run's result (map-chunk.ts).
 */
import { ParentClosePolicy, startChild } from '@temporalio/workflow';
import type { MapStep } from '../../../core/definitions/schema';
import { toleratedFailures } from '../../../core/container-outputs';
import { workspacePriority } from '../../../core/fairness';
import { contextFor } from '../batches';
import {
  childFrame,
  ExecutionStop,
  frameContext,
  Halt,
  keptRunsOf,
  StepFailure,
  type Frame,
  type Runner,
} from '../frame';
import {
  MAP_CHUNK_WORKFLOW_TYPE,
  MAP_INLINE_ITEMS,
  type MapChunkInput,
  type MapChunkResult,
} from '../../../core/execution-types';
import { sameJson } from '../../../core/user-json';
import { settleAll } from './settle';

const DEFAULT_CONCURRENCY = 10;
/** Items per chunk of a large map. */
export const CHUNK_ITEMS = MAP_INLINE_ITEMS;

export async function runMap(
  runner: Runner,
  frame: Frame,
  step: MapStep,
  items: unknown[],
): Promise<unknown[]> {
  if (items.length > MAP_INLINE_ITEMS) return runMapInChunks(runner, frame, step, items);
  const name = step.as ?? 'item';
  const allowed = toleratedFailures(step.tolerated_failures, items.length);
  const outputs: unknown[] = new Array<unknown>(items.length).fill(null);
  const halt = new Halt(frame.halt);
  const kept = new Map(keptRunsOf(runner.run, frame, step.id)?.runs.map((run) => [run.key, run]));
  let next = 0;
  let failed = 0;
  let stopped = false;
  const worker = async () => {
    while (!stopped && !halt.stopped && next < items.length) {
      const index = next++;
      const keptItem = kept.get(String(index));
      if (keptItem && sameJson(keptItem.item, items[index])) {
        outputs[index] = keptItem.output;
        continue;
      }
      const itemFrame = childFrame(frame, step.id, String(index), { [name]: items[index], index }, halt);
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
  await settleAll(
    Array.from({ length: lanes }, () => worker),
    () => halt.stop(),
  );
  return outputs;
}

/** A large map: its items in chunks, each a child workflow, `concurrency` chunks at once. */
async function runMapInChunks(
  runner: Runner,
  frame: Frame,
  step: MapStep,
  items: unknown[],
): Promise<unknown[]> {
  const { run } = runner;
  const allowed = toleratedFailures(step.tolerated_failures, items.length);
  const chunks = Math.ceil(items.length / CHUNK_ITEMS);
  const outputs: unknown[] = new Array<unknown>(items.length).fill(null);
  // What the steps of every item can read besides the item: the execution, and the steps before the map.
  const context = contextFor(frameContext(run, frame), step.steps);
  const shared: Omit<MapChunkInput, 'items' | 'first'> = {
    workspaceId: run.workspaceId,
    workflow: run.workflow,
    context: { input: context.input, execution: context.execution },
    frame: { path: frame.path, scope: frame.scope, steps: context.steps },
    stepId: step.id,
    steps: step.steps,
    as: step.as ?? 'item',
    allowed,
    depth: run.depth,
  };
  const previousRuns = keptRunsOf(run, frame, step.id)?.chunks;
  const failures: MapChunkResult['failures'] = [];
  let next = 0;
  let stopped = false;
  const lane = async () => {
    while (!stopped && !frame.halt.stopped && next < chunks) {
      const chunk = next++;
      const first = chunk * CHUNK_ITEMS;
      const previous = previousRuns && Object.hasOwn(previousRuns, first) ? previousRuns[first] : undefined;
      const result = await runChunk(run.context.execution.id, frame, step, chunk, chunks, {
        ...shared,
        items: items.slice(first, first + CHUNK_ITEMS),
        first,
        ...(previous !== undefined && { previous_run_id: previous }),
      });
      result.outputs.forEach((output, offset) => (outputs[first + offset] = output));
      if (result.stopped !== undefined) {
        stopped = true;
        throw new ExecutionStop(result.stopped);
      }
      failures.push(...result.failures);
      if (failures.length > allowed) {
        stopped = true;
        // The failure past the tolerated count: the lowest index among those the chunks reported.
        const worst = [...failures].sort((a, b) => a.index - b.index)[allowed]!;
        throw new StepFailure(worst.error);
      }
    }
  };
  const lanes = Math.min(step.concurrency ?? DEFAULT_CONCURRENCY, chunks);
  // Past the tolerated failures no further chunk starts, and the chunks running are not canceled (as inline
  // items are halted, not canceled): each one stops by itself past the failures the map tolerates.
  await settleAll(
    Array.from({ length: lanes }, () => lane),
    () => undefined,
  );
  return outputs;
}

async function runChunk(
  executionId: string,
  frame: Frame,
  step: MapStep,
  chunk: number,
  chunks: number,
  input: MapChunkInput,
): Promise<MapChunkResult> {
  const where = [...frame.path, step.id].join('/');
  const handle = await startChild(MAP_CHUNK_WORKFLOW_TYPE, {
    workflowId: `${executionId}/${where}/chunk-${chunk}`,
    args: [input],
    parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
    priority: workspacePriority(input.workspaceId),
    staticSummary: `Items ${input.first}–${input.first + input.items.length - 1} of map "${step.id}" (chunk ${chunk + 1} of ${chunks}) of ${executionId}`,
  });
  return (await handle.result()) as MapChunkResult;
}
