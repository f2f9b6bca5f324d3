/**
 * A schedule as GET /v1/workflows/{id}/schedule shows it (docs/api.md#schedules): the spec as the trigger
 * states it, whether it is paused and why, its next five times and its recent runs. Temporal holds the
 * state (paused, note, next times); the definition holds the spec.
 */
import type { ScheduleDescription } from '@temporalio/client';
import { callTemporal } from '../../platform/temporal/errors';
import type { ScheduleOverlap } from '../../core/definitions/schema';
import type { Services } from '../services';
import { recentScheduledRuns, type RecentRun } from './recent-runs';
import { missingInTemporal, type ScheduledWorkflow, type ScheduleTrigger } from './scheduled-workflow';

/** How many upcoming times a read shows. */
export const NEXT_RUNS_SHOWN = 5;

/**
 * Temporal needs a note to pause and to unpause: these stand for "no note" (a pause without one, and every
 * resume), and a read shows `note: null` for them.
 */
export const PAUSED_WITHOUT_NOTE = 'Paused through the Switchyard API';
export const RESUMED_NOTE = 'Resumed through the Switchyard API';

export interface ScheduleView {
  spec: { cron: string } | { every: string };
  timezone: string;
  overlap: ScheduleOverlap;
  paused: boolean;
  note: string | null;
  next_runs: string[];
  recent_runs: RecentRun[];
}

export async function readSchedule(services: Services, scheduled: ScheduledWorkflow): Promise<ScheduleView> {
  const workflowId = scheduled.record.workflow_id;
  const [description, recentRuns] = await Promise.all([
    callTemporal(services.temporal.connection, () => scheduled.handle.describe()).catch((error: unknown) => {
      throw missingInTemporal(error, workflowId);
    }),
    recentScheduledRuns(services, scheduled.workspaceId, workflowId),
  ]);
  return scheduleView(scheduled.trigger, description, recentRuns);
}

export function scheduleView(
  trigger: ScheduleTrigger,
  description: ScheduleDescription,
  recentRuns: RecentRun[],
): ScheduleView {
  const { paused, note } = description.state;
  const now = Date.now();
  return {
    spec: trigger.cron !== undefined ? { cron: trigger.cron } : { every: trigger.every ?? '' },
    timezone: trigger.timezone ?? 'UTC',
    overlap: trigger.overlap ?? 'skip',
    paused,
    note: paused && note && note !== PAUSED_WITHOUT_NOTE ? note : null,
    // A paused schedule starts nothing until it is resumed. Temporal computes its times from when it last
    // woke, so a time already past may lead the list.
    next_runs: paused
      ? []
      : description.info.nextActionTimes
          .filter((time) => time.getTime() >= now)
          .slice(0, NEXT_RUNS_SHOWN)
          .map((time) => time.toISOString()),
    recent_runs: recentRuns,
  };
}
