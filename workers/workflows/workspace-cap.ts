/**
 * The workspace's cap on open executions (docs/flow-control.md#workspace-cap): a third gate, after the
 * definition's `concurrency` and `throttle` (admission.ts), that every top-level run passes. The
 * `acquire_workspace_place` local activity answers `open`, `queued` (the run waits for the
 * `workspace_admitted` signal, `queued` meanwhile) or `unlimited` (the workspace has no cap: nothing to give
 * back). A child run (a `workflow` step's execution) takes no place: it is part of its parent, which holds
 * one, and a child queued behind its own parent would never start in a full workspace.
 *
 * A run whose first act is a batch of steps asks in that batch instead (admission.ts, folded).
 *
 * Only runs whose input says so (`workspace_cap`: the trigger saw a cap, or a schedule's run) ask; runs
 * recorded before the gate existed have no such input and replay without its commands.
 * Deterministic code only.
 */
import { defineSignal, proxyLocalActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { ExecutionError } from '../../core/error-detail';
import type { ExecutionInput } from '../../core/execution-types';
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
