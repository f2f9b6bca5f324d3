/**
 * Approve or reject a waiting approval step (docs/api.md#approvals) through the workflow's `decide` Update.
 * The Update's validator refuses a step that is not waiting (or already decided), which we answer 409.
 */
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { AppError, notFound } from '../errors';
import type { Services } from '../services';
import { callTemporal, isWorkflowNotFound } from '../temporal/errors';
import {
  DECIDE_UPDATE,
  STEP_ERROR_CODES,
  type ApprovalDecision,
  type ApprovalDecisionRequest,
} from '../../core/execution-types';
import { executionInputOf, locateExecution } from './locate';
import { readExecution } from './read';
import type { StepView } from './views';

export interface DecideRequest {
  workspaceId: string;
  executionId: string;
  stepId: string;
  decision: 'approve' | 'reject';
  comment: string | null;
  keyId: string;
}

const notWaiting = (stepId: string) =>
  new AppError(409, 'step_not_waiting', `Step '${stepId}' is not waiting for approval.`);

export async function decideApproval(services: Services, request: DecideRequest): Promise<StepView> {
  const { handle, description, status } = await locateExecution(
    services,
    request.workspaceId,
    request.executionId,
  );
  const input = await executionInputOf(services, request.executionId, description.runId);
  const step = input.workflow.definition.steps.find((s) => s.id === request.stepId);
  if (!step)
    throw notFound('step_not_found', `Execution '${request.executionId}' has no step '${request.stepId}'.`);
  if (step.kind !== 'approval' || status !== 'waiting') throw notWaiting(request.stepId);

  const update: ApprovalDecisionRequest = {
    step: request.stepId,
    decision: request.decision,
    comment: request.comment,
    decided_by: request.keyId,
  };
  try {
    await callTemporal(services.temporal.connection, () =>
      handle.executeUpdate<ApprovalDecision, [ApprovalDecisionRequest]>(DECIDE_UPDATE, { args: [update] }),
    );
  } catch (error) {
    // Refused by the validator (decided already, or another step waits), or the run closed meanwhile.
    const cause = error instanceof WorkflowUpdateFailedError ? error.cause : undefined;
    if (
      (cause instanceof ApplicationFailure && cause.type === STEP_ERROR_CODES.stepNotWaiting) ||
      isWorkflowNotFound(error)
    ) {
      throw notWaiting(request.stepId);
    }
    throw error;
  }
  const execution = await readExecution(services, request.workspaceId, request.executionId);
  const view = execution.steps.find((s) => s.id === request.stepId);
  if (!view) throw new Error(`Step ${request.stepId} missing from the execution after its decision`);
  return view;
}
