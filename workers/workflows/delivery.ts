/**
 * One event's delivery (CONTRACT §6): its own workflow, so a slow or dead receiver never holds an
 * execution open, and operators see deliveries in Temporal UI. A closing event first waits until the
 * execution's run is closed; then one retrying activity per subscribed endpoint. The activity computes
 * each retry's delay (the Standard Webhooks schedule, or the receiver's Retry-After).
 */
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { CLOSING_EVENTS, type DeliveryWorkflowInput } from '../../core/event-types';

export interface DeliverySummary {
  delivered: number;
  failed: number;
}

const { await_execution_closed } = proxyActivities<Activities>({
  startToCloseTimeout: '2m',
  // Each long-poll returns within about 20 s and the activity heartbeats between them.
  heartbeatTimeout: '30s',
  retry: { initialInterval: '1s', maximumInterval: '30s' },
});

export async function delivery(input: DeliveryWorkflowInput): Promise<DeliverySummary> {
  const { payload, run_id: runId } = input.event;
  if (CLOSING_EVENTS.includes(payload.event) && !input.skip_close_wait)
    await await_execution_closed({ execution_id: payload.execution_id, run_id: runId });
  const results = await Promise.allSettled(
    input.delivery_ids.map((deliveryId) =>
      proxyActivities<Activities>({
        activityId: deliveryId,
        summary: `${payload.event} → ${deliveryId}`,
        startToCloseTimeout: '30s',
        // The activity sets every retry's delay (nextRetryDelay); this policy only bounds the count and
        // spaces attempts that crashed before choosing one.
        retry: {
          maximumAttempts: input.max_attempts,
          initialInterval: '5s',
          backoffCoefficient: 2,
          maximumInterval: '10m',
        },
      }).deliver_webhook({ delivery_id: deliveryId, max_attempts: input.max_attempts }),
    ),
  );
  const delivered = results.filter((r) => r.status === 'fulfilled' && r.value.status === 'succeeded').length;
  return { delivered, failed: results.length - delivered };
}
