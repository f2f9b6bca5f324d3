/**
 * A run's admission under its definition's `concurrency` (docs/flow-control.md): its first act asks for a
 * place (`acquire_admission`); queued, it waits for the `admitted` signal with its SwitchyardQueued search
 * attribute true (the execution is `queued`); whatever way it ends, `release_admission` gives its place to
 * the next run of its key (execution.ts calls it in a scope no cancellation interrupts).
 *
 * The signal's handler is registered before the first await, so a signal that arrives before the
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
import { ADMITTED_SIGNAL } from '../../core/flow-control';
import { QUEUED_ATTRIBUTE } from '../../core/search-attributes';

export const admittedSignal = defineSignal(ADMITTED_SIGNAL);

/**
 * The database may be away for a while: both retry without end (a run never starts without its place, and
 * never ends without giving it back), each try bounded.
 */
const { acquire_admission, release_admission } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
});

export interface Admission {
  admitted: boolean;
}

/** Call before the workflow's first await when the definition has `concurrency`. */
export function listenForAdmission(): Admission {
  const admission: Admission = { admitted: false };
  setHandler(admittedSignal, () => {
    admission.admitted = true;
  });
  return admission;
}

/** Takes the run's place, waiting in the queue when the key is full; an evaluation error fails the run. */
export async function admit(
  admission: Admission,
  input: ExecutionInput,
): Promise<ExecutionError | undefined> {
  const concurrency = input.workflow.definition.concurrency!;
  const result = await acquire_admission({
    workspace_id: input.workspaceId,
    workflow_id: input.workflow.id,
    execution_id: workflowInfo().workflowId,
    limit: concurrency.limit,
    ...(concurrency.key !== undefined && { key: concurrency.key }),
    ...(input.workflow.definition.priority !== undefined && { priority: input.workflow.definition.priority }),
    input: input.input,
  });
  if ('error' in result) return result.error;
  if (result.state === 'open' || admission.admitted) return undefined;
  upsertSearchAttributes([{ key: QUEUED_ATTRIBUTE, value: true }]);
  await condition(() => admission.admitted);
  upsertSearchAttributes([{ key: QUEUED_ATTRIBUTE, value: false }]);
  return undefined;
}

/** Gives the run's place back (and the key's free places to its queued runs). */
export async function release(): Promise<void> {
  await release_admission({ execution_id: workflowInfo().workflowId });
}
