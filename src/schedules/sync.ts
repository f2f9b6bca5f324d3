// TEMPORARY PLACEHOLDER (being implemented now): Temporal Schedules for schedule-trigger workflows.
import type { Services } from '../services';
import type { WorkflowVersionRecord } from '../store/workflows';

export async function syncSchedule(
  _services: Services,
  _workspaceId: string,
  _record: WorkflowVersionRecord,
): Promise<void> {}
export async function removeSchedule(
  _services: Services,
  _workspaceId: string,
  _workflowId: string,
): Promise<void> {}
