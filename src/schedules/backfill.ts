/**
 * Backfill (docs/definitions.md#schedules): the runs the schedule would have started in a past window,
 * started now by Temporal's backfill. The window is [start, end): a run due at `start` is in it, one due
 * at `end` is not (Temporal's own window includes both ends, so it is given `end` less a millisecond). The
 * count comes from the schedule's spec as Temporal evaluates it (ListScheduleMatchingTimes), before the
 * backfill, and the backfill uses the overlap policy allow_all, so that every one of those runs starts
 * even while another is open (the trigger's `overlap` would skip or buffer them).
 */
import { ScheduleOverlapPolicy } from '@temporalio/client';
import { msNumberToTs, tsToMs } from '@temporalio/common/lib/time';
import { invalidRequest } from '../../platform/errors';
import { callTemporal } from '../../platform/temporal/errors';
import type { Services } from '../services';
import { missingInTemporal, type ScheduledWorkflow } from './scheduled-workflow';

/** Most runs one backfill starts. */
export const MAX_BACKFILL_RUNS = 1_000;
/** Temporal lists at most this many matching times per call. */
const MATCHING_TIMES_PER_CALL = 1_000;
/** The earliest start: nothing ran before the epoch, and Temporal's timestamps go no earlier. */
const EARLIEST_START_MS = 0;

export interface BackfillWindow {
  start: Date;
  end: Date;
}

/** The window's own rules (what a JSON Schema cannot say): 400 invalid_request naming the field. */
export function checkWindow({ start, end }: BackfillWindow, now = Date.now()): void {
  if (start.getTime() < EARLIEST_START_MS)
    throw invalidRequest('The backfill window cannot start before 1970-01-01T00:00:00Z.', [
      { path: '/start', message: 'must not be before 1970-01-01T00:00:00Z' },
    ]);
  if (end.getTime() <= start.getTime())
    throw invalidRequest('The backfill window must end after it starts.', [
      { path: '/end', message: 'must be later than start' },
    ]);
  if (end.getTime() > now)
    throw invalidRequest('A backfill covers the past only: its end must not be in the future.', [
      { path: '/end', message: 'must not be in the future' },
    ]);
}

/** Starts the window's runs; answers how many. 400 when the window holds more than MAX_BACKFILL_RUNS. */
export async function backfillSchedule(
  services: Services,
  scheduled: ScheduledWorkflow,
  window: BackfillWindow,
): Promise<number> {
  checkWindow(window);
  const last = new Date(window.end.getTime() - 1);
  const count = await countRuns(services, scheduled, window.start, last);
  if (count > MAX_BACKFILL_RUNS) {
    throw invalidRequest(
      `The window holds more than ${MAX_BACKFILL_RUNS} runs of this schedule; a backfill starts at most ${MAX_BACKFILL_RUNS}. Split it into smaller windows.`,
      [{ path: '/end', message: `the window holds more than ${MAX_BACKFILL_RUNS} runs` }],
    );
  }
  if (count === 0) return 0;
  await temporal(services, scheduled, () =>
    scheduled.handle.backfill({ start: window.start, end: last, overlap: ScheduleOverlapPolicy.ALLOW_ALL }),
  );
  return count;
}

/** The schedule's times in [first, last], counted up to MAX_BACKFILL_RUNS + 1. */
async function countRuns(
  services: Services,
  scheduled: ScheduledWorkflow,
  first: Date,
  last: Date,
): Promise<number> {
  let count = 0;
  // Temporal lists the times after its start time: one millisecond before `first` includes `first`.
  let after = first.getTime() - 1;
  while (count <= MAX_BACKFILL_RUNS) {
    const times = await matchingTimes(services, scheduled, after, last.getTime());
    count += times.length;
    if (times.length < MATCHING_TIMES_PER_CALL) break;
    after = times[times.length - 1]!;
  }
  return count;
}

async function matchingTimes(
  services: Services,
  scheduled: ScheduledWorkflow,
  afterMs: number,
  lastMs: number,
): Promise<number[]> {
  const { connection, namespace } = services.temporal;
  const response = await temporal(services, scheduled, () =>
    connection.workflowService.listScheduleMatchingTimes({
      namespace,
      scheduleId: scheduled.handle.scheduleId,
      startTime: msNumberToTs(afterMs),
      endTime: msNumberToTs(lastMs),
    }),
  );
  return (response.startTime ?? []).map((ts) => tsToMs(ts));
}

async function temporal<T>(services: Services, scheduled: ScheduledWorkflow, call: () => Promise<T>) {
  return callTemporal(services.temporal.connection, call).catch((error: unknown) => {
    throw missingInTemporal(error, scheduled.record.workflow_id);
  });
}
