/**
 * One chunk of a large map (docs/definitions.md#composition): a child workflow of the execution that runs
 * the map's steps for a slice of its items, so that no history grows with the item count (a map of 10,000
 * items is 100 chunks of 100; the parent's history holds one child per chunk, each chunk's history its
 * 100 items). Items run one after another here; the map runs chunks side by side (containers/map.ts).
 *
 * A failed item does not stop the chunk unless the chunk alone has more failures than the map tolerates:
 * the map adds up the chunks' failures and decides. Deterministic code only.
 *
 * In a retry the chunk reads its result in the failed run (`previous_run_id`, through a local activity) and
 * keeps the items that succeeded there: only the others run again.
 */
import { proxyLocalActivities, setWorkflowOptions, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { RunPath } from '../../core/execution-types';
import { listenForEventWakes } from './event-wait';
import { createRunner } from './interpreter';
import { ExecutionStop, Halt, StepFailure, type Frame, type Run } from './frame';
import { type MapChunkInput, type MapChunkResult } from '../../core/execution-types';

const { previous_chunk_result } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '1m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
});

setWorkflowOptions({ versioningBehavior: 'PINNED' }, map_chunk);
export async function map_chunk(input: MapChunkInput): Promise<MapChunkResult> {
  const run: Run = {
    workspaceId: input.workspaceId,
    workflow: input.workflow,
    context: input.context,
    waiting: new Map(),
    sleeping: 0,
    eventWakes: new Map(),
    depth: input.depth,
    taskBytes: { task: 0, bytes: 0 },
    // Execution events belong to the execution, not to its chunks.
    emit: async () => {},
  };
  listenForEventWakes(run);
  const runner = createRunner(run);
  const result: MapChunkResult = { outputs: [], failures: [], ran: 0 };
  const previous = input.previous_run_id
    ? await previous_chunk_result({ workflow_id: workflowInfo().workflowId, run_id: input.previous_run_id })
    : null;
  const failedBefore = new Set(previous?.failures.map((failure) => failure.index));
  for (const [offset, item] of input.items.entries()) {
    const index = input.first + offset;
    if (previous && offset < previous.ran && !failedBefore.has(index)) {
      result.ran++;
      result.outputs.push(previous.outputs[offset] ?? null);
      continue;
    }
    const path: RunPath = [...input.frame.path, input.stepId, String(index)];
    const frame: Frame = {
      path,
      scope: { ...input.frame.scope, [input.as]: item, index },
      steps: { ...input.frame.steps },
      halt: new Halt(),
    };
    result.ran++;
    try {
      result.outputs.push((await runner.runList(frame, input.steps)).output);
    } catch (error) {
      if (error instanceof ExecutionStop) return { ...result, stopped: error.stepId };
      if (!(error instanceof StepFailure)) throw error;
      result.outputs.push(null);
      result.failures.push({ index, error: error.error });
      if (result.failures.length > input.allowed) break;
    }
  }
  return result;
}
