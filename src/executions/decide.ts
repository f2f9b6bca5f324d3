/**
 * Approve or reject a waiting approval step (docs/api.md#approvals) through the workflow's `decide` Update.
 * The Update's validator refuses a step that is not waiting (or already decided), which we answer 409.
 *
 * Only a worker of the build the run is pinned to applies the Update, so the API first checks that one
 * polls (src/executions/worker-presence.ts), and otherwise answers 503 `worker_unavailable` without sending
 * anything. A worker that looked alive may still not take the Update (it died a moment ago, it is
 * overloaded, it fails this run's workflow tasks): Temporal would keep the Update and apply it whenever a
 * worker of the build gets to it, or lose it. So the Update carries `apply_by`, past which the workflow
 * refuses it, and the API answers only once no workflow task can apply it any more: 200 if the decision
 * was applied, else 503 `worker_unavailable`, and then it never applies later
 * (docs/api.md#when-no-worker-serves-a-run).
 */
import {
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  type WorkflowExecutionDescription,
  type WorkflowHandle,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { AppError, notFound, workerUnavailable } from '../../platform/errors';
import { randomBase62 } from '../../platform/ids';
import type { Services } from '../services';
import { callTemporal, isWorkflowNotFound } from '../../platform/temporal/errors';
import { buildWithoutWorker, pinnedBuildOf } from './worker-presence';
import {
  DECIDE_UPDATE,
  DECISION_TOO_LATE,
  RUN_REQUIRED,
  STEP_ERROR_CODES,
  type ApprovalDecision,
  type ApprovalDecisionRequest,
} from '../../core/execution-types';
import { executionInputOf, locateExecution } from './locate';
import { readExecution } from './read';
import type { StepView } from './views';
import { findStep } from '../../core/definitions/nested-steps';

export interface DecideRequest {
  workspaceId: string;
  executionId: string;
  stepId: string;
  /** Which run of a step that waits inside a container (its containers' run keys, "3" or "crm/0"). */
  run?: string;
  decision: 'approve' | 'reject';
  comment: string | null;
  keyId: string;
}

/**
 * How long after it is sent the workflow still takes a decision (its `apply_by`). A worker that polls
 * takes an Update within milliseconds; this leaves room for a busy one.
 */
const APPLY_WINDOW_MS = 4_000;

/**
 * `apply_by` is set on this host's clock and checked on Temporal's (workflow time is when the workflow
 * task started, by the server's clock). Hosts kept by NTP agree within milliseconds; the API waits this
 * much past `apply_by` before it takes a decision as not applied, so that a Temporal clock up to a second
 * behind ours cannot start a task that accepts it after the API answered that it did not.
 */
const CLOCK_SKEW_MARGIN_MS = 1_000;

/** A run's workflow task timeout when its description does not say (Temporal's default). */
const DEFAULT_TASK_TIMEOUT_MS = 10_000;

const notWaiting = (stepId: string) =>
  new AppError(409, 'step_not_waiting', `Step '${stepId}' is not waiting for approval.`);

export async function decideApproval(services: Services, request: DecideRequest): Promise<StepView> {
  const { handle, description, status } = await locateExecution(
    services,
    request.workspaceId,
    request.executionId,
  );
  const input = await executionInputOf(services, request.executionId, description.runId);
  const step = findStep(input.workflow.definition.steps, request.stepId);
  if (!step)
    throw notFound('step_not_found', `Execution '${request.executionId}' has no step '${request.stepId}'.`);
  if (step.kind !== 'approval' || status !== 'waiting') throw notWaiting(request.stepId);

  const absent = await buildWithoutWorker(services, description);
  if (absent) {
    throw workerUnavailable(
      absent.buildId,
      `No worker of build ${absent.buildId} is running to apply this decision to execution ` +
        `'${request.executionId}'; the request did nothing and will not apply later. Start a worker of ` +
        'that build, or move the run onto a running build (docs/operations.md#a-run-whose-build-has-no-worker).',
    );
  }

  const sentAt = Date.now();
  const update: ApprovalDecisionRequest = {
    step: request.stepId,
    decision: request.decision,
    comment: request.comment,
    decided_by: request.keyId,
    apply_by: sentAt + APPLY_WINDOW_MS,
    ...(request.run !== undefined && { run: request.run }),
  };
  let applied: boolean;
  try {
    applied = await applyDecision(services, handle, update);
  } catch (error) {
    const cause = error instanceof WorkflowUpdateFailedError ? error.cause : undefined;
    // Refused by the validator (decided already, or another step waits), or the run closed meanwhile.
    if (
      (cause instanceof ApplicationFailure && cause.type === STEP_ERROR_CODES.stepNotWaiting) ||
      isWorkflowNotFound(error)
    ) {
      throw notWaiting(request.stepId);
    }
    // The step waits in several runs of its container and the request did not say which.
    if (cause instanceof ApplicationFailure && cause.type === RUN_REQUIRED)
      throw new AppError(409, 'step_not_waiting', cause.message);
    // A worker got to it only after its apply_by.
    if (cause instanceof ApplicationFailure && cause.type === DECISION_TOO_LATE) applied = false;
    else throw error;
  }
  if (!applied) throw notTaken(request, description);
  const execution = await readExecution(services, request.workspaceId, request.executionId);
  const view = findStepView(execution.steps, request.stepId, request.run);
  if (!view) throw new Error(`Step ${request.stepId} missing from the execution after its decision`);
  return view;
}

/**
 * The view of a step, nested ones included: inside containers, in the run `run` names (its run keys joined
 * by "/"), or the first run that has the step.
 */
function findStepView(
  steps: StepView[],
  stepId: string,
  run?: string,
  keys: string[] = [],
): StepView | undefined {
  for (const view of steps) {
    if (view.id === stepId && (run === undefined || keys.join('/') === run)) return view;
    const runs = (view as { runs?: { key: string; steps: StepView[] }[] }).runs ?? [];
    for (const nested of runs) {
      const found = findStepView(nested.steps, stepId, run, [...keys, nested.key]);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * Sends the decision and waits for it until Temporal's clock is past its `apply_by`: true once applied,
 * false when it was not and never will be. Throws the validator's refusal as the client reports it.
 */
async function applyDecision(
  services: Services,
  handle: WorkflowHandle,
  update: ApprovalDecisionRequest,
): Promise<boolean> {
  const updateId = `decide-${randomBase62(16)}`;
  try {
    await callTemporal(
      services.temporal.connection,
      () =>
        handle.executeUpdate<ApprovalDecision, [ApprovalDecisionRequest]>(DECIDE_UPDATE, {
          args: [update],
          updateId,
        }),
      update.apply_by! - Date.now() + CLOCK_SKEW_MARGIN_MS,
    );
    return true;
  } catch (error) {
    const timedOut =
      error instanceof WorkflowUpdateRPCTimeoutOrCancelledError ||
      (error instanceof AppError && error.cause instanceof WorkflowUpdateRPCTimeoutOrCancelledError);
    if (timedOut) return appliedAfterAll(services, handle, updateId);
    throw error;
  }
}

/**
 * Whether a decision not applied by its deadline was applied after all. A workflow task that starts from
 * now on refuses it (past apply_by on Temporal's clock too), but one that started before may still be under
 * way: a worker sends the Update's acceptance with the task's completion, which a later step's local
 * activity holds back until it ends (or the task's heartbeat, at 80% of the task timeout). So while a task
 * is in flight, its outcome is awaited, at most until that task would time out (and a task that times out
 * applies nothing); then the history says.
 */
async function appliedAfterAll(
  services: Services,
  handle: WorkflowHandle,
  updateId: string,
): Promise<boolean> {
  const { connection } = services.temporal;
  const description = await callTemporal(connection, () => handle.describe());
  const task = description.raw.pendingWorkflowTask;
  if (task?.state === temporal.api.enums.v1.PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_STARTED) {
    const taskTimeoutMs =
      optionalTsToMs(description.raw.executionConfig?.defaultWorkflowTaskTimeout) ?? DEFAULT_TASK_TIMEOUT_MS;
    const startedAt = optionalTsToMs(task.startedTime) ?? Date.now();
    await connection
      .withDeadline(startedAt + taskTimeoutMs + CLOCK_SKEW_MARGIN_MS, () =>
        handle.getUpdateHandle(updateId).result(),
      )
      .catch(() => undefined); // refused, lost, or the task timed out: the history says which
  }
  const history = await callTemporal(connection, () => handle.fetchHistory());
  return (history.events ?? []).some(
    (event) =>
      event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.meta?.updateId === updateId,
  );
}

/** 503: the decision was sent, but no worker took it in time, and none will. */
function notTaken(request: DecideRequest, description: WorkflowExecutionDescription): AppError {
  const build = pinnedBuildOf(description)?.buildId;
  return workerUnavailable(
    build,
    `No worker${build ? ` of build ${build}` : ''} took this decision on execution '${request.executionId}' ` +
      `within ${(APPLY_WINDOW_MS + CLOCK_SKEW_MARGIN_MS) / 1000} s (stopped, overloaded, or failing this ` +
      "run's workflow tasks); the request did nothing and will not apply later. Check the run's workers " +
      '(docs/operations.md#a-run-whose-build-has-no-worker), then decide again.',
  );
}
