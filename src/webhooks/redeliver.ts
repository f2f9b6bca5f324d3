/**
 * Sending a delivery again on request (POST /v1/webhooks/{id}/deliveries/{delivery_id}/retry,
 * docs/webhooks.md#redelivery). A workspace asks; what bounds the work it can cause:
 *
 * - one series of attempts per delivery at a time: the redelivery's workflow id is the delivery's own
 *   (`dlv_<delivery id>_redelivery`), so a second request while one runs is 409 `delivery_in_progress`, and
 *   so is a request while the delivery's first series still retries;
 * - a rate per workspace (REDELIVERY_RATE): past it, 429 `rate_limited`.
 *
 * The delivery's status is left to the delivery workflow, which records every attempt and the status it
 * leads to: nothing marks a row `pending` before a workflow exists that will finish it, so a refused or
 * lost start never leaves a row pending for ever. A row still `pending` with no series running (an earlier
 * version marked it before starting, or an operator terminated its workflow) is sent again like any other.
 */
import type Koa from 'koa';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { AppError } from '../../platform/errors';
import { createRateLimiter, enforceRateLimit, type RateLimiter } from '../http/rate-limit';
import type { Services } from '../services';
import type { DeliveryRecord } from '../../platform/store/webhooks';
import { callTemporal } from '../../platform/temporal/errors';
import { isWorkflowRunning } from '../../platform/temporal/run-open';
import {
  DELIVERY_WORKFLOW_TYPE,
  deliveryWorkflowId,
  redeliveryWorkflowId,
  type DeliveryWorkflowInput,
} from '../../core/event-types';
import { workspacePriority } from '../../core/fairness';

/** Redeliveries a workspace may ask for: 10 at once, then one every 6 s (10 a minute). */
export const REDELIVERY_RATE = { burst: 10, perSecond: 1 / 6 } as const;

const limiterByService = new WeakMap<Services, RateLimiter>();

function redeliveryLimiter(services: Services): RateLimiter {
  let limiter = limiterByService.get(services);
  if (!limiter) {
    limiter = createRateLimiter({
      ...REDELIVERY_RATE,
      name: 'redelivery',
      db: services.db,
      logger: services.logger,
    });
    limiterByService.set(services, limiter);
  }
  return limiter;
}

const inProgress = (delivery: DeliveryRecord) =>
  new AppError(
    409,
    'delivery_in_progress',
    `Delivery '${delivery.id}' is still being attempted; ask again once it has succeeded or failed.`,
  );

export interface RedeliveryRequest {
  workspaceId: string;
  delivery: DeliveryRecord;
  payload: DeliveryWorkflowInput['event']['payload'];
}

/** Starts a new series of attempts of `delivery`, or refuses (409, 429) saying why. */
export async function redeliver(
  services: Services,
  koa: Koa.Context,
  request: RedeliveryRequest,
): Promise<void> {
  const { delivery, workspaceId } = request;
  if (
    delivery.status === 'pending' &&
    ((await isWorkflowRunning(services.temporal, deliveryWorkflowId(delivery.event_id))) ||
      (await isWorkflowRunning(services.temporal, redeliveryWorkflowId(delivery.id))))
  ) {
    throw inProgress(delivery);
  }
  await enforceRateLimit(koa, redeliveryLimiter(services), workspaceId, 'redeliveries of this workspace');
  const input: DeliveryWorkflowInput = {
    event: { payload: request.payload, workspace_id: workspaceId, run_id: '' },
    delivery_ids: [delivery.id],
    max_attempts: services.config.webhookRetryScheduleMs.length + 1,
    // Sent again on request: the execution it describes closed long ago (or this is a progress event).
    skip_close_wait: true,
    local_first_attempt: true,
  };
  const { client, connection } = services.temporal;
  try {
    await callTemporal(connection, () =>
      client.workflow.start(DELIVERY_WORKFLOW_TYPE, {
        taskQueue: services.config.temporal.taskQueue,
        workflowId: redeliveryWorkflowId(delivery.id),
        // A closed redelivery may be followed by another; a running one may not.
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        workflowIdConflictPolicy: 'FAIL',
        args: [input],
        priority: workspacePriority(workspaceId),
        staticSummary: `Redelivery of ${delivery.event} (${delivery.id})`,
      }),
    );
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) throw inProgress(delivery);
    throw error;
  }
}
