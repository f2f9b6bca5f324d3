import { ScheduleAlreadyRunning, type Client, type ScheduleOptions } from '@temporalio/client';

/**
 * Creates the schedule, or makes an existing one match `options`. Its state stays: an operator's pause
 * (Temporal UI or CLI) survives.
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
