/**
 * Outbound webhooks (docs/webhooks.md#outbound-webhooks), seen from the receiver: a local HTTP server on
 * 127.0.0.1 answering 204 at once (bench/webhook-receiver.ts). Each part runs in a fresh workspace of its own
 * (so that no other scenario's runs are delivered), with endpoints registered through POST /v1/webhooks for
 * `execution.completed`, and a one-step rules workflow created and triggered through the API.
 *
 * - `latency`: one endpoint; BENCH_WEBHOOK_EXECUTIONS executions at a fixed concurrency
 *   (BENCH_WEBHOOK_CONCURRENCY), each caller triggering its next execution once the previous one's
 *   delivery arrived (after BENCH_WEBHOOK_WARMUP unmeasured ones). Delivery latency is the receipt time
 *   minus the execution's CloseTime in Temporal (same host, same clock): the wait for the close event,
 *   the delivery workflow and the signed POST. `deliveries_per_sec` runs from the first measured trigger
 *   to the last receipt.
 * - `fanout`: BENCH_WEBHOOK_FANOUT_ENDPOINTS endpoints (distinct paths on the receiver);
 *   BENCH_WEBHOOK_FANOUT_EXECUTIONS executions triggered at the same concurrency, measured from the
 *   first trigger to the last receipt of all executions × endpoints deliveries. Every (event,
 *   endpoint) pair should arrive once: missing ones and duplicates (allowed by at-least-once) are
 *   counted after every delivery workflow closed.
 * - `signatures`: every request of both parts, checked for the webhook-id, webhook-timestamp and
 *   webhook-signature headers and verified with the `standardwebhooks` package and the secret the
 *   POST /v1/webhooks answer returned for its endpoint.
 */
import type { Client } from '@temporalio/client';
import { performance } from 'node:perf_hooks';
import type { Definition } from '../../core/definitions/schema';
import { randomBase62 } from '../../platform/ids';
import { createApiKey } from '../../platform/store/api-keys';
import { createWorkspace } from '../../platform/store/workspaces';
import { DELIVERY_WORKFLOW_TYPE } from '../../core/event-types';
import { EXECUTION_WORKFLOW_TYPE } from '../../core/execution-types';
import { WORKSPACE_ATTRIBUTE } from '../../core/search-attributes';
import { createApiClient, type ApiClient } from '../http-load';
import { runClosedLoop } from '../load';
import { progress } from '../stack';
import { perSecond, round, summarizeLatencies } from '../stats';
import { quote, sleep, waitUntilNoneRunning } from '../visibility';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../webhook-receiver';
import { CUSTOMER_INPUT_SCHEMA, demoInput, type BenchContext } from './common';

const WORKFLOW_ID = 'bench-webhook-one-step';
const EVENT = 'execution.completed';
/** How long a caller of the latency part waits for its execution's delivery before giving up on it. */
const DELIVERY_TIMEOUT_MS = 30_000;
/** How long the fan-out part waits, after its last trigger, for the deliveries still missing. */
const FANOUT_TIMEOUT_MS = 120_000;
/** How long each part waits for its delivery workflows to close before counting duplicates. */
const DRAIN_TIMEOUT_MS = 60_000;
const POLL_INTERVAL_MS = 50;

const EXECUTIONS_QUERY = `WorkflowType = ${quote(EXECUTION_WORKFLOW_TYPE)}`;
const DELIVERIES_QUERY = `WorkflowType = ${quote(DELIVERY_WORKFLOW_TYPE)}`;

/** One rules step: the cheapest execution that emits `execution.completed`. */
export function oneStepDefinition(): Definition {
  return {
    id: WORKFLOW_ID,
    name: 'Benchmark: one rules step (webhooks)',
    input_schema: CUSTOMER_INPUT_SCHEMA,
    steps: [
      {
        id: 'route',
        kind: 'rules',
        rules: [{ when: "input.plan = 'enterprise'", output: { tier: 'high' } }],
        default: { tier: 'standard' },
      },
    ],
  };
}

interface BenchWorkspace {
  id: string;
  /** Keep-alive client with an admin key of this workspace. */
  api: ApiClient;
}

/** A new workspace with an admin key (as test/support/stack.ts newWorkspace) and the one-step workflow. */
async function freshWorkspace(
  ctx: BenchContext,
  label: string,
  connections: number,
): Promise<BenchWorkspace> {
  const db = ctx.stack.runtime.services.db;
  const id = `bench-${label}-${randomBase62(8).toLowerCase()}`;
  await createWorkspace(db, id, `Benchmark: ${label}`);
  const { key } = await createApiKey(db, { workspaceId: id, name: 'bench', scopes: ['admin'] });
  const api = createApiClient(ctx.stack.baseUrl, key, connections);
  try {
    await api.createWorkflow(oneStepDefinition());
  } catch (error) {
    await api.close();
    throw error;
  }
  return { id, api };
}

interface Closed {
  closeTime: number;
  status: string;
}

/** CloseTime and status of `ids`, from visibility (one listing of the workspace), else describe(). */
async function closeTimes(
  client: Client,
  workspaceId: string,
  ids: Iterable<string>,
): Promise<Map<string, Closed>> {
  const closed = new Map<string, Closed>();
  const query = `${WORKSPACE_ATTRIBUTE.name} = ${quote(workspaceId)}`;
  for await (const execution of client.workflow.list({ query, pageSize: 1000 })) {
    if (execution.closeTime)
      closed.set(execution.workflowId, {
        closeTime: execution.closeTime.getTime(),
        status: execution.status.name,
      });
  }
  for (const id of ids) {
    if (closed.has(id)) continue;
    const description = await client.workflow.getHandle(id).describe();
    if (description.closeTime)
      closed.set(id, { closeTime: description.closeTime.getTime(), status: description.status.name });
  }
  return closed;
}

/** Waits until every delivery workflow closed, so that late retries (duplicates) are counted too. */
async function drainDeliveries(client: Client, label: string): Promise<boolean> {
  try {
    await waitUntilNoneRunning(client, DELIVERIES_QUERY, DRAIN_TIMEOUT_MS);
    return true;
  } catch (error) {
    progress(`${label}: ${error instanceof Error ? error.message : String(error)}`);
    return false;
  }
}

/** Requests grouped by `key`, in arrival order. */
function groupBy(requests: readonly ReceivedWebhook[], key: (request: ReceivedWebhook) => string) {
  const groups = new Map<string, ReceivedWebhook[]>();
  for (const request of requests) {
    const k = key(request);
    const group = groups.get(k);
    if (group) group.push(request);
    else groups.set(k, [request]);
  }
  return groups;
}

/** Extra requests for one (event, endpoint) pair: allowed by at-least-once delivery, but counted. */
function duplicatesOf(requests: readonly ReceivedWebhook[]): number {
  return requests.length - new Set(requests.map((r) => `${r.eventId ?? r.webhookId} ${r.path}`)).size;
}

async function benchDeliveryLatency(ctx: BenchContext, receiver: WebhookReceiver) {
  const { settings, stack } = ctx;
  const client = stack.runtime.services.temporal.client;
  const count = settings.webhookExecutions;
  const concurrency = settings.webhookConcurrency;
  const warmup = settings.webhookWarmup;
  const label = 'webhooks latency';
  const workspace = await freshWorkspace(ctx, 'webhook-latency', concurrency);
  try {
    const path = '/latency';
    const endpoint = await workspace.api.createWebhook({
      url: `${receiver.url}${path}`,
      events: [EVENT],
      description: 'bench: delivery latency',
    });
    receiver.setSecret(path, endpoint.secret);
    await waitUntilNoneRunning(client, EXECUTIONS_QUERY);

    const measured: { executionId: string; triggered: number }[] = [];
    const operation = (measure: boolean) => async (index: number) => {
      const triggered = performance.now();
      const executionId = await workspace.api.trigger(WORKFLOW_ID, demoInput(index));
      if (measure) measured.push({ executionId, triggered });
      await receiver.waitForExecution(path, executionId, DELIVERY_TIMEOUT_MS);
    };
    if (warmup > 0) {
      progress(`${label}: warm-up (${warmup} executions)`);
      await runClosedLoop({ count: warmup, concurrency, operation: operation(false) });
    }
    progress(`${label}: ${count} executions at concurrency ${concurrency}, each waiting for its delivery`);
    const began = performance.now();
    const run = await runClosedLoop({ count, concurrency, operation: operation(true), firstIndex: warmup });
    progress(`${label}: ${run.latencies.length} delivered in ${Math.round(run.durationMs)} ms; draining`);
    const drained = await drainDeliveries(client, label);

    const ids = new Set(measured.map((m) => m.executionId));
    const requests = receiver
      .received()
      .filter((r) => r.path === path && r.executionId !== undefined && ids.has(r.executionId));
    const byExecution = groupBy(requests, (r) => r.executionId!);
    const closed = await closeTimes(client, workspace.id, ids);

    const deliveryLatencies: number[] = [];
    const triggerToReceipt: number[] = [];
    let missing = 0;
    let notCompleted = 0;
    let lastReceipt = began;
    for (const { executionId, triggered } of measured) {
      const close = closed.get(executionId);
      if (close?.status !== 'COMPLETED') notCompleted += 1;
      const first = byExecution.get(executionId)?.[0];
      if (!first) {
        missing += 1;
        continue;
      }
      lastReceipt = Math.max(lastReceipt, first.receivedPerf);
      triggerToReceipt.push(first.receivedPerf - triggered);
      if (close) deliveryLatencies.push(first.receivedAt - close.closeTime);
    }
    const wallMs = lastReceipt - began;
    return {
      executions: count,
      concurrency,
      warmup,
      triggered: measured.length,
      errors: run.errors,
      error_samples: run.errorSamples,
      not_completed: notCompleted,
      received: byExecution.size,
      missing,
      duplicates: duplicatesOf(requests),
      /** First measured trigger to the last receipt. */
      wall_ms: round(wallMs, 1),
      deliveries_per_sec: perSecond(byExecution.size, wallMs),
      /** Receipt at the receiver minus the execution's CloseTime in Temporal. */
      delivery_latency_ms: summarizeLatencies(deliveryLatencies),
      /** The trigger request's start to the receipt: the whole round trip one caller waits for. */
      trigger_to_receipt_ms: summarizeLatencies(triggerToReceipt),
      delivery_workflows_drained: drained,
    };
  } finally {
    await workspace.api.close();
  }
}

async function benchFanout(ctx: BenchContext, receiver: WebhookReceiver) {
  const { settings, stack } = ctx;
  const client = stack.runtime.services.temporal.client;
  const count = settings.webhookFanoutExecutions;
  const concurrency = settings.webhookConcurrency;
  const label = 'webhooks fanout';
  const workspace = await freshWorkspace(ctx, 'webhook-fanout', concurrency);
  try {
    const paths = Array.from({ length: settings.webhookFanoutEndpoints }, (_, i) => `/fanout/${i}`);
    for (const path of paths) {
      const endpoint = await workspace.api.createWebhook({
        url: `${receiver.url}${path}`,
        events: [EVENT],
        description: `bench: fan-out ${path}`,
      });
      receiver.setSecret(path, endpoint.secret);
    }
    await waitUntilNoneRunning(client, EXECUTIONS_QUERY);

    progress(`${label}: ${count} executions to ${paths.length} endpoints at concurrency ${concurrency}`);
    const executionIds: string[] = [];
    const began = performance.now();
    const run = await runClosedLoop({
      count,
      concurrency,
      operation: async (index) => {
        executionIds.push(await workspace.api.trigger(WORKFLOW_ID, demoInput(index)));
      },
    });
    const expected = executionIds.length * paths.length;
    progress(
      `${label}: ${executionIds.length} triggered in ${Math.round(run.durationMs)} ms; waiting for ${expected} deliveries`,
    );

    const pathSet = new Set(paths);
    const ids = new Set(executionIds);
    const relevant = () =>
      receiver
        .received()
        .filter((r) => pathSet.has(r.path) && r.executionId !== undefined && ids.has(r.executionId));
    const pairOf = (r: ReceivedWebhook) => `${r.executionId} ${r.path}`;
    const deadline = performance.now() + FANOUT_TIMEOUT_MS;
    while (new Set(relevant().map(pairOf)).size < expected && performance.now() < deadline)
      await sleep(POLL_INTERVAL_MS);
    progress(`${label}: ${new Set(relevant().map(pairOf)).size} of ${expected} received; draining`);
    const drained = await drainDeliveries(client, label);

    const requests = relevant();
    const byPair = groupBy(requests, pairOf);
    const closed = await closeTimes(client, workspace.id, ids);
    const deliveryLatencies: number[] = [];
    let lastReceipt = began;
    for (const [, [first]] of byPair) {
      lastReceipt = Math.max(lastReceipt, first!.receivedPerf);
      const close = closed.get(first!.executionId!);
      if (close) deliveryLatencies.push(first!.receivedAt - close.closeTime);
    }
    const wallMs = lastReceipt - began;
    const missing = expected - byPair.size;
    const duplicates = duplicatesOf(requests);
    return {
      executions: count,
      endpoints: paths.length,
      concurrency,
      triggered: executionIds.length,
      trigger_errors: run.errors,
      trigger_error_samples: run.errorSamples,
      trigger_duration_ms: round(run.durationMs, 1),
      not_completed: executionIds.filter((id) => closed.get(id)?.status !== 'COMPLETED').length,
      expected_deliveries: expected,
      received_requests: requests.length,
      /** Distinct (event, endpoint) pairs received. */
      delivered: byPair.size,
      missing,
      duplicates,
      every_pair_exactly_once: missing === 0 && duplicates === 0,
      /** One execution.completed event per execution: this should equal `triggered`. */
      distinct_event_ids: new Set(requests.map((r) => r.eventId)).size,
      /** First trigger to the last receipt of a distinct pair. */
      wall_ms: round(wallMs, 1),
      deliveries_per_sec: perSecond(byPair.size, wallMs),
      /** Receipt of each pair's first request minus its execution's CloseTime. */
      delivery_latency_ms: summarizeLatencies(deliveryLatencies),
      delivery_workflows_drained: drained,
    };
  } finally {
    await workspace.api.close();
  }
}

/** Over every request both parts received. */
function checkSignatures(requests: readonly ReceivedWebhook[]) {
  const count = (predicate: (r: ReceivedWebhook) => boolean) => requests.filter(predicate).length;
  const withHeaders = count((r) => r.headersPresent);
  const verified = count((r) => r.signatureValid === true);
  return {
    requests: requests.length,
    with_signature_headers: withHeaders,
    all_signature_headers_present: withHeaders === requests.length,
    /** webhook-id equals the payload's id. */
    webhook_id_matches_event_id: count((r) => r.webhookId !== undefined && r.webhookId === r.eventId),
    /** Verified by the `standardwebhooks` package with the endpoint's secret. */
    signatures_verified: verified,
    signatures_rejected: count((r) => r.signatureValid === false),
    /** To a path no endpoint secret was known for (none expected). */
    signatures_unchecked: count((r) => r.signatureValid === null),
    all_signatures_verified: verified === requests.length,
    /** Other than execution.completed (none expected: no endpoint subscribed to them). */
    unexpected_events: count((r) => r.event !== EVENT),
  };
}

export async function benchWebhooks(ctx: BenchContext) {
  const receiver = await startWebhookReceiver();
  try {
    const latency = await benchDeliveryLatency(ctx, receiver);
    const fanout = await benchFanout(ctx, receiver);
    return { latency, fanout, signatures: checkSignatures(receiver.received()) };
  } finally {
    await receiver.stop();
  }
}
