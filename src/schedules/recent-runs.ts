/**
 * A schedule's recent runs, from Temporal visibility: the executions of the workflow whose trigger is
 * `schedule` (what the schedule started at its times or in a backfill, and runs started with "run now"),
 * newest first. Visibility is eventually consistent: a run appears within about a second of its start.
 */
import { defaultPayloadConverter } from '@temporalio/common';
import { optionalTsToDate } from '@temporalio/common/lib/time';
import type { temporal } from '@temporalio/proto';
import { callTemporal } from '../../platform/temporal/errors';
import { visibilityString } from '../../platform/temporal/visibility-query';
import { EXECUTION_WORKFLOW_TYPE } from '../../core/execution-types';
import { TRIGGER_ATTRIBUTE, WORKFLOW_ATTRIBUTE, WORKSPACE_ATTRIBUTE } from '../../core/search-attributes';
import type { Services } from '../services';

/** How many recent runs a schedule's read shows. */
export const RECENT_RUNS_SHOWN = 10;

/** Temporal's search attribute on a run a schedule started: the time the run was due. */
const SCHEDULED_START_ATTRIBUTE = 'TemporalScheduledStartTime';

export interface RecentRun {
  execution_id: string;
  /** When the run was due: its time in the schedule (a backfilled run's is in the past), or when it was started by hand. */
  scheduled_at: string;
}

export async function recentScheduledRuns(
  services: Services,
  workspaceId: string,
  workflowId: string,
): Promise<RecentRun[]> {
  const { connection, namespace } = services.temporal;
  const query = [
    `WorkflowType = ${visibilityString(EXECUTION_WORKFLOW_TYPE)}`,
    `${WORKSPACE_ATTRIBUTE.name} = ${visibilityString(workspaceId)}`,
    `${WORKFLOW_ATTRIBUTE.name} = ${visibilityString(workflowId)}`,
    `${TRIGGER_ATTRIBUTE.name} = 'schedule'`,
  ].join(' AND ');
  const response = await callTemporal(connection, () =>
    connection.workflowService.listWorkflowExecutions({
      namespace,
      query,
      pageSize: RECENT_RUNS_SHOWN,
    }),
  );
  const runs = new Map<string, RecentRun>();
  for (const info of response.executions ?? []) {
    const id = info.execution?.workflowId;
    // A retried execution has a run per attempt in visibility: one entry per execution.
    if (!id || runs.has(id)) continue;
    runs.set(id, { execution_id: id, scheduled_at: scheduledAt(info) });
  }
  return [...runs.values()].sort((a, b) => b.scheduled_at.localeCompare(a.scheduled_at));
}

function scheduledAt(info: temporal.api.workflow.v1.IWorkflowExecutionInfo): string {
  const payload = info.searchAttributes?.indexedFields?.[SCHEDULED_START_ATTRIBUTE];
  const value = payload ? defaultPayloadConverter.fromPayload(payload) : undefined;
  const due = typeof value === 'string' ? new Date(value) : undefined;
  if (due && !Number.isNaN(due.getTime())) return due.toISOString();
  return (optionalTsToDate(info.startTime) ?? new Date(0)).toISOString();
}
