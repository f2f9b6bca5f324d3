/**
 * What a retry keeps of the container it starts from (docs/api.md#retry-from-the-failed-step): a parallel
 * step's branches and a map's items that succeeded in the failed run. The retry's workflow code uses their
 * outputs instead of running them again (workers/workflows/containers/), and reads of the retry show them as
 * the failed run's reads did (step-lists.ts). Other containers, and a step that failed at the top level, run
 * again whole.
 */
import type { KeptRun, KeptRuns } from '../../core/execution-types';
import { objectFromEntries } from '../../core/user-json';
import type { ExecutionRead } from './history-mapper';
import { lastOutput } from './step-lists';
import { stepKey } from './step-views';

/**
 * The runs of top-level container `stepId` that the retry of `failed` keeps; undefined when it keeps none.
 * With a corrected input, a large map keeps nothing: its chunks cannot tell which items the new input
 * changed (an inline map compares each kept item with the new one: containers/map.ts).
 */
export function keptRunsOf(
  failed: ExecutionRead,
  stepId: string,
  inputCorrected: boolean,
): KeptRuns | undefined {
  const step = failed.input.workflow.definition.steps.find((candidate) => candidate.id === stepId);
  if (step?.kind !== 'parallel' && step?.kind !== 'map') return undefined;
  const key = stepKey([], stepId);
  const chunks = failed.sources.chunks.get(key);
  if (chunks) {
    if (inputCorrected) return undefined;
    const completed = chunks.filter((chunk) => chunk.state === 'success' && chunk.runId);
    if (completed.length === 0) return undefined;
    return {
      step: stepId,
      runs: [],
      chunks: objectFromEntries(completed.map((chunk) => [String(chunk.first), chunk.runId!])),
    };
  }
  const items = failed.sources.controls.get(key)?.enter?.items;
  const view = failed.view.steps.find((candidate) => candidate.id === stepId);
  const runs: KeptRun[] = (view?.runs ?? [])
    .filter((run) => run.status === 'success')
    .map((run) => ({
      key: run.key,
      output: lastOutput(run),
      ...(step.kind === 'map' && { item: items?.[Number(run.key)] ?? null }),
      view: run,
    }));
  return runs.length > 0 ? { step: stepId, runs } : undefined;
}
