/**
 * Execution events (CONTRACT §6). `emit_event` runs as a local activity of the execution workflow: it
 * records one delivery per subscribed endpoint and starts the event's delivery workflow (none when
 * nobody subscribed). `await_execution_closed` and `deliver_webhook` are the delivery workflow's.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { Agent, request } from 'undici';
import { checkDestination, guardedLookup, type DestinationPolicy } from '../../src/net/destination-guard';
import type { SecretCipher } from '../../src/secrets/cipher';
import type { Database } from '../../src/store/db';
import {
  createDeliveries,
  deliveryTarget,
  disableEndpoint,
  markDelivery,
  recordAttempt,
  subscribedEndpoints,
} from '../../src/store/webhooks';
import { webhookHeaders } from '../../src/webhooks/signing';
import {
  DELIVERY_WORKFLOW_TYPE,
  type DeliveryWorkflowInput,
  type EmittedEvent,
  type EventKind,
} from '../../core/event-types';
import { parseRetryAfter } from './retry-after';

export interface EventActivityDeps {
  db: Database;
  /** Which event kinds a workspace subscribes to, cached: most events go nowhere. */
  subscribedEventKinds: (workspaceId: string) => Promise<EventKind[]>;
  cipher: SecretCipher;
  client: Client;
  policy: DestinationPolicy;
  /** Delays in ms after the first attempt (CONTRACT §6 default: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h). */
  retryScheduleMs: number[];
}

/** A receiver has this long to answer one attempt. */
export const DELIVERY_TIMEOUT_MS = 15_000;
const USER_AGENT = 'Switchyard-Webhooks/1.0';

export function deliveryWorkflowId(eventId: string): string {
  return `dlv_${eventId}`;
}

export function createEventActivities(deps: EventActivityDeps) {
  const dispatcher = new Agent({ connect: { lookup: guardedLookup(deps.policy) } });
  const maxAttempts = deps.retryScheduleMs.length + 1;

  async function emit_event(event: EmittedEvent): Promise<{ deliveries: number }> {
    if (!(await deps.subscribedEventKinds(event.workspace_id)).includes(event.payload.event))
      return { deliveries: 0 };
    const endpoints = await subscribedEndpoints(deps.db, event.workspace_id, event.payload.event);
    if (endpoints.length === 0) return { deliveries: 0 };
    const deliveryIds = await createDeliveries(
      deps.db,
      event.workspace_id,
      event.payload,
      endpoints.map((e) => e.id),
    );
    const input: DeliveryWorkflowInput = { event, delivery_ids: deliveryIds, max_attempts: maxAttempts };
    try {
      await deps.client.workflow.start(DELIVERY_WORKFLOW_TYPE, {
        taskQueue: Context.current().info.taskQueue,
        workflowId: deliveryWorkflowId(event.payload.id),
        args: [input],
        staticSummary: `${event.payload.event} of ${event.payload.execution_id} to ${deliveryIds.length} endpoint(s)`,
      });
    } catch (error) {
      // This local activity ran again after a crash: the delivery is already under way.
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
    return { deliveries: deliveryIds.length };
  }

  /** Long-polls the run's close event: receivers of a closing event must find the execution closed. */
  async function await_execution_closed(target: { execution_id: string; run_id: string }): Promise<void> {
    const { connection, options } = deps.client;
    const context = Context.current();
    for (;;) {
      context.heartbeat();
      const response = await connection.workflowService.getWorkflowExecutionHistory({
        namespace: options.namespace,
        execution: { workflowId: target.execution_id, runId: target.run_id },
        waitNewEvent: true,
        historyEventFilterType:
          temporal.api.enums.v1.HistoryEventFilterType.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT,
        skipArchival: true,
      });
      if ((response.history?.events ?? []).length > 0) return;
    }
  }

  async function deliver_webhook(input: {
    delivery_id: string;
    max_attempts: number;
  }): Promise<{ status: string }> {
    const attempt = Context.current().info.attempt;
    const target = await deliveryTarget(deps.db, deps.cipher, input.delivery_id);
    // Deleted (with its endpoint): deleting an endpoint stops its pending retries.
    if (!target) return { status: 'endpoint_deleted' };
    if (target.endpoint_status !== 'enabled') {
      await markDelivery(deps.db, input.delivery_id, 'failed');
      return { status: 'endpoint_disabled' };
    }
    const body = JSON.stringify(target.payload);
    const at = new Date();
    const started = performance.now();
    let statusCode: number | null = null;
    let error: string | null = null;
    let retryAfter: number | undefined;
    try {
      await checkDestination(target.url, deps.policy);
      const response = await request(target.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          ...webhookHeaders(target.secret, target.payload.id, body),
        },
        body,
        dispatcher,
        signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
      });
      statusCode = response.statusCode;
      const header = response.headers['retry-after'];
      retryAfter =
        statusCode === 429 || statusCode === 503
          ? parseRetryAfter(Array.isArray(header) ? header[0] : header)
          : undefined;
      await response.body.dump();
      if (statusCode >= 300)
        error = statusCode < 400 ? `redirect (${statusCode}) not followed` : `answered ${statusCode}`;
    } catch (caught) {
      error = describeError(caught);
    }
    const durationMs = Math.round(performance.now() - started);
    const record = {
      delivery_id: input.delivery_id,
      at,
      status_code: statusCode,
      duration_ms: durationMs,
      error,
    };

    if (statusCode !== null && statusCode >= 200 && statusCode < 300) {
      await recordAttempt(deps.db, record, { status: 'succeeded', nextAttemptAt: null });
      return { status: 'succeeded' };
    }
    if (statusCode === 410) {
      await recordAttempt(deps.db, record, { status: 'failed', nextAttemptAt: null });
      await disableEndpoint(deps.db, target.endpoint_id);
      return { status: 'endpoint_gone' };
    }
    if (attempt >= input.max_attempts) {
      await recordAttempt(deps.db, record, { status: 'failed', nextAttemptAt: null });
      throw ApplicationFailure.nonRetryable(
        `Delivery failed after ${attempt} attempts: ${error}`,
        'delivery_failed',
      );
    }
    const delay = retryAfter ?? deps.retryScheduleMs[attempt - 1] ?? deps.retryScheduleMs.at(-1) ?? 60_000;
    await recordAttempt(deps.db, record, { status: 'pending', nextAttemptAt: new Date(Date.now() + delay) });
    throw ApplicationFailure.create({
      type: 'delivery_attempt_failed',
      message: `Attempt ${attempt}: ${error}`,
      nextRetryDelay: delay,
    });
  }

  return { emit_event, await_execution_closed, deliver_webhook };
}

function describeError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const code = (error as { code?: string }).code ?? cause?.code;
  const name = (error as Error).name;
  if (name === 'TimeoutError') return `no answer within ${DELIVERY_TIMEOUT_MS / 1000} s`;
  const message = cause?.message ?? (error as Error).message ?? String(error);
  return code ? `${code}: ${message}` : message;
}
