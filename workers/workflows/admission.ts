/**
 * A run's admission under its definition's `concurrency` and `throttle` (docs/flow-control.md): its first
 * act asks for a place (`acquire_admission`), then for a start in its throttle's window (`acquire_throttle`),
 * then, for a top-level run, for a place under its workspace's cap (workspace-cap.ts); held back at any, it
 * waits for the gate's signal (`admitted`, `throttle_admitted`, `workspace_admitted`) with its
 * SwitchyardQueued search attribute true (the execution is `queued`); whatever way it ends,
 * `release_admission` gives its places to the next runs (execution.ts calls it in a scope no
 * cancellation interrupts).
 *
 * Folded (foldIntoBatches): a run whose first act is a batch of steps asks its gates in that batch instead
 * (`StepBatch.admission`): the batch passes them in the same order before any step, and the top-level batch
 * that ends the run gives back what it holds. A run admitted at once then pays the statements and no local
 * activity or history event of its own for flow control; held back at a gate, its batch runs no step, the
 * run waits for the gate's signal (`queued` meanwhile) and runs the batch again, asking the gates left. A run
 * that ends another way (a cancel, a failure inside a container) calls `release_admission` itself.
 *
 * The signals' handlers are registered before the first await, so a signal that arrives before the
 * activity's answer (another run's release granted the place meanwhile) is kept. Deterministic code only.
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
import type { BatchAdmission, ExecutionInput, StepBatchResult } from '../../core/execution-types';
import { ADMITTED_SIGNAL, THROTTLE_ADMITTED_SIGNAL } from '../../core/flow-control';
import { durationMs } from '../../core/step-defaults';
import { QUEUED_ATTRIBUTE } from '../../core/search-attributes';
import { listenForWorkspacePlace, takeWorkspacePlace, type WorkspacePlace } from './workspace-cap';

export const admittedSignal = defineSignal(ADMITTED_SIGNAL);
export const throttleAdmittedSignal = defineSignal(THROTTLE_ADMITTED_SIGNAL);

/**
 * The database may be away for a while: both retry without end (a run never starts without its place, and
 * never ends without giving it back), each try bounded.
 */
const { acquire_admission, acquire_throttle, release_admission } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
});

export interface Admission {
  /** The concurrency gate granted the run its place. */
  admitted: boolean;
  /** The throttle gate granted the run its start. */
  throttled: boolean;
  /** The definition has `concurrency` or `throttle`. */
  keys: boolean;
  /** The workspace's cap; absent for a child run, which takes no place. */
  workspace?: WorkspacePlace;
  /** Folded into the run's top-level batches: what they ask with (foldIntoBatches). */
  folded?: { workflowId: string; definition: ExecutionInput['workflow']['definition'] };
  /** SwitchyardQueued is true (a folded run waits at a gate). */
  queued?: boolean;
  /** A batch that ended the run gave back everything it held. */
  released?: boolean;
}

/** Call before the workflow's first await: undefined when the run passes no gate (a child without keys). */
export function listenForAdmission(input: ExecutionInput): Admission | undefined {
  const { concurrency, throttle } = input.workflow.definition;
  const keys = Boolean(concurrency || throttle);
  const workspace = listenForWorkspacePlace(input);
  if (!keys && !workspace) return undefined;
  const admission: Admission = { admitted: false, throttled: false, keys, ...(workspace && { workspace }) };
  if (keys) {
    setHandler(admittedSignal, () => {
      admission.admitted = true;
    });
    setHandler(throttleAdmittedSignal, () => {
      admission.throttled = true;
    });
  }
  return admission;
}

/**
 * Takes the run's place and then its start, waiting in the queue while its concurrency key is full or its
 * throttle's window is (docs/flow-control.md); an evaluation error fails the run. Concurrency first: a run
 * waiting for its throttle holds its place, so the open runs never pass the limit and the starts keep the
 * throttle's rate.
 */
export async function admit(
  admission: Admission,
  input: ExecutionInput,
  /** The run is queued already (a debounced run, queued from its start). */
  queuedAlready = false,
): Promise<ExecutionError | undefined> {
  const { concurrency, throttle, priority } = input.workflow.definition;
  let queued = queuedAlready;
  const wait = async (granted: () => boolean) => {
    if (!queued) upsertSearchAttributes([{ key: QUEUED_ATTRIBUTE, value: true }]);
    queued = true;
    await condition(granted);
  };
  if (concurrency) {
    const result = await acquire_admission({
      workspace_id: input.workspaceId,
      workflow_id: input.workflow.id,
      execution_id: workflowInfo().workflowId,
      limit: concurrency.limit,
      ...(concurrency.key !== undefined && { key: concurrency.key }),
      ...(priority !== undefined && { priority }),
      input: input.input,
    });
    if ('error' in result) return result.error;
    if (result.state === 'queued' && !admission.admitted) await wait(() => admission.admitted);
  }
  if (throttle) {
    const result = await acquire_throttle({
      workspace_id: input.workspaceId,
      workflow_id: input.workflow.id,
      execution_id: workflowInfo().workflowId,
      limit: throttle.limit,
      period_ms: durationMs(throttle.period),
      ...(throttle.key !== undefined && { key: throttle.key }),
      ...(priority !== undefined && { priority }),
      input: input.input,
    });
    if ('error' in result) return result.error;
    if (result.state === 'queued' && !admission.throttled) await wait(() => admission.throttled);
  }
  // Last: a run waiting for its key is queued, and must not hold one of the workspace's places meanwhile.
  if (admission.workspace) {
    const refused = await takeWorkspacePlace(admission.workspace, input, wait);
    if (refused) return refused;
  }
  if (queued) upsertSearchAttributes([{ key: QUEUED_ATTRIBUTE, value: false }]);
  return undefined;
}

/**
 * Whether the run still holds a place to give back. Checked before `release`, so that a run whose last
 * batch gave its places back opens no cancellation scope for nothing: every promise in workflow code costs
 * the SDK a captured stack trace (docs/benchmarks.md#against-the-tight-floor-2026-11-27).
 */
export function holdsPlaces(admission: Admission): boolean {
  return !admission.released && (admission.keys || admission.workspace?.held === true);
}

/** Gives the run's places back (and the free places to the queued runs), in one local activity. */
export async function release(admission: Admission, input: ExecutionInput): Promise<void> {
  const workspace = admission.workspace?.held === true;
  if (!holdsPlaces(admission)) return;
  await release_admission({
    execution_id: workflowInfo().workflowId,
    ...(!admission.keys && { keys: false }),
    ...(workspace && { workspace_id: input.workspaceId }),
  });
}

/** Asks the run's gates in its top-level batches from now on (see above); its first await must be one. */
export function foldIntoBatches(admission: Admission, input: ExecutionInput): void {
  admission.folded = { workflowId: input.workflow.id, definition: input.workflow.definition };
}

/** What a top-level batch carries for a folded run: the gates not passed yet, and what to give back. */
export function batchAdmission(admission: Admission, reachesEnd: boolean): BatchAdmission | undefined {
  if (!admission.folded || admission.released) return undefined;
  const { workflowId, definition } = admission.folded;
  const { concurrency, throttle, priority } = definition;
  const acquire: NonNullable<BatchAdmission['acquire']> = {};
  if (concurrency && !admission.admitted) {
    acquire.concurrency = {
      workflow_id: workflowId,
      limit: concurrency.limit,
      ...(concurrency.key !== undefined && { key: concurrency.key }),
    };
  }
  if (throttle && !admission.throttled) {
    acquire.throttle = {
      workflow_id: workflowId,
      limit: throttle.limit,
      period_ms: durationMs(throttle.period),
      ...(throttle.key !== undefined && { key: throttle.key }),
    };
  }
  const { workspace } = admission;
  if (workspace && !workspace.granted) {
    acquire.workspace = true;
    // Held from the ask on, as takeWorkspacePlace: a cancel before the answer gives back any row it made.
    workspace.held = true;
  }
  const asks = Object.keys(acquire).length > 0;
  if (asks && priority !== undefined) acquire.priority = priority;
  const release = { keys: admission.keys, workspace: workspace?.held === true };
  if (!asks && !release.keys && !release.workspace) return undefined;
  return { ...(asks && { acquire }), release, reaches_end: reachesEnd };
}

/**
 * After a folded run's batch: `again` when a gate queued it (no step ran) and has since let it through (the
 * run waited for the gate's signal, `queued` meanwhile: a promise of `again`); an evaluation error, which
 * fails the run. No promise when it need not wait (see runList in interpreter.ts on promises).
 */
export function settleBatchAdmission(
  admission: Admission,
  result: StepBatchResult,
): 'again' | ExecutionError | undefined | Promise<'again'> {
  if (result.released) admission.released = true;
  const answers = result.admission ?? {};
  const { workspace } = admission;
  for (const gate of ['concurrency', 'throttle', 'workspace'] as const) {
    const answer = answers[gate];
    if (!answer) continue;
    if ('error' in answer) {
      if (gate === 'workspace' && workspace) workspace.held = false;
      return answer.error;
    }
    if (answer.state === 'queued') {
      const passed =
        gate === 'concurrency'
          ? () => admission.admitted
          : gate === 'throttle'
            ? () => admission.throttled
            : () => workspace!.granted;
      if (!passed()) {
        if (!admission.queued) upsertSearchAttributes([{ key: QUEUED_ATTRIBUTE, value: true }]);
        admission.queued = true;
        return condition(passed).then(() => 'again' as const);
      }
      return 'again';
    }
    // Passed: later batches ask the gates left.
    if (gate === 'concurrency') admission.admitted = true;
    else if (gate === 'throttle') admission.throttled = true;
    else if (workspace) {
      workspace.granted = true;
      if (answer.state === 'unlimited') workspace.held = false;
    }
  }
  // Every gate passed: the batch ran its steps (in this workflow task, with this upsert).
  if (admission.queued) {
    upsertSearchAttributes([{ key: QUEUED_ATTRIBUTE, value: false }]);
    admission.queued = false;
  }
  return undefined;
}
