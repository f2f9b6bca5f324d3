/**
 * Pausing, resuming and running a schedule now (docs/definitions.md#schedules). Pause and resume are
 * Temporal's; a pause survives new versions of the definition (platform/temporal/put-schedule.ts keeps the
 * schedule's state). "Run now" does not go through Temporal's trigger, which does not say which execution
 * it started: it starts the execution itself, as the trigger endpoint does, with the schedule's input and
 * trigger type `schedule` (the same trigger step a scheduled run has), so it can answer its id.
 */
import { callTemporal } from '../../platform/temporal/errors';
import { triggerExecution } from '../executions/trigger';
import type { Services } from '../services';
import { PAUSED_WITHOUT_NOTE, RESUMED_NOTE } from './read';
import { missingInTemporal, type ScheduledWorkflow } from './scheduled-workflow';

/** Longest pause note. */
export const MAX_NOTE_LENGTH = 500;

/** A lone UTF-16 surrogate, which a protobuf string cannot carry: it becomes U+FFFD, as JSON payloads do. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export async function pauseSchedule(
  services: Services,
  scheduled: ScheduledWorkflow,
  note: string | undefined,
): Promise<void> {
  const text = note?.replace(LONE_SURROGATE, '\uFFFD').trim() || PAUSED_WITHOUT_NOTE;
  await patch(services, scheduled, () => scheduled.handle.pause(text));
}

export async function resumeSchedule(services: Services, scheduled: ScheduledWorkflow): Promise<void> {
  await patch(services, scheduled, () => scheduled.handle.unpause(RESUMED_NOTE));
}

async function patch(services: Services, scheduled: ScheduledWorkflow, change: () => Promise<void>) {
  await callTemporal(services.temporal.connection, change).catch((error: unknown) => {
    throw missingInTemporal(error, scheduled.record.workflow_id);
  });
}

/**
 * One run now, paused or not and whatever the overlap policy says (a person asked for it): the latest
 * version with the schedule's input. Answers the execution's id.
 */
export async function runScheduleNow(
  services: Services,
  scheduled: ScheduledWorkflow,
  requestId: string,
): Promise<string> {
  const { executionId } = await triggerExecution(services, {
    workspaceId: scheduled.workspaceId,
    workflowId: scheduled.record.workflow_id,
    version: scheduled.record.version,
    body: scheduled.trigger.input ?? {},
    triggerType: 'schedule',
    requestId,
  });
  return executionId;
}
