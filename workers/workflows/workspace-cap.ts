/**
 * The workspace's cap on open executions (docs/flow-control.md#workspace-cap): a third gate, after the
 * definition's `concurrency` and `throttle` (admission.ts), that every top-level run passes. The
 * `acquire_workspace_place` local activity answers `open`, `queued` (the run waits for the
 * `workspace_admitted` signal, `queued` meanwhile) or `unlimited` (the workspace has no cap: nothing to give
 * back). A child run (a `workflow` step's execution) takes no place: it is part of its parent, which holds
 * one, and a child queued behind its own parent would never start in a full workspace.
 *
 * A run whose definition has no gate of its own and whose first act is a batch of steps asks in that batch
 * instead (`StepBatch.workspace_place`, folded): the batch takes the place before any step, and the top-level
 * batch that ends the run gives it back. A run under its cap then pays two statements and no local activity
 * or history event of its own; only a run that queues, or ends some other way (a cancel, a container's
 * failure), calls `release_admission` itself.
 *
 * Only runs whose input says so (`workspace_cap`: the trigger saw a cap, or a schedule's run) ask; runs
 * recorded before the gate existed have no such input and replay without its commands.
 * Deterministic code only.
 */
import {
  condition,
  defineSignal,
  proxyLocalActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { ExecutionError } from '../../core/error-detail';
import type { ExecutionInput, StepBatch, StepBatchResult } from '../../core/execution-types';
import { QUEUED_ATTRIBUTE } from '../../core/search-attributes';
import { WORKSPACE_ADMITTED_SIGNAL } from '../../core/flow-control';

export const workspaceAdmittedSignal = defineSignal(WORKSPACE_ADMITTED_SIGNAL);

/** As the definition's gates (admission.ts): retried without end, each try bounded. */
const { acquire_workspace_place } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
});

export interface WorkspacePlace {
  /** The `workspace_admitted` signal came. */
  granted: boolean;
  /** The run may hold a row to give back: it asked, and the answer was not `unlimited` (or never came). */
  held: boolean;
  /** Folded: the run's first batch is to ask for the place, with this. */
  ask?: NonNullable<StepBatch['workspace_place']>['acquire'];
}

/**
 * Call before the workflow's first await: undefined for a run that takes no place (a child run, or one whose
 * input does not ask: its workspace had no cap when it was triggered).
 */
export function listenForWorkspacePlace(input: ExecutionInput): WorkspacePlace | undefined {
  if (input.parent || !input.workspace_cap) return undefined;
  const place: WorkspacePlace = { granted: false, held: false };
  setHandler(workspaceAdmittedSignal, () => {
    place.granted = true;
  });
  return place;
}

/**
 * Takes the run's place in its workspace, waiting (through `wait`, which marks the run queued) while the
 * workspace is at its cap; an evaluation error of the priority fails the run.
 */
export async function takeWorkspacePlace(
  place: WorkspacePlace,
  input: ExecutionInput,
  wait: (granted: () => boolean) => Promise<void>,
): Promise<ExecutionError | undefined> {
  const { priority } = input.workflow.definition;
  // Held from the ask on: a run canceled before the answer gives back whatever row the answer would name.
  place.held = true;
  const result = await acquire_workspace_place({
    workspace_id: input.workspaceId,
    execution_id: workflowInfo().workflowId,
    ...(priority !== undefined && { priority, input: input.input }),
  });
  if ('error' in result) {
    place.held = false;
    return result.error;
  }
  if (result.state === 'unlimited') place.held = false;
  if (result.state === 'queued' && !place.granted) await wait(() => place.granted);
  return undefined;
}

/** Folds the run's ask into its first batch (see above); the run's first await must be that batch. */
export function foldIntoFirstBatch(place: WorkspacePlace, input: ExecutionInput): void {
  const { priority } = input.workflow.definition;
  place.ask = priority !== undefined ? { priority, input: input.input } : {};
}

/** What a top-level batch carries for the run's place: the ask (the first batch), the release while held. */
export function batchPlace(
  place: WorkspacePlace | undefined,
  reachesEnd: boolean,
): StepBatch['workspace_place'] {
  if (!place) return undefined;
  if (place.ask) {
    // Held from the ask on, as takeWorkspacePlace: a cancel before the answer gives back any row it made.
    place.held = true;
    return { acquire: place.ask, release: true, reaches_end: reachesEnd };
  }
  return place.held ? { release: true, reaches_end: reachesEnd } : undefined;
}

/**
 * After a batch that carried the place: `again` when the batch was queued (no step ran) and the place has
 * since been granted (the run waited for it, `queued` meanwhile); the priority's error, which fails the run.
 */
export async function settleBatchPlace(
  place: WorkspacePlace,
  result: StepBatchResult,
): Promise<'again' | ExecutionError | undefined> {
  if (result.released) place.held = false;
  const answer = result.place;
  if (!answer) return undefined;
  delete place.ask;
  if ('error' in answer) {
    place.held = false;
    return answer.error;
  }
  if (answer.state === 'unlimited') place.held = false;
  if (answer.state !== 'queued') return undefined;
  if (!place.granted) {
    upsertSearchAttributes([{ key: QUEUED_ATTRIBUTE, value: true }]);
    await condition(() => place.granted);
    upsertSearchAttributes([{ key: QUEUED_ATTRIBUTE, value: false }]);
  }
  return 'again';
}
