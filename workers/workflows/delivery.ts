/**
 * One event's delivery (docs/webhooks.md#delivery-and-retries): its own workflow, so a slow or dead receiver
 * never holds an execution open, and operators see deliveries in Temporal UI. A closing event first waits
 * until the execution's run is closed. Then each subscribed endpoint gets its first attempt as a local
 * activity: a receiver that answers at once is served in the workflow's first task, with no activity task to
 * dispatch. A failed first attempt hands over, after the schedule's first delay (a durable timer), to one
 * retrying activity per endpoint, which computes each later delay (the Standard Webhooks schedule, or the
 * receiver's Retry-After). An event emitted while the database was away arrives without its deliveries
 * (`deliveries_unrecorded`): the workflow records them first, once the database is back.
 */
import { proxyActivities, proxyLocalActivities, setWorkflowOptions, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { CLOSING_EVENTS, type DeliveryWorkflowInput } from '../../core/event-types';

export interface DeliverySummary {
  delivered: number;
  failed: number;
}

/** How an earlier build waited for the close (kept so that its histories replay). */
const { await_execution_closed } = proxyActivities<Activities>({
  startToCloseTimeout: '2m',
  // Each long-poll returns within about 20 s and the activity heartbeats between them.
  heartbeatTimeout: '30s',
  retry: { initialInterval: '1s', maximumInterval: '30s' },
});

/** An event emitted while the database was away: its deliveries, recorded once the database is back. */
const { record_deliveries } = proxyActivities<Activities>({
  summary: 'record the deliveries (the database was away when the event was emitted)',
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
});

const LOCAL_OPTIONS = {
  // A long-poll returns within about 20 s (and loops); a receiver has 15 s to answer, plus the database.
  startToCloseTimeout: '1m',
  // What throws is the worker's trouble (the database): retried until it is over, never dropped.
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
} as const;

/**
 * A delivery's retries can span hours: it moves to the current build at its next task (AUTO_UPGRADE)
 * rather than keeping an old build's workers alive; the replay corpus keeps that safe.
 */
setWorkflowOptions({ versioningBehavior: 'AUTO_UPGRADE' }, delivery);
export async function delivery(input: DeliveryWorkflowInput): Promise<DeliverySummary> {
  const { payload, run_id: runId } = input.event;
  // Fixed by the input (no patch marker): an earlier build's worker given this run takes its own path,
  // which is just as valid.
  const firstAttemptLocal = input.local_first_attempt === true;
  if (CLOSING_EVENTS.includes(payload.event) && !input.skip_close_wait) {
    const target = { execution_id: payload.execution_id, run_id: runId };
    await (firstAttemptLocal
      ? proxyLocalActivities<Activities>({
          ...LOCAL_OPTIONS,
          summary: 'wait for the execution to close',
        }).await_execution_closed(target)
      : await_execution_closed(target));
  }
  const deliveryIds = input.deliveries_unrecorded ? await record_deliveries(input.event) : input.delivery_ids;
  const results = await Promise.allSettled(
    deliveryIds.map((deliveryId) =>
      firstAttemptLocal ? deliverFirstLocally(input, deliveryId) : deliverAsActivity(input, deliveryId, 1),
    ),
  );
  const delivered = results.filter((r) => r.status === 'fulfilled' && r.value.status === 'succeeded').length;
  return { delivered, failed: results.length - delivered };
}

async function deliverFirstLocally(
  input: DeliveryWorkflowInput,
  deliveryId: string,
): Promise<{ status: string }> {
  const first = await proxyLocalActivities<Activities>({
    ...LOCAL_OPTIONS,
    summary: `${input.event.payload.event} → ${deliveryId}, attempt 1`,
  }).deliver_webhook_first({
    delivery_id: deliveryId,
    max_attempts: input.max_attempts,
  });
  if (first.status === 'failed') throw new Error(first.error);
  if (first.status !== 'retry') return first;
  await sleep(Math.max(1, first.delay_ms));
  return deliverAsActivity(input, deliveryId, 2);
}

/** Attempts `firstAttempt` to `max_attempts` of one delivery, as one retrying activity. */
function deliverAsActivity(
  input: DeliveryWorkflowInput,
  deliveryId: string,
  firstAttempt: number,
): Promise<{ status: string }> {
  const { payload } = input.event;
  return proxyActivities<Activities>({
    activityId: deliveryId,
    summary: `${payload.event} → ${deliveryId}`,
    startToCloseTimeout: '30s',
    // The activity sets every retry's delay (nextRetryDelay); this policy only bounds the count and
    // spaces attempts that crashed before choosing one.
    retry: {
      maximumAttempts: input.max_attempts - firstAttempt + 1,
      initialInterval: '5s',
      backoffCoefficient: 2,
      maximumInterval: '10m',
    },
  }).deliver_webhook({
    delivery_id: deliveryId,
    max_attempts: input.max_attempts,
    first_attempt: firstAttempt,
  });
}
