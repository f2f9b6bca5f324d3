/**
 * Flow control's local activities (docs/flow-control.md): `acquire_admission`, a run's first act when its
 * definition has `concurrency`, `acquire_workspace_place`, a top-level run's act after its definition's
 * gates (the workspace's cap on open executions), and `release_admission`, its last, whatever way it ends.
 * The tables and their locking are platform/store/admissions.ts, throttles.ts and workspace-admissions.ts;
 * the signals to runs granted a place platform/temporal/admission-signals.ts.
 */
import { Context } from '@temporalio/activity';
import { DATABASE_WAIT_MS, withDeadline } from '../../platform/store/deadline';
import type { Client } from '@temporalio/client';
import type { ComputePool } from '../../platform/compute/pool';
import { pausingBudget, workspaceEvaluator } from '../../platform/compute/evaluation';
import type { CachedReads } from '../../platform/store/cached-reads';
import type { Database } from '../../platform/store/db';
import { acquireAdmission, releaseRunAdmission } from '../../platform/store/admissions';
import { acquireThrottle } from '../../platform/store/throttles';
import { acquireWorkspacePlace, releaseWorkspacePlace } from '../../platform/store/workspace-admissions';
import {
  signalAdmitted,
  signalThrottleAdmitted,
  signalWorkspaceAdmitted,
} from '../../platform/temporal/admission-signals';
import { STEP_ERROR_CODES } from '../../core/execution-types';
import { ExpressionError } from '../../core/expressions/errors';
import { DEFAULT_LIMITS, type EvaluationLimits } from '../../core/expressions/limits';
import {
  admissionKeyOf,
  priorityOf,
  type AdmissionRequest,
  type AdmissionResult,
  type ReleaseRequest,
  type ThrottleRequest,
  type WorkspacePlaceRequest,
  type WorkspacePlaceResult,
} from '../../core/flow-control';
import type { ExecutionError } from '../../core/error-detail';
import type { LimitValue } from '../../core/workspace-limits';

/** A key and a priority are small expressions over the input: a tenth of a step's budget of steps. */
const ADMISSION_LIMITS: EvaluationLimits = { ...DEFAULT_LIMITS, maxSteps: 5_000 };

export interface AdmissionDeps {
  db: Database;
  client: Client;
  compute: ComputePool;
  /** The embedded process's admission gate (src/flow-control/admission.ts): the worker took the run up. */
  onStepsBegin?: (executionId: string) => void;
  /** The workspaces' limit overrides, cached until an operator changes one. */
  reads: CachedReads;
  /** Open executions per workspace unless set for it (WORKSPACE_MAX_OPEN_EXECUTIONS); null: unlimited. */
  openExecutionsPerWorkspace: LimitValue;
}

/** What a gate's expressions gave: the key and the priority, or the error that fails the run. */
type Evaluated = { key: string | null; priority: number } | { error: ExecutionError };

export function createAdmissionActivities(deps: AdmissionDeps) {
  /** Evaluates a gate's key expression (at `keyPath` in the definition) and the priority over {input}. */
  async function evaluateGate(
    request: { workspace_id: string; key?: string; priority?: string; input: unknown },
    keyPath: string,
  ): Promise<Evaluated> {
    const evaluate = workspaceEvaluator(deps.compute, request.workspace_id);
    const budget = pausingBudget();
    const context = { input: request.input };
    let key: string | null = null;
    let priority = 0;
    let field = keyPath;
    try {
      if (request.key !== undefined)
        key = admissionKeyOf(await evaluate(request.key, context, ADMISSION_LIMITS, budget));
      field = '/priority';
      if (request.priority !== undefined)
        priority = priorityOf(await evaluate(request.priority, context, ADMISSION_LIMITS, budget));
    } catch (error) {
      if (!(error instanceof ExpressionError)) throw error;
      return {
        error: {
          step: null,
          code: STEP_ERROR_CODES.expression,
          message: `The definition's ${field} expression "${error.expression}" failed: ${error.message}`,
        },
      };
    }
    return { key, priority };
  }

  /** The workspace's cap now: from the cache, so a run of a workspace without one reads nothing. */
  const capOf = (workspaceId: string) =>
    deps.reads.workspaceLimit(workspaceId, 'open_executions', deps.openExecutionsPerWorkspace);

  /** The database part of `acquire_workspace_place`: the cap, the priority and the place. */
  async function placeInWorkspace(
    request: WorkspacePlaceRequest,
    forBatch: boolean,
  ): Promise<WorkspacePlaceResult | { state: 'open' | 'queued'; granted: string[] }> {
    const limit = await capOf(request.workspace_id);
    if (limit === null) return { state: 'unlimited' };
    deps.onStepsBegin?.(request.execution_id);
    let priority = 0;
    if (request.priority !== undefined) {
      const evaluated = await evaluateGate(
        { workspace_id: request.workspace_id, priority: request.priority, input: request.input },
        '/priority',
      );
      if ('error' in evaluated) return evaluated;
      priority = evaluated.priority;
    }
    return acquireWorkspacePlace(
      deps.db,
      { execution_id: request.execution_id, workspace_id: request.workspace_id, priority, limit },
      { forBatch },
    );
  }

  return {
    async acquire_admission(request: AdmissionRequest): Promise<AdmissionResult> {
      // A queued run begins no step for a while: it must not hold a place of the gate meanwhile.
      deps.onStepsBegin?.(request.execution_id);
      const evaluated = await evaluateGate(request, '/concurrency/key');
      if ('error' in evaluated) return evaluated;
      const { key, priority } = evaluated;
      const { state, granted } = await acquireAdmission(deps.db, {
        execution_id: request.execution_id,
        workspace_id: request.workspace_id,
        workflow_id: request.workflow_id,
        key,
        limit: request.limit,
        priority,
      });
      if (granted.length > 0) await signalAdmitted(deps.db, deps.client, granted);
      return { state, key, priority };
    },

    /** The throttle's gate, after the concurrency's: `open` once the run's start is granted in its window. */
    async acquire_throttle(request: ThrottleRequest): Promise<AdmissionResult> {
      deps.onStepsBegin?.(request.execution_id);
      const evaluated = await evaluateGate(request, '/throttle/key');
      if ('error' in evaluated) return evaluated;
      const { key, priority } = evaluated;
      const { state, granted } = await acquireThrottle(deps.db, {
        execution_id: request.execution_id,
        workspace_id: request.workspace_id,
        workflow_id: request.workflow_id,
        key,
        limit: request.limit,
        period_ms: request.period_ms,
        priority,
      });
      if (granted.length > 0) await signalThrottleAdmitted(deps.db, deps.client, granted);
      return { state: state === 'granted' ? 'open' : 'queued', key, priority };
    },

    /**
     * The workspace's cap (docs/flow-control.md#workspace-cap), after the definition's gates: `open` once the
     * run holds one of the workspace's places; `unlimited` (no statement at all) when it has no cap.
     *
     * Asked by a batch of steps (`forBatch`), the place may be held in memory on the embedded database, and
     * the batch then gives it back or writes it before it completes (platform/store/batch-places.ts).
     *
     * The cap must not make the database a condition of every run: when it does not answer within
     * DATABASE_WAIT_MS, the run goes on as `open` without a place (uncounted, so the cap may be passed while
     * the database is away), as its steps would without the cap. A place the late statement still takes is
     * given back by the run's release, or by the sweeper's check once the run has closed.
     */
    async acquire_workspace_place(
      request: WorkspacePlaceRequest,
      /** Not from workflow code: `run_steps` asks for its batch (keepBatchPlace says what it owes then). */
      options: { forBatch?: boolean } = {},
    ): Promise<WorkspacePlaceResult> {
      let placed: Awaited<ReturnType<typeof placeInWorkspace>>;
      try {
        placed = await withDeadline(placeInWorkspace(request, options.forBatch ?? false), DATABASE_WAIT_MS);
      } catch (error) {
        Context.current().log.warn(
          'The database did not answer: the run goes on without a place under its workspace cap',
          { executionId: request.execution_id, error: String(error) },
        );
        return { state: 'open' };
      }
      if (!('granted' in placed)) return placed;
      if (placed.granted.length > 0)
        await signalWorkspaceAdmitted(deps.db, deps.client, placed.granted, capOf);
      return { state: placed.state };
    },

    async release_admission(request: ReleaseRequest): Promise<void> {
      if (request.keys !== false) {
        // The throttle's row and the concurrency place, one statement unless runs queue on the key.
        const granted = await releaseRunAdmission(deps.db, request.execution_id);
        // What could not be told now, the API's sweeper tells (its row keeps signaled_at unset).
        if (granted.length > 0) await signalAdmitted(deps.db, deps.client, granted);
      }
      if (request.workspace_id !== undefined) {
        const workspaceId = request.workspace_id;
        // As the acquire: a run's end never waits for the database for its workspace place; a place not
        // given back now is released by the sweeper's check once the run has closed.
        const release = async () =>
          releaseWorkspacePlace(deps.db, {
            execution_id: request.execution_id,
            workspace_id: workspaceId,
            limit: await capOf(workspaceId),
          });
        const granted = await withDeadline(release(), DATABASE_WAIT_MS).catch((error: unknown) => {
          Context.current().log.warn(
            'The database did not answer: the workspace place is left to the sweeper',
            {
              executionId: request.execution_id,
              error: String(error),
            },
          );
          return [];
        });
        if (granted.length > 0) await signalWorkspaceAdmitted(deps.db, deps.client, granted, capOf);
      }
    },
  };
}

export type AdmissionActivities = ReturnType<typeof createAdmissionActivities>;
