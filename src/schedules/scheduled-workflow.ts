/**
 * The schedule of a workflow (docs/definitions.md#schedules): the workflow's latest version must have a
 * schedule trigger, and its Temporal Schedule must exist. Every schedule control starts here, so an unknown
 * workflow (or one of another workspace) is 404 workflow_not_found and one without a schedule trigger 404
 * schedule_not_found, the same for every endpoint.
 */
import { status as grpcStatus } from '@grpc/grpc-js';
import { ScheduleNotFoundError, type ScheduleHandle } from '@temporalio/client';
import { AppError, notFound } from '../../platform/errors';
import { getWorkflowVersion, type WorkflowVersionRecord } from '../../platform/store/workflows';
import { grpcCodeOf } from '../../platform/temporal/errors';
import type { Trigger } from '../../core/definitions/schema';
import type { Services } from '../services';
import { scheduleIdOf } from '../definitions/schedule-sync';

export type ScheduleTrigger = Extract<Trigger, { type: 'schedule' }>;

export interface ScheduledWorkflow {
  workspaceId: string;
  /** The latest version, whose trigger the schedule follows. */
  record: WorkflowVersionRecord;
  trigger: ScheduleTrigger;
  handle: ScheduleHandle;
}

export const scheduleNotFound = (workflowId: string, why: string): AppError =>
  new AppError(404, 'schedule_not_found', `Workflow '${workflowId}' has no schedule: ${why}`);

export async function scheduledWorkflow(
  services: Services,
  workspaceId: string,
  workflowId: string,
): Promise<ScheduledWorkflow> {
  const record = await getWorkflowVersion(services.db, workspaceId, workflowId);
  if (!record) throw notFound('workflow_not_found', `No workflow '${workflowId}' in this workspace.`);
  const trigger = record.definition.trigger;
  if (trigger?.type !== 'schedule') {
    throw scheduleNotFound(
      workflowId,
      `its latest version (${record.version}) has a trigger of type '${trigger?.type ?? 'api'}'; save a version with a schedule trigger first.`,
    );
  }
  const handle = services.temporal.client.schedule.getHandle(scheduleIdOf(workspaceId, workflowId));
  return { workspaceId, record, trigger, handle };
}

/**
 * A workflow with a schedule trigger whose Temporal Schedule is missing (deleted by hand, or a save whose
 * process died before it wrote the schedule): said plainly, with how it comes back.
 */
export function missingInTemporal(error: unknown, workflowId: string): unknown {
  // The schedule client says ScheduleNotFoundError; a bare workflow-service call, gRPC NOT_FOUND.
  if (!(error instanceof ScheduleNotFoundError) && grpcCodeOf(error) !== grpcStatus.NOT_FOUND) return error;
  return scheduleNotFound(
    workflowId,
    'its schedule trigger has no schedule in Temporal (it was removed there); saving the workflow again, or the next start of the API, recreates it.',
  );
}
