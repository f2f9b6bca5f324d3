/**
 * Waking waiting executions with events (docs/events.md#waiting-for-an-event, issue 27 point 5): the cost
 * of an event should grow with the waiters of its name in its workspace, not with all waiters. In a fresh
 * workspace (open executions unlimited), BENCH_EVENT_WAITERS executions of a one-step workflow wait for
 * `order.paid` with distinct order ids (`match: event.data.order_id = input.order_id`), beside
 * BENCH_EVENT_NOISE executions waiting for `order.shipped` (waiters of another name, which an `order.paid`
 * event must not pay for). Beside them, on a floor worker of its own (bench/workflows/events-floor.ts), as
 * many raw runs wait for a signal.
 *
 * - `setup`: how long the starts took, and until every wait was filed (event_waiters rows).
 * - `wake`: BENCH_EVENT_WAKES matching events, one at a time (BENCH_EVENT_WAKE_PAUSE_MS between), each
 *   timed from the start of its POST /v1/events until the woken execution's result (Temporal's long poll,
 *   started before the POST); beside it, in turn, the floor: a signal sent with the Temporal client to one
 *   of its waiting runs, timed until that run's result.
 * - `accept_batch_1`, `accept_batch_100`: BENCH_EVENT_BURST events of `order.paid` whose order ids no
 *   waiter holds, POSTed as fast as BENCH_EVENT_CONCURRENCY callers can, one event per request and then
 *   100 per request: accepted events per second; then, from the `events` table, that every accepted event
 *   is stored and dispatched (no loss), how fast the dispatcher went (first received_at to the last
 *   dispatched_at) and how much it still had to do when the burst ended.
 * - `wake_all`: every run still waiting is woken, the service's by events (100 per request, the noise by
 *   `order.shipped`), the floor's by signals (16 at once, as the dispatcher signals): runs per second until
 *   none is running. This also leaves the stack without open runs for what follows.
 */
import type { Client } from '@temporalio/client';
import { performance } from 'node:perf_hooks';
import type { Definition } from '../../core/definitions/schema';
import { EXECUTION_WORKFLOW_TYPE } from '../../core/execution-types';
import { WORKSPACE_ATTRIBUTE } from '../../core/search-attributes';
import { randomBase62 } from '../../platform/ids';
import { createApiKey } from '../../platform/store/api-keys';
import type { Queryable } from '../../platform/store/db';
import { setLimitOverrides } from '../../platform/store/workspace-limits';
import { createWorkspace } from '../../platform/store/workspaces';
import { startFloorWorker } from '../floor-process';
import { createApiClient, type ApiClient } from '../http-load';
import { runClosedLoop } from '../load';
import { progress } from '../stack';
import { perSecond, ratio, round, summarizeLatencies } from '../stats';
import { quote, sleep, waitUntilNoneRunning } from '../visibility';
import {
  EVENT_WAIT_FLOOR_WORKFLOW_TYPE,
  FLOOR_WOKE_SIGNAL,
  type EventWaitFloorInput,
} from '../workflows/events-floor';
import { intFromEnv, type BenchContext } from './common';

const PAID = 'order.paid';
const SHIPPED = 'order.shipped';
const PAID_WORKFLOW = 'bench-wait-order-paid';
const SHIPPED_WORKFLOW = 'bench-wait-order-shipped';
const FLOOR_TASK_QUEUE = 'events-floor';
const WAIT_TIMEOUT = '1h';
const WAIT_TIMEOUT_MS = 3_600_000;
/** How long filing every wait, or dispatching a burst, may take before the scenario gives up on it. */
const SETTLE_TIMEOUT_MS = 10 * 60_000;
const POLL_INTERVAL_MS = 100;
/** Events per request of the wake_all part, and requests in flight. */
const WAKE_ALL_BATCH = 100;
const WAKE_ALL_CONCURRENCY = 4;
/** Signals in flight in the floor's wake_all: what the dispatcher sends at once (src/events/wake.ts). */
const FLOOR_SIGNALS_AT_ONCE = 16;

export interface EventsSettings {
  /** Executions waiting for order.paid, and raw runs waiting on the floor (BENCH_EVENT_WAITERS). */
  waiters: number;
  /** Executions waiting for order.shipped (BENCH_EVENT_NOISE). */
  noise: number;
  /** Measured wakes of each side (BENCH_EVENT_WAKES). */
  wakes: number;
  /** Pause between two measured wakes (BENCH_EVENT_WAKE_PAUSE_MS). */
  wakePauseMs: number;
  /** Events of each accept burst (BENCH_EVENT_BURST). */
  burst: number;
  /** Requests in flight during the starts and the bursts (BENCH_EVENT_CONCURRENCY). */
  concurrency: number;
}

export function eventsSettingsFromEnv(): EventsSettings {
  const waiters = intFromEnv('BENCH_EVENT_WAITERS', 10_000);
  return {
    waiters,
    noise: intFromEnv('BENCH_EVENT_NOISE', 1_000, 0),
    wakes: Math.min(waiters, intFromEnv('BENCH_EVENT_WAKES', 200)),
    wakePauseMs: intFromEnv('BENCH_EVENT_WAKE_PAUSE_MS', 50, 0),
    burst: intFromEnv('BENCH_EVENT_BURST', 10_000, 100),
    concurrency: intFromEnv('BENCH_EVENT_CONCURRENCY', 32),
  };
}

/** One wait_for_event step: the whole execution waits for its order's event. */
function waitDefinition(id: string, event: string): Definition {
  return {
    id,
    name: `Benchmark: wait for ${event}`,
    input_schema: {
      type: 'object',
      required: ['order_id'],
      properties: { order_id: { type: 'string' } },
    },
    steps: [
      {
        id: 'payment',
        kind: 'wait_for_event',
        event,
        match: 'event.data.order_id = input.order_id',
        timeout: WAIT_TIMEOUT,
      },
    ],
  };
}

const orderId = (index: number) => `order-${index}`;
const noiseOrderId = (index: number) => `shipped-${index}`;

/** Retries what the service refused with 429 (backpressure) after a short pause; counts the refusals. */
async function retryRefusals<T>(operation: () => Promise<T>, refusals: { count: number }): Promise<T> {
  for (;;) {
    try {
      return await operation();
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('HTTP 429')) throw error;
      refusals.count += 1;
      await sleep(200);
    }
  }
}

/**
 * Sends events again when the connection was reset before an answer (the server's keep-alive timer, late
 * under load, races the client's next request on the socket): safe, since the events carry their ids and
 * an id sent again is the same event. Counts the resets.
 */
async function retryResets<T>(operation: () => Promise<T>, resets: { count: number }): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation();
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      const reset = code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || /ECONNRESET/.test(String(error));
      if (!reset || attempt >= 5) throw error;
      resets.count += 1;
    }
  }
}

/** Polls `read` until it returns true, or throws after `timeoutMs`. */
async function waitFor(what: string, read: () => Promise<boolean>, timeoutMs = SETTLE_TIMEOUT_MS) {
  const began = performance.now();
  while (!(await read())) {
    if (performance.now() - began > timeoutMs) throw new Error(`events: gave up waiting for ${what}`);
    await sleep(POLL_INTERVAL_MS);
  }
  return performance.now() - began;
}

async function countOf(db: Queryable, sql: string, params: unknown[]): Promise<number> {
  const [row] = await db.query<{ n: number }>(sql, params);
  return Number(row?.n ?? 0);
}

/** Open waits of the workspace (filed, not ended), by event name. */
async function openWaits(db: Queryable, workspaceId: string, name: string): Promise<number> {
  return countOf(
    db,
    'select count(*)::int as n from event_waiters where workspace_id = $1 and event_name = $2 and ended_at is null',
    [workspaceId, name],
  );
}

interface Workspace {
  id: string;
  api: ApiClient;
}

async function freshWorkspace(ctx: BenchContext, connections: number): Promise<Workspace> {
  const db = ctx.stack.runtime.services.db;
  const id = `bench-events-${randomBase62(8).toLowerCase()}`;
  await createWorkspace(db, id, 'Benchmark: events');
  // 10,000 waiting executions are far past the default open_executions limit (1,000).
  await setLimitOverrides(db, id, new Map([['open_executions', null]]));
  const { key } = await createApiKey(db, { workspaceId: id, name: 'bench', scopes: ['admin'] });
  const api = createApiClient(ctx.stack.baseUrl, key, connections);
  try {
    await api.createWorkflow(waitDefinition(PAID_WORKFLOW, PAID));
    await api.createWorkflow(waitDefinition(SHIPPED_WORKFLOW, SHIPPED));
  } catch (error) {
    await api.close();
    throw error;
  }
  return { id, api };
}

/** Runs `count` operations at `concurrency`, with a progress line every tenth. */
async function withProgress(
  label: string,
  count: number,
  concurrency: number,
  operation: (index: number) => Promise<void>,
) {
  const step = Math.max(1, Math.ceil(count / 10));
  let done = 0;
  return runClosedLoop({
    count,
    concurrency,
    operation: async (index) => {
      await operation(index);
      if (++done % step === 0) progress(`${label}: ${done} of ${count}`);
    },
  });
}

/** Triggers `count` executions of `workflow`, each for its own order; their execution ids by index. */
async function startWaiting(
  workspace: Workspace,
  workflow: string,
  count: number,
  order: (index: number) => string,
  settings: EventsSettings,
  refusals: { count: number },
): Promise<string[]> {
  const ids = new Array<string>(count);
  const run = await withProgress(
    `events: starting ${workflow}`,
    count,
    settings.concurrency,
    async (index) => {
      ids[index] = await retryRefusals(
        () => workspace.api.trigger(workflow, { order_id: order(index) }),
        refusals,
      );
    },
  );
  if (run.errors > 0)
    throw new Error(`events: ${run.errors} starts of ${workflow} failed: ${run.errorSamples.join('; ')}`);
  return ids;
}

async function startServiceWaiters(ctx: BenchContext, workspace: Workspace, settings: EventsSettings) {
  const db = ctx.stack.runtime.services.db;
  const refusals = { count: 0 };
  const began = performance.now();
  const paid = await startWaiting(workspace, PAID_WORKFLOW, settings.waiters, orderId, settings, refusals);
  const shipped = await startWaiting(
    workspace,
    SHIPPED_WORKFLOW,
    settings.noise,
    noiseOrderId,
    settings,
    refusals,
  );
  const startMs = performance.now() - began;
  progress(`events: ${settings.waiters + settings.noise} started; waiting until every wait is filed`);
  await waitFor('every wait to be filed', async () => {
    const [open, noise] = [
      await openWaits(db, workspace.id, PAID),
      await openWaits(db, workspace.id, SHIPPED),
    ];
    return open >= settings.waiters && noise >= settings.noise;
  });
  const filedMs = performance.now() - began;
  return {
    paid,
    shipped,
    report: {
      waiting_for_order_paid: settings.waiters,
      waiting_for_order_shipped: settings.noise,
      start_ms: round(startMs, 1),
      starts_per_sec: perSecond(settings.waiters + settings.noise, startMs),
      refused_with_429: refusals.count,
      /** The first start until every wait was in event_waiters. */
      all_waiting_ms: round(filedMs, 1),
    },
  };
}

const floorWorkflowId = (prefix: string, index: number) => `${prefix}-${index}`;

async function startFloorWaiters(client: Client, prefix: string, settings: EventsSettings) {
  const run = await withProgress(
    'events: starting floor runs waiting for a signal',
    settings.waiters,
    settings.concurrency,
    async (index) => {
      const args: [EventWaitFloorInput] = [{ timeoutMs: WAIT_TIMEOUT_MS }];
      await client.workflow.start(EVENT_WAIT_FLOOR_WORKFLOW_TYPE, {
        taskQueue: FLOOR_TASK_QUEUE,
        workflowId: floorWorkflowId(prefix, index),
        args,
      });
    },
  );
  if (run.errors > 0)
    throw new Error(`events: ${run.errors} floor starts failed: ${run.errorSamples.join('; ')}`);
  return {
    start_ms: round(run.durationMs, 1),
    starts_per_sec: perSecond(settings.waiters, run.durationMs),
  };
}

/** Waits until the run's first workflow task is done (it waits for its signal, as an execution waits). */
async function untilWaiting(client: Client, workflowId: string): Promise<void> {
  await waitFor(`${workflowId} to wait`, async () => {
    const { raw } = await client.workflow.getHandle(workflowId).describe();
    return !raw.pendingWorkflowTask && Number(raw.workflowExecutionInfo?.historyLength ?? 0) >= 3;
  });
}

/** The order indexes the wake part measures: spread over the waiters. */
function measuredIndexes(settings: EventsSettings): number[] {
  const stride = settings.waiters / settings.wakes;
  return Array.from({ length: settings.wakes }, (_, k) => Math.floor(k * stride));
}

async function benchWakes(
  ctx: BenchContext,
  workspace: Workspace,
  paid: readonly string[],
  floorPrefix: string,
  settings: EventsSettings,
) {
  const client = ctx.stack.runtime.services.temporal.client;
  const db = ctx.stack.runtime.services.db;
  const indexes = measuredIndexes(settings);
  for (const index of indexes) await untilWaiting(client, floorWorkflowId(floorPrefix, index));
  const service: number[] = [];
  const acceptMs: number[] = [];
  const floor: number[] = [];
  const wrongResults: string[] = [];
  const eventIds: string[] = [];
  const serviceWake = async (index: number) => {
    const eventId = `wake-${index}`;
    const result = client.workflow.getHandle(paid[index]!).result();
    const began = performance.now();
    await workspace.api.sendEvents({ id: eventId, name: PAID, data: { order_id: orderId(index) } });
    acceptMs.push(performance.now() - began);
    await result;
    service.push(performance.now() - began);
    eventIds.push(eventId);
  };
  const floorWake = async (index: number) => {
    const eventId = `wake-${index}`;
    const handle = client.workflow.getHandle(floorWorkflowId(floorPrefix, index));
    const result = handle.result() as Promise<string | null>;
    const began = performance.now();
    await handle.signal(FLOOR_WOKE_SIGNAL, eventId);
    const woke = await result;
    floor.push(performance.now() - began);
    if (woke !== eventId) wrongResults.push(`floor ${index}: ${String(woke)}`);
  };
  progress(`events: ${indexes.length} wakes of each side, one at a time, the sides in turn`);
  for (const [k, index] of indexes.entries()) {
    // The sides take turns going first, so that neither always follows the other's work.
    const order = k % 2 === 0 ? [serviceWake, floorWake] : [floorWake, serviceWake];
    for (const wake of order) {
      await wake(index);
      if (settings.wakePauseMs > 0) await sleep(settings.wakePauseMs);
    }
    if ((k + 1) % Math.max(1, Math.ceil(indexes.length / 5)) === 0)
      progress(`events: ${k + 1} of ${indexes.length} wakes`);
  }
  // Each wake event woke exactly its one execution (event_wakes).
  const woke = await countOf(
    db,
    'select count(*)::int as n from event_wakes where workspace_id = $1 and event_id = any($2::text[])',
    [workspace.id, eventIds],
  );
  const serviceSummary = summarizeLatencies(service);
  const floorSummary = summarizeLatencies(floor);
  return {
    wakes: indexes.length,
    pause_ms: settings.wakePauseMs,
    /** POST /v1/events start to the woken execution's result (Temporal's long poll). */
    event_to_result_ms: serviceSummary,
    /** The POST's own answer (202: the event is stored). */
    accept_ms: summarizeLatencies(acceptMs),
    /** The floor: signal with the Temporal client to the run's result. */
    floor_signal_to_result_ms: floorSummary,
    ratio: {
      p50: ratio(serviceSummary.p50, floorSummary.p50),
      p95: ratio(serviceSummary.p95, floorSummary.p95),
      p99: ratio(serviceSummary.p99, floorSummary.p99),
    },
    /** The target: one matching event wakes its run within 1 s at p99. */
    p99_within_1s: serviceSummary.p99 <= 1000,
    event_wakes_recorded: woke,
    floor_wrong_results: wrongResults,
  };
}

/** Accepted, stored and dispatched: the `events` rows of `ids`, from the database's clock. */
async function dispatchOf(db: Queryable, workspaceId: string, ids: readonly string[]) {
  const [row] = await db.query<{
    stored: number;
    dispatched: number;
    first_received: Date | null;
    last_received: Date | null;
    last_dispatched: Date | null;
    woke: number;
  }>(
    `select count(*)::int as stored, count(dispatched_at)::int as dispatched,
            min(received_at) as first_received, max(received_at) as last_received,
            max(dispatched_at) as last_dispatched,
            (select count(*)::int from event_wakes w where w.workspace_id = $1 and w.event_id = any($2::text[])) as woke
       from events where workspace_id = $1 and id = any($2::text[])`,
    [workspaceId, ids],
  );
  return row!;
}

async function benchAccept(ctx: BenchContext, workspace: Workspace, settings: EventsSettings, batch: number) {
  const db = ctx.stack.runtime.services.db;
  const label = `events: accept, ${batch} per request`;
  const requests = Math.ceil(settings.burst / batch);
  const accepted: string[] = [];
  let undispatchedAtEnd = 0;
  const resets = { count: 0 };
  progress(
    `${label}: ${settings.burst} events in ${requests} requests at concurrency ${settings.concurrency}`,
  );
  const run = await runClosedLoop({
    count: requests,
    concurrency: settings.concurrency,
    operation: async (request) => {
      const events = Array.from({ length: Math.min(batch, settings.burst - request * batch) }, (_, i) => {
        const n = request * batch + i;
        // An order nobody waits for: the dispatcher looks its waiters up among 10,000 and finds none.
        return { id: `burst${batch}-${n}`, name: PAID, data: { order_id: `unpaid-${batch}-${n}` } };
      });
      const body = batch === 1 ? events[0] : events;
      accepted.push(...(await retryResets(() => workspace.api.sendEvents(body), resets)));
    },
  });
  const burstEnd = performance.now();
  undispatchedAtEnd = accepted.length - (await dispatchOf(db, workspace.id, accepted)).dispatched;
  progress(`${label}: ${accepted.length} accepted in ${Math.round(run.durationMs)} ms; draining`);
  let drained = true;
  try {
    await waitFor(`${label} to be dispatched`, async () => {
      const { dispatched } = await dispatchOf(db, workspace.id, accepted);
      return dispatched >= accepted.length;
    });
  } catch (error) {
    drained = false;
    progress(error instanceof Error ? error.message : String(error));
  }
  const drainMs = performance.now() - burstEnd;
  const final = await dispatchOf(db, workspace.id, accepted);
  const dispatchWindowMs =
    final.first_received && final.last_dispatched
      ? final.last_dispatched.getTime() - final.first_received.getTime()
      : Number.NaN;
  const requestLatency = summarizeLatencies(run.latencies);
  return {
    events: settings.burst,
    per_request: batch,
    requests,
    concurrency: settings.concurrency,
    request_errors: run.errors,
    request_error_samples: run.errorSamples,
    /** Requests whose connection was reset before an answer, sent again (the same ids: the same events). */
    connection_resets_retried: resets.count,
    accepted: accepted.length,
    duration_ms: round(run.durationMs, 1),
    /** Events answered 202, per second of the burst. */
    accepted_per_sec: perSecond(accepted.length, run.durationMs),
    request_ms: requestLatency,
    /** The target: 1,000 events a second accepted, none lost. */
    target_1000_per_sec_met: perSecond(accepted.length, run.durationMs) >= 1000,
    stored: final.stored,
    dispatched: final.dispatched,
    lost: accepted.length - final.stored,
    no_loss: final.stored === accepted.length && final.dispatched === accepted.length,
    /** Accepted but not yet dispatched when the burst's last request was answered. */
    undispatched_at_burst_end: undispatchedAtEnd,
    /** The burst's end until the last of its events was dispatched. */
    drain_after_burst_ms: round(drainMs, 1),
    drained,
    /** Events dispatched per second: the first one's received_at to the last one's dispatched_at. */
    dispatched_per_sec: perSecond(final.dispatched, dispatchWindowMs),
    /** None expected: no waiter holds these order ids. */
    woke: final.woke,
  };
}

/** Wakes every service run still waiting with events, 100 per request; runs per second until none runs. */
async function wakeAllService(
  ctx: BenchContext,
  workspace: Workspace,
  settings: EventsSettings,
  measured: ReadonlySet<number>,
) {
  const client = ctx.stack.runtime.services.temporal.client;
  const events = [
    ...Array.from({ length: settings.waiters }, (_, index) => index)
      .filter((index) => !measured.has(index))
      .map((index) => ({ id: `all-${index}`, name: PAID, data: { order_id: orderId(index) } })),
    ...Array.from({ length: settings.noise }, (_, index) => ({
      id: `all-shipped-${index}`,
      name: SHIPPED,
      data: { order_id: noiseOrderId(index) },
    })),
  ];
  const requests = Math.ceil(events.length / WAKE_ALL_BATCH);
  progress(`events: waking the ${events.length} service runs still waiting (${WAKE_ALL_BATCH} per request)`);
  const resets = { count: 0 };
  const began = performance.now();
  const run = await runClosedLoop({
    count: requests,
    concurrency: WAKE_ALL_CONCURRENCY,
    operation: async (request) => {
      const body = events.slice(request * WAKE_ALL_BATCH, (request + 1) * WAKE_ALL_BATCH);
      await retryResets(() => workspace.api.sendEvents(body), resets);
    },
  });
  const acceptedMs = performance.now() - began;
  const query = `${WORKSPACE_ATTRIBUTE.name} = ${quote(workspace.id)} AND WorkflowType = ${quote(EXECUTION_WORKFLOW_TYPE)}`;
  await waitUntilNoneRunning(client, query, SETTLE_TIMEOUT_MS);
  const wallMs = performance.now() - began;
  const completed = (await client.workflow.count(`(${query}) AND ExecutionStatus = 'Completed'`)).count;
  return {
    runs: events.length,
    request_errors: run.errors,
    request_error_samples: run.errorSamples,
    connection_resets_retried: resets.count,
    accepted_ms: round(acceptedMs, 1),
    /** The first POST until no execution of the workspace is running. */
    wall_ms: round(wallMs, 1),
    runs_per_sec: perSecond(events.length, wallMs),
    /** Every execution of the workspace, the measured wakes' included. */
    completed,
  };
}

/** Signals every floor run still waiting, 16 at once; runs per second until none runs. */
async function wakeAllFloor(
  client: Client,
  prefix: string,
  settings: EventsSettings,
  measured: ReadonlySet<number>,
) {
  const remaining = Array.from({ length: settings.waiters }, (_, index) => index).filter(
    (index) => !measured.has(index),
  );
  progress(`events: signalling the ${remaining.length} floor runs still waiting`);
  const began = performance.now();
  const run = await runClosedLoop({
    count: remaining.length,
    concurrency: FLOOR_SIGNALS_AT_ONCE,
    operation: async (i) => {
      const index = remaining[i]!;
      await client.workflow
        .getHandle(floorWorkflowId(prefix, index))
        .signal(FLOOR_WOKE_SIGNAL, `all-${index}`);
    },
  });
  const signalledMs = performance.now() - began;
  const query = `WorkflowType = ${quote(EVENT_WAIT_FLOOR_WORKFLOW_TYPE)}`;
  await waitUntilNoneRunning(client, query, SETTLE_TIMEOUT_MS);
  const wallMs = performance.now() - began;
  return {
    runs: remaining.length,
    signal_errors: run.errors,
    signal_error_samples: run.errorSamples,
    signalled_ms: round(signalledMs, 1),
    wall_ms: round(wallMs, 1),
    runs_per_sec: perSecond(remaining.length, wallMs),
  };
}

export async function benchEvents(ctx: BenchContext, settings = eventsSettingsFromEnv()) {
  const client = ctx.stack.runtime.services.temporal.client;
  // The workspace and its workflows first: the floor worker's start (a process bundling its workflows) takes
  // the machine for a few seconds, and a definition's schema compiles under a time limit.
  const workspace = await freshWorkspace(ctx, settings.concurrency);
  progress('events: starting the floor worker');
  const floorWorker = await startFloorWorker({
    temporalAddress: ctx.stack.devServer.address,
    taskQueue: FLOOR_TASK_QUEUE,
    workflows: 'events-floor',
  }).catch(async (error: unknown) => {
    await workspace.api.close();
    throw error;
  });
  const floorPrefix = `events-floor-${randomBase62(6).toLowerCase()}`;
  try {
    const waiters = await startServiceWaiters(ctx, workspace, settings);
    const floorSetup = await startFloorWaiters(client, floorPrefix, settings);
    const wake = await benchWakes(ctx, workspace, waiters.paid, floorPrefix, settings);
    const acceptBatch1 = await benchAccept(ctx, workspace, settings, 1);
    const acceptBatch100 = await benchAccept(ctx, workspace, settings, 100);
    const measured = new Set(measuredIndexes(settings));
    const service = await wakeAllService(ctx, workspace, settings, measured);
    const floor = await wakeAllFloor(client, floorPrefix, settings, measured);
    return {
      settings,
      setup: { service: waiters.report, floor: floorSetup },
      wake,
      accept_batch_1: acceptBatch1,
      accept_batch_100: acceptBatch100,
      wake_all: { service, floor, ratio: ratio(service.runs_per_sec, floor.runs_per_sec) },
    };
  } finally {
    await workspace.api.close();
    await floorWorker.stop();
  }
}
