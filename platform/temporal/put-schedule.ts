import {
  ScheduleAlreadyRunning,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleOptions,
} from '@temporalio/client';
import type { ScheduleOverlap } from '../../core/definitions/schema';

/**
 * Creates the schedule, or makes an existing one match `options`. Its state stays: a pause (through the API,
 * Temporal UI or CLI) and its note survive a new version of the definition.
 */
export async function putSchedule(client: Client, options: ScheduleOptions): Promise<void> {
  try {
    await client.schedule.create(options);
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
    await client.schedule.getHandle(options.scheduleId).update((previous) => ({
      spec: options.spec,
      action: options.action,
      policies: options.policies,
      typedSearchAttributes: options.typedSearchAttributes,
      state: previous.state,
    }));
  }
}

const OVERLAP_POLICIES: Record<ScheduleOverlap, ScheduleOverlapPolicy> = {
  skip: ScheduleOverlapPolicy.SKIP,
  buffer_one: ScheduleOverlapPolicy.BUFFER_ONE,
  buffer_all: ScheduleOverlapPolicy.BUFFER_ALL,
  cancel_other: ScheduleOverlapPolicy.CANCEL_OTHER,
  allow_all: ScheduleOverlapPolicy.ALLOW_ALL,
};

/** A schedule trigger's `overlap` as Temporal's overlap policy (`skip` when the trigger says nothing). */
export function overlapPolicyOf(overlap: ScheduleOverlap | undefined): ScheduleOverlapPolicy {
  return OVERLAP_POLICIES[overlap ?? 'skip'];
}
