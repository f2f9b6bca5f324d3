/**
 * A run's admission under its definition's `concurrency` and `throttle` (docs/flow-control.md): its first
 * act asks for a place (`acquire_admission`), then for a start in its throttle's window (`acquire_throttle`),
 * then, for a top-level run, for a place under its workspace's cap (workspace-cap.ts); held back at any, it
 * waits for the gate's signal (`admitted`, `throttle_admitted`, `workspace_admitted`) with its
 * SwitchyardQueued search attribute true (the execution is `queued`); whatever way it ends,
 * `release_admission` gives its places to the next runs (execution.ts calls it in a scope no
 * cancellation interrupts).
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
import type { ExecutionInput } from '../../core/execution-types';
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

/** Gives the run's places back (and the free places to the queued runs), in one local activity. */
export async function release(admission: Admission, input: ExecutionInput): Promise<void> {
  const workspace = admission.workspace?.held === true;
  if (!admission.keys && !workspace) return;
  await release_admission({
    execution_id: workflowInfo().workflowId,
    ...(!admission.keys && { keys: false }),
    ...(workspace && { workspace_id: input.workspaceId }),
  });
}
