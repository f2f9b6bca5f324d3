/**
 * The housekeeping job: started by its Temporal Schedule (workers/housekeeping-schedule.ts), one activity
 * that purges expired rows; its result (rows deleted per table) is the run's result in Temporal UI.
 */
import { proxyActivities, setWorkflowOptions } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { PurgeResult } from '../activities/housekeeping';

const { purge_expired } = proxyActivities<Activities>({
  summary: 'delete expired idempotency keys and delivery logs',
  startToCloseTimeout: '10m',
  // The database away: tried again, until the next scheduled run takes over.
  retry: { initialInterval: '10s', maximumInterval: '5m', maximumAttempts: 5 },
});

/** One activity call, kept replayable by the corpus: each run moves to the current build. */
setWorkflowOptions({ versioningBehavior: 'AUTO_UPGRADE' }, housekeeping);
export async function housekeeping(): Promise<PurgeResult> {
  return purge_expired();
}
