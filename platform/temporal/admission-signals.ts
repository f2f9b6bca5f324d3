/**
 * Telling queued runs their place was granted (docs/flow-control.md): the `admitted` signal to each, after
 * the grant committed (platform/store/admissions.ts). A run that no longer exists (terminated while queued,
 * timed out) cannot take its place: its row is released, which may grant the place to the next run, told
 * in turn. A signal that fails otherwise (Temporal away) leaves `signaled_at` unset, and the API's sweeper
 * (src/flow-control/admission-sweeper.ts) sends it again; a second signal changes nothing for the run.
 */
import type { Client } from '@temporalio/client';
import type { Database } from '../store/db';
import { markSignaled, releaseAdmission } from '../store/admissions';
import { markThrottleSignaled, releaseThrottle } from '../store/throttles';
import { ADMITTED_SIGNAL, THROTTLE_ADMITTED_SIGNAL } from '../../core/flow-control';
import { isWorkflowNotFound, TEMPORAL_CALL_TIMEOUT_MS } from './errors';

/** Signals the granted executions; returns those it could not reach for a reason other than their absence. */
export async function signalAdmitted(
  db: Database,
  client: Client,
  executionIds: string[],
): Promise<string[]> {
  const pending = [...executionIds];
  const failed: string[] = [];
  while (pending.length > 0) {
    const batch = pending.splice(0, 50);
    const told: string[] = [];
    await Promise.all(
      batch.map(async (executionId) => {
        try {
          await client.connection.withDeadline(Date.now() + TEMPORAL_CALL_TIMEOUT_MS, () =>
            client.workflow.getHandle(executionId).signal(ADMITTED_SIGNAL),
          );
          told.push(executionId);
        } catch (error) {
          if (!isWorkflowNotFound(error)) {
            failed.push(executionId);
            return;
          }
          // The run is gone (or closed): its place goes to the next in line.
          pending.push(...(await releaseAdmission(db, executionId)));
        }
      }),
    );
    await markSignaled(db, told);
  }
  return failed;
}

/**
 * Signals the executions granted a start by their throttle (platform/store/throttles.ts): the
 * `throttle_admitted` signal. A run that no longer exists loses its row (its start stays counted). Returns
 * those it could not reach otherwise; the API's throttle sweeper tells them again.
 */
export async function signalThrottleAdmitted(
  db: Database,
  client: Client,
  executionIds: string[],
): Promise<string[]> {
  const failed: string[] = [];
  for (let i = 0; i < executionIds.length; i += 50) {
    const told: string[] = [];
    await Promise.all(
      executionIds.slice(i, i + 50).map(async (executionId) => {
        try {
          await client.connection.withDeadline(Date.now() + TEMPORAL_CALL_TIMEOUT_MS, () =>
            client.workflow.getHandle(executionId).signal(THROTTLE_ADMITTED_SIGNAL),
          );
          told.push(executionId);
        } catch (error) {
          if (isWorkflowNotFound(error)) await releaseThrottle(db, executionId);
          else failed.push(executionId);
        }
      }),
    );
    await markThrottleSignaled(db, told);
  }
  return failed;
}
