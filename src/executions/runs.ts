/**
 * The runs of one container step (docs/api.md#steps-that-hold-steps): `GET /v1/executions/{id}/steps/{step_id}/runs`
 * pages through all of them, where the execution's read shows the first few. Read from the history like the
 * execution itself (history-mapper.ts), never from a store of their own.
 *
 * A container inside another one's runs (a loop in each map item, say) has runs in each of them: the list
 * holds them all, those of the first outer run first (each run's `path` says where it is). Its order, which
 * cursors follow, is the place of every run along that path: a branch's place among the branches, an
 * item's index, an iteration's number.
 */
import { childStepLists, findStep } from '../../core/definitions/nested-steps';
import { notFound } from '../../platform/errors';
import { keysetPage } from '../http/cursor';
import type { Services } from '../services';
import {
  executionInputOf,
  mapExecutionWithAllRuns,
  withFirstRuns,
  type HistorySource,
} from './history-mapper';
import { readExecutionHistory } from './read';
import { showChunkItemSteps } from './chunk-steps';
import type { RunStatus, RunView, StepView } from './views';

export interface StepRunsQuery {
  status?: RunStatus | undefined;
  limit: number;
  cursor?: string | undefined;
}

/** A run and its place in the list: its place in each container run around it, then in its own container. */
export interface PlacedRun {
  run: RunView;
  position: number[];
}

export async function listStepRuns(
  services: Services,
  request: { workspaceId: string; executionId: string; stepId: string },
  query: StepRunsQuery,
): Promise<{ data: RunView[]; next_cursor: string | null }> {
  const { workspaceId, executionId, stepId } = request;
  const runs = stepRuns(executionId, stepId, await readExecutionHistory(services, workspaceId, executionId));
  const listed = query.status ? runs.filter(({ run }) => run.status === query.status) : runs;
  return keysetPage({
    query,
    scope: { list: 'step-runs', workspaceId, executionId, stepId, status: query.status ?? null },
    isPosition,
    fetch: async (limit, after) => {
      const page = (
        after ? listed.filter(({ position }) => comparePositions(position, after) > 0) : listed
      ).slice(0, limit);
      // Items of a large map: their steps are in their chunks' histories.
      await showChunkItemSteps(
        services,
        page.map(({ run }) => run),
      );
      return page;
    },
    positionOf: ({ position }) => position,
    toView: ({ run }) => ({ ...run, steps: run.steps.map(withFirstRuns) }),
  });
}

/** Every run of container step `stepId`, in order; 404 for a step the definition lacks or that holds none. */
export function stepRuns(executionId: string, stepId: string, source: HistorySource): PlacedRun[] {
  const { definition } = executionInputOf(executionId, source).workflow;
  const step = findStep(definition.steps, stepId);
  if (!step) throw notFound('step_not_found', `Execution '${executionId}' has no step '${stepId}'.`);
  if (childStepLists(step).length === 0)
    throw notFound(
      'step_not_found',
      `Step '${stepId}' of execution '${executionId}' is a ${step.kind} step: only parallel, map, switch and loop steps have runs.`,
    );
  const placed: PlacedRun[] = [];
  collectRuns(mapExecutionWithAllRuns(executionId, source).steps, [], stepId, placed);
  return placed;
}

function collectRuns(steps: StepView[], position: number[], stepId: string, into: PlacedRun[]): void {
  for (const step of steps) {
    step.runs?.forEach((run, i) => {
      if (step.id === stepId) into.push({ run, position: [...position, i] });
      else collectRuns(run.steps, [...position, i], stepId, into);
    });
  }
}

function isPosition(value: unknown): value is number[] {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((n) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0)
  );
}

/** Positions in list order: place by place, from the outermost container. */
function comparePositions(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const diff = (a[i] ?? -1) - (b[i] ?? -1);
    if (diff !== 0) return diff;
  }
  return 0;
}
