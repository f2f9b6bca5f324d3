/**
 * Execution events (docs/webhooks.md#outbound-webhooks). `emit_event` runs as a local activity of the
 * execution workflow: it records one delivery per subscribed endpoint and starts the event's delivery
 * workflow (none when nobody subscribed). `record_deliveries`, `await_execution_closed`,
 * `deliver_webhook_first` and `deliver_webhook` are the delivery workflow's.
 *
 * While PostgreSQL is away, Temporal is the outbox: emit_event starts the delivery workflow with the
 * event alone (`deliveries_unrecorded`), and that workflow records the deliveries (`record_deliveries`,
 * retried until the database answers) before it delivers. So an execution never waits for the database
 * to announce itself, and no event is lost.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { Agent, request } from 'undici';
import {
  checkDestination,
  guardedLookup,
  type DestinationPolicy,
} from '../../platform/net/destination-guard';
import type { SecretCipher } from '../../platform/secrets/cipher';
import type { Database } from '../../platform/store/db';
import {
  createDeliveries,
  deliveryTarget,
  disableEndpoint,
  markDelivery,
  recordAttempt,
  subscribedEndpoints,
} from '../../platform/store/webhooks';
import { webhookHeaders } from '../../platform/webhook-signing';
import {
  DELIVERY_WORKFLOW_TYPE,
  deliveryWorkflowId,
  type DeliveryWorkflowInput,
  type EmittedEvent,
  type EventKind,
} from '../../core/event-types';
import { DATABASE_WAIT_MS, withDeadline } from '../../platform/store/deadline';
import { parseRetryAfter } from './retry-after';
import { metrics } from '../../platform/observability/metrics';
import { workspacePriority } from '../../core/fairness';

export interface EventActivityDeps {
  db: Database;
  /** Which event kinds a workspace subscribes to, cached: most events go nowhere. */
  subscribedEventKinds: (workspaceId: string) => Promise<EventKind[]>;
  cipher: SecretCipher;
  client: Client;
  policy: DestinationPolicy;
  /**
   * Delays in ms after the first attempt (docs/webhooks.md#delivery-and-retries; default 5 s, 5 min, 30 min,
   * 2 h, 5 h, 10 h, 10 h).
   */
  retryScheduleMs: number[];
}

/** A receiver has this long to answer one attempt. */
export const DELIVERY_TIMEOUT_MS = 15_000;
const USER_AGENT = 'Switchyard-Webhooks/1.0';

export interface DeliveryAttemptInput {
  delivery_id: string;
  /** Attempts in all (DeliveryWorkflowInput.max_attempts). */
  max_attempts: number;
}

/** What one delivery attempt came to; `retry` carries the wait before the next attempt. */
export type AttemptOutcome =
  | { status: 'succeeded' | 'endpoint_deleted' | 'endpoint_disabled' | 'endpoint_gone' }
  | { status: 'failed'; error: string }
  | { status: 'retry'; delay_ms: number; error: string };

export function createEventActivities(deps: EventActivityDeps) {
  const dispatcher = new Agent({ connect: { lookup: guardedLookup(deps.policy) } });
  const maxAttempts = deps.retryScheduleMs.length + 1;

  /** One delivery per endpoint subscribed to the event (idempotent: one per endpoint and event). */
  async function recordDeliveries(event: EmittedEvent): Promise<string[]> {
    if (!(await deps.subscribedEventKinds(event.workspace_id)).includes(event.payload.event)) return [];
    const endpoints = await subscribedEndpoints(deps.db, event.workspace_id, event.payload.event);
    if (endpoints.length === 0) return [];
    return createDeliveries(
      deps.db,
      event.workspace_id,
      event.payload,
      endpoints.map((e) => e.id),
    );
  }

  async function emit_event(
    event: EmittedEvent,
  ): Promise<{ deliveries: number } | { deliveries: 'unrecorded'; database_error: string }> {
    let deliveryIds: string[];
    try {
      deliveryIds = await withDeadline(recordDeliveries(event), DATABASE_WAIT_MS);
    } catch (error) {
      // The database is away (or too slow): the delivery workflow records the deliveries once it is back.
      const reason = (error as Error).message;
      Context.current().log.warn(
        'Database unavailable: the event goes to Temporal, deliveries recorded later',
        {
          event: event.payload.event,
          eventId: event.payload.id,
          error: reason,
        },
      );
      await startDelivery(event, [], true);
      return { deliveries: 'unrecorded', database_error: reason };
    }
    if (deliveryIds.length === 0) return { deliveries: 0 };
    await startDelivery(event, deliveryIds, false);
    return { deliveries: deliveryIds.length };
  }

  async function startDelivery(
    event: EmittedEvent,
    deliveryIds: string[],
    unrecorded: boolean,
  ): Promise<void> {
    const input: DeliveryWorkflowInput = {
      event,
      delivery_ids: deliveryIds,
      max_attempts: maxAttempts,
      local_first_attempt: true,
      ...(unrecorded && { deliveries_unrecorded: true }),
    };
    try {
      await deps.client.workflow.start(DELIVERY_WORKFLOW_TYPE, {
        taskQueue: Context.current().info.taskQueue,
        workflowId: deliveryWorkflowId(event.payload.id),
        args: [input],
        priority: workspacePriority(event.workspace_id),
        staticSummary: unrecorded
          ? `${event.payload.event} of ${event.payload.execution_id} (subscribers read once the database is back)`
          : `${event.payload.event} of ${event.payload.execution_id} to ${deliveryIds.length} endpoint(s)`,
      });
    } catch (error) {
      // This local activity ran again after a crash (or a late database answer): the delivery is under way.
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
  }

  /** The deliveries of an event emitted while the database was away; retried until it is back. */
  async function record_deliveries(event: EmittedEvent): Promise<string[]> {
    return recordDeliveries(event);
  }

  /**
   * Long-polls the run's close event: receivers of a closing event must find the execution closed. Runs as
   * a local activity of the delivery workflow (an activity in histories of earlier builds).
   */
  async function await_execution_closed(target: { execution_id: string; run_id: string }): Promise<void> {
    const { connection, options } = deps.client;
    const context = Context.current();
    for (;;) {
      // A local activity cannot heartbeat (its workflow task is kept alive instead).
      if (!context.info.isLocal) context.heartbeat();
      const response = await connection.withAbortSignal(context.cancellationSignal, () =>
        connection.workflowService.getWorkflowExecutionHistory({
          namespace: options.namespace,
          execution: { workflowId: target.execution_id, runId: target.run_id },
          waitNewEvent: true,
          historyEventFilterType:
            temporal.api.enums.v1.HistoryEventFilterType.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT,
          skipArchival: true,
        }),
      );
      if ((response.history?.events ?? []).length > 0) return;
    }
  }

  /** One attempt, measured (switchyard_webhook_delivery_duration_seconds by outcome). */
  async function attemptDelivery(
    deliveryId: string,
    attempt: number,
    maxAttempts: number,
  ): Promise<AttemptOutcome> {
    const started = performance.now();
    const outcome = await attemptDeliveryUnmeasured(deliveryId, attempt, maxAttempts);
    metrics.webhookDeliveries.observe({ outcome: outcome.status }, (performance.now() - started) / 1000);
    return outcome;
  }

  /** One attempt: the signed POST, its record in the delivery log, and what comes next. */
  async function attemptDeliveryUnmeasured(
    deliveryId: string,
    attempt: number,
    maxAttempts: number,
  ): Promise<AttemptOutcome> {
    const target = await deliveryTarget(deps.db, deps.cipher, deliveryId);
    // Deleted (with its endpoint): deleting an endpoint stops its pending retries.
    if (!target) return { status: 'endpoint_deleted' };
    if (target.endpoint_status !== 'enabled') {
      await markDelivery(deps.db, deliveryId, 'failed');
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
      delivery_id: deliveryId,
      at,
      status_code: statusCode,
      duration_ms: durationMs,
      error,
    };

    if (statusCode !== null && statusCode >= 200 && statusCode < 300) {
      await recordAttempt(deps.db, record, { status: 'succeeded', nextAttemptAt: null });
      return { status: 'succeeded' };
    }
    const failure = error ?? 'failed';
    if (statusCode === 410) {
      await recordAttempt(deps.db, record, { status: 'failed', nextAttemptAt: null });
      await disableEndpoint(deps.db, target.endpoint_id);
      return { status: 'endpoint_gone' };
    }
    if (attempt >= maxAttempts) {
      await recordAttempt(deps.db, record, { status: 'failed', nextAttemptAt: null });
      return { status: 'failed', error: `Delivery failed after ${attempt} attempts: ${failure}` };
    }
    const delay = retryAfter ?? deps.retryScheduleMs[attempt - 1] ?? deps.retryScheduleMs.at(-1) ?? 60_000;
    await recordAttempt(deps.db, record, { status: 'pending', nextAttemptAt: new Date(Date.now() + delay) });
    return { status: 'retry', delay_ms: delay, error: `Attempt ${attempt}: ${failure}` };
  }

  /**
   * A delivery's first attempt, as a local activity of the delivery workflow: most receivers answer at
   * once, and then the whole delivery takes one workflow task. A failure is a result (`retry`), which the
   * workflow hands to `deliver_webhook` after the schedule's first delay.
   */
  async function deliver_webhook_first(input: DeliveryAttemptInput): Promise<AttemptOutcome> {
    return attemptDelivery(input.delivery_id, 1, input.max_attempts);
  }

  /** The attempts a delivery has left, retried by Temporal on the webhook schedule (nextRetryDelay). */
  async function deliver_webhook(
    input: DeliveryAttemptInput & { first_attempt?: number },
  ): Promise<{ status: string }> {
    const attempt = (input.first_attempt ?? 1) + Context.current().info.attempt - 1;
    const outcome = await attemptDelivery(input.delivery_id, attempt, input.max_attempts);
    if (outcome.status === 'failed') throw ApplicationFailure.nonRetryable(outcome.error, 'delivery_failed');
    if (outcome.status === 'retry')
      throw ApplicationFailure.create({
        type: 'delivery_attempt_failed',
        message: outcome.error,
        nextRetryDelay: outcome.delay_ms,
      });
    return { status: outcome.status };
  }

  return { emit_event, record_deliveries, await_execution_closed, deliver_webhook_first, deliver_webhook };
}

function describeError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const code = (error as { code?: string }).code ?? cause?.code;
  const name = (error as Error).name;
  if (name === 'TimeoutError') return `no answer within ${DELIVERY_TIMEOUT_MS / 1000} s`;
  const message = cause?.message ?? (error as Error).message ?? String(error);
  return code ? `${code}: ${message}` : message;
}
