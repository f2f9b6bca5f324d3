/**
 * The housekeeping job's work (workers/workflows/housekeeping.ts): what the contract keeps only for a
 * while, deleted once that while is over, so tables stay bounded however long the service runs.
 */
import type { Database } from '../../platform/store/db';
import { purgeEndedWaiters } from '../../platform/store/event-waiters';
import { purgeExpiredEvents } from '../../platform/store/events';
import { purgeExecutionRetries } from '../../platform/store/execution-retries';
import { purgeExpiredIdempotencyKeys } from '../../platform/store/idempotency';
import { purgeDeliveryLog } from '../../platform/store/webhooks';

export interface PurgeResult {
  /** Trigger idempotency keys past their 24 hours (docs/api.md#idempotency). */
  idempotency_keys: number;
  /** Finished webhook deliveries past the retention, with their attempts. */
  deliveries: number;
  /** Records of retried runs older than Temporal's retention (the runs they name are gone). */
  retries: number;
  /** Events past EVENT_RETENTION_DAYS, with what was recorded of them (docs/events.md#retention). */
  events: number;
  /** wait_for_event waits ended an hour ago, or a day past their timeout (their run was canceled or is gone). */
  event_waiters: number;
}

export function createHousekeepingActivities(deps: {
  db: Database;
  deliveryLogRetentionDays: number;
  executionRetentionDays: number;
  eventRetentionDays: number;
}) {
  async function purge_expired(): Promise<PurgeResult> {
    return {
      idempotency_keys: await purgeExpiredIdempotencyKeys(deps.db),
      deliveries: await purgeDeliveryLog(deps.db, deps.deliveryLogRetentionDays),
      retries: await purgeExecutionRetries(deps.db, deps.executionRetentionDays),
      events: await purgeExpiredEvents(deps.db, deps.eventRetentionDays),
      event_waiters: await purgeEndedWaiters(deps.db),
    };
  }
  return { purge_expired };
}
