/**
 * The housekeeping job's Temporal Schedule: one per task queue (`switchyard-housekeeping:<queue>`), made
 * to match the configuration by every worker process at start (several replicas agree on it). It starts
 * the `housekeeping` workflow every HOUSEKEEPING_INTERVAL_MINUTES; a run still going when the next is due
 * makes that one skip. Operators see, pause or trigger it in Temporal UI like any schedule.
 */
import { ScheduleOverlapPolicy, type Client, type ScheduleOptions } from '@temporalio/client';
import { putSchedule } from '../platform/temporal/put-schedule';
import { HOUSEKEEPING_WORKFLOW_TYPE } from '../core/execution-types';

export const housekeepingScheduleId = (taskQueue: string): string => `switchyard-housekeeping:${taskQueue}`;

function housekeepingScheduleOptions(taskQueue: string, intervalMinutes: number): ScheduleOptions {
  const scheduleId = housekeepingScheduleId(taskQueue);
  return {
    scheduleId,
    spec: { intervals: [{ every: `${intervalMinutes}m` }] },
    action: {
      type: 'startWorkflow',
      workflowType: HOUSEKEEPING_WORKFLOW_TYPE,
      workflowId: scheduleId,
      taskQueue,
      args: [],
      staticSummary: 'Delete expired idempotency keys, webhook delivery logs and events',
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1m' },
  };
}

/** Creates the schedule, or makes an existing one match the configuration (an operator's pause stays). */
export function ensureHousekeepingSchedule(
  client: Client,
  taskQueue: string,
  intervalMinutes: number,
): Promise<void> {
  return putSchedule(client, housekeepingScheduleOptions(taskQueue, intervalMinutes));
}
