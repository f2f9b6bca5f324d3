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
import {
  markWorkspaceSignaled,
  releaseWorkspacePlace,
  workspaceOfAdmission,
} from '../store/workspace-admissions';
import {
  ADMITTED_SIGNAL,
  THROTTLE_ADMITTED_SIGNAL,
  WORKSPACE_ADMITTED_SIGNAL,
} from '../../core/flow-control';
import type { LimitValue } from '../../core/workspace-limits';
import { isWorkflowNotFound, TEMPORAL_CALL_TIMEOUT_MS } from './errors';

/** What telling the runs of one gate needs: its signal, how to record them told, and what a gone run frees. */
interface Gate {
  signal: string;
  markSignaled(db: Database, executionIds: string[]): Promise<void>;
  /** The run is gone: its row goes; returns the executions that freed for (told in turn). */
  release(db: Database, executionId: string): Promise<string[]>;
}

/** Signals the granted executions, 50 at once; returns those it could not reach but for their absence. */
async function signalGranted(db: Database, client: Client, gate: Gate, executionIds: string[]) {
  const pending = [...executionIds];
  const failed: string[] = [];
  while (pending.length > 0) {
    const batch = pending.splice(0, 50);
    const told: string[] = [];
    await Promise.all(
      batch.map(async (executionId) => {
        try {
          await client.connection.withDeadline(Date.now() + TEMPORAL_CALL_TIMEOUT_MS, () =>
            client.workflow.getHandle(executionId).signal(gate.signal),
          );
          told.push(executionId);
        } catch (error) {
          if (!isWorkflowNotFound(error)) {
            failed.push(executionId);
            return;
          }
          pending.push(...(await gate.release(db, executionId)));
        }
      }),
    );
    await gate.markSignaled(db, told);
  }
  return failed;
}

const CONCURRENCY_GATE: Gate = {
  signal: ADMITTED_SIGNAL,
  markSignaled,
  // The run is gone (or closed): its place goes to the next in line.
  release: (db, executionId) => releaseAdmission(db, executionId),
};

const THROTTLE_GATE: Gate = {
  signal: THROTTLE_ADMITTED_SIGNAL,
  markSignaled: markThrottleSignaled,
  // The run is gone: its row goes, its start stays counted in its window (nothing is freed).
  release: async (db, executionId) => {
    await releaseThrottle(db, executionId);
    return [];
  },
};

/** Signals the executions granted a place by their concurrency (platform/store/admissions.ts). */
export function signalAdmitted(db: Database, client: Client, executionIds: string[]): Promise<string[]> {
  return signalGranted(db, client, CONCURRENCY_GATE, executionIds);
}

/**
 * Signals the executions granted a start by their throttle (platform/store/throttles.ts): the
 * `throttle_admitted` signal; the API's throttle sweeper tells again those it could not reach.
 */
export function signalThrottleAdmitted(
  db: Database,
  client: Client,
  executionIds: string[],
): Promise<string[]> {
  return signalGranted(db, client, THROTTLE_GATE, executionIds);
}

/** A workspace's `open_executions` limit in effect (its override, else the default). */
export type WorkspaceCapOf = (workspaceId: string) => Promise<LimitValue>;

/**
 * Signals the executions granted a place under their workspace's cap
 * (platform/store/workspace-admissions.ts): the `workspace_admitted` signal. A run that no longer exists
 * gives its place to the next one, under `capOf` its workspace's limit.
 */
export function signalWorkspaceAdmitted(
  db: Database,
  client: Client,
  executionIds: string[],
  capOf: WorkspaceCapOf,
): Promise<string[]> {
  return signalGranted(db, client, workspaceGate(capOf), executionIds);
}

function workspaceGate(capOf: WorkspaceCapOf): Gate {
  return {
    signal: WORKSPACE_ADMITTED_SIGNAL,
    markSignaled: markWorkspaceSignaled,
    release: async (db, executionId) => {
      const workspaceId = await workspaceOfAdmission(db, executionId);
      if (workspaceId === undefined) return [];
      const limit = await capOf(workspaceId);
      return releaseWorkspacePlace(db, { execution_id: executionId, workspace_id: workspaceId, limit });
    },
  };
}
