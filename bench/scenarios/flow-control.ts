/**
 * `flow-control` (docs/flow-control.md, ARCHITECTURE.md#flow-control): what admission costs, on the
 * in-process stack, in workspaces of its own (open executions unlimited). The flow is the onboard one
 * (bench/onboard/flow.ts): a rules step, then a POST to a local receiver that records when each call
 * arrived and was answered, and for which customer (the key).
 *
 * - `throughput`: the flow triggered BENCH_FC_RUNS (2,000) times per side at BENCH_FC_CONCURRENCY (20),
 *   once without flow control (`plain`) and once with `concurrency: {limit: BENCH_FC_LIMIT, key:
 *   "input.customer"}` over BENCH_FC_KEYS customers (`keyed`; 10 and 10: the limit binds little, so the
 *   figure is admission's own cost), after BENCH_FC_WARMUP (100) unmeasured runs of each, in BENCH_FC_ROUNDS
 *   (4) alternating rounds (A B, B A, ...). Each side: completions/s (first trigger to last close, as
 *   five_step_e2e) and CPU ms per run of this process (API, worker and load generator) and the dev server;
 *   the most runs the keyed side saw queued at once (the admissions table, every 250 ms).
 * - `admission`: a limit that binds: BENCH_FC_BOUND_RUNS (200) runs over BENCH_FC_BOUND_KEYS (5)
 *   customers, limit BENCH_FC_BOUND_LIMIT (2) per customer, the receiver answering after BENCH_FC_HOLD_MS
 *   (50 ms). The receiver holds every call until all runs are triggered and queued, so the queue never runs
 *   dry; then, per key, a queued run's call arrives after the call of the run whose place it took was
 *   answered: `handoff_ms` is that gap (the holder's end, its release, the grant, the signal, the next
 *   run's workflow task and its rules step: the real admission overhead). From the queued runs' histories:
 *   `queue_wait_ms` (run start to its `admitted` signal: the limit doing its job) and `signal_to_task_ms`
 *   (the signal to the workflow task that resumes the run). The admissions rows are deleted when a run
 *   ends, so the table keeps no times after the phase: the histories and the receiver give them.
 * - `throttle`: BENCH_FC_THROTTLE_RUNS (300) runs of one key with `throttle: {limit: BENCH_FC_THROTTLE_RATE
 *   (10), period: "1s"}`, triggered as fast as the API answers (faster than the throttle, so runs queue):
 *   the starts per second the database recorded (`throttle_starts`, polled) from the moment every trigger
 *   was answered to the last start, beside the limit; and the most starts in any 1 s.
 * - `fairness`: workspace A, its workspace's cap on open executions set to BENCH_FC_BACKLOG_LIMIT (5),
 *   triggers BENCH_FC_BACKLOG (10,000) runs of a plain flow, 32 triggers at once (BENCH_FC_BACKLOG_GATE=key:
 *   one concurrency key with that limit instead, its workspace unlimited); its receiver holds A's calls, so
 *   5 are open and the rest stay queued. Workspace B runs its own flow (a concurrency key of its own, one run
 *   at a time), BENCH_FC_SAMPLES (30) runs per phase, each trigger to result: alone first, then while A's
 *   triggers pour in, then while A's backlog is queued. Then A's calls are let through and the backlog
 *   drains: the admissions per second one workspace (or one hot key) sustains. `enqueue_ms`: A's first
 *   trigger until every A run had its row (workspace_admissions, or admissions).
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { Definition } from '../../core/definitions/schema';
import { ADMITTED_SIGNAL } from '../../core/flow-control';
import { WORKFLOW_ATTRIBUTE, WORKSPACE_ATTRIBUTE } from '../../core/search-attributes';
import { randomBase62 } from '../../platform/ids';
import { createApiKey } from '../../platform/store/api-keys';
import type { Queryable } from '../../platform/store/db';
import { setLimitOverrides } from '../../platform/store/workspace-limits';
import { createWorkspace } from '../../platform/store/workspaces';
import { listenOnLoopback } from '../../test/support/ports';
import { runToCompletion, summarizeCompletions, type CompletionRun } from '../completion';
import { createApiClient, type ApiClient } from '../http-load';
import { runClosedLoop } from '../load';
import { ProcessMeter } from '../proc';
import { progress } from '../stack';
import { perSecond, ratio, round, summarizeLatencies } from '../stats';
import { quote, sleep, waitUntilNoneRunning } from '../visibility';
import { onboardDefinition } from '../onboard/flow';
import { intFromEnv, split, type BenchContext } from './common';

const EventType = temporal.api.enums.v1.EventType;
/** A held call must outlast the phase that holds it (a connector attempt's default is shorter). */
const HELD_STEP_TIMEOUT = '15m';
const SETTLE_TIMEOUT_MS = 10 * 60_000;

export interface FlowControlSettings {
  runs: number;
  rounds: number;
  concurrency: number;
  warmup: number;
  keys: number;
  limit: number;
  boundRuns: number;
  boundKeys: number;
  boundLimit: number;
  holdMs: number;
  throttleRate: number;
  throttleRuns: number;
  backlog: number;
  backlogLimit: number;
  /** What holds A's backlog back: its workspace's cap (`workspace`) or one concurrency key (`key`). */
  backlogGate: 'workspace' | 'key';
  samples: number;
}

export function flowControlSettingsFromEnv(): FlowControlSettings {
  return {
    runs: intFromEnv('BENCH_FC_RUNS', 2000),
    rounds: intFromEnv('BENCH_FC_ROUNDS', 4),
    concurrency: intFromEnv('BENCH_FC_CONCURRENCY', 20),
    warmup: intFromEnv('BENCH_FC_WARMUP', 100, 0),
    keys: intFromEnv('BENCH_FC_KEYS', 10),
    limit: intFromEnv('BENCH_FC_LIMIT', 10),
    boundRuns: intFromEnv('BENCH_FC_BOUND_RUNS', 200),
    boundKeys: intFromEnv('BENCH_FC_BOUND_KEYS', 5),
    boundLimit: intFromEnv('BENCH_FC_BOUND_LIMIT', 2),
    holdMs: intFromEnv('BENCH_FC_HOLD_MS', 50, 0),
    throttleRate: intFromEnv('BENCH_FC_THROTTLE_RATE', 10),
    throttleRuns: intFromEnv('BENCH_FC_THROTTLE_RUNS', 300),
    backlog: intFromEnv('BENCH_FC_BACKLOG', 10_000),
    backlogLimit: intFromEnv('BENCH_FC_BACKLOG_LIMIT', 5),
    backlogGate: process.env['BENCH_FC_BACKLOG_GATE'] === 'key' ? 'key' : 'workspace',
    samples: intFromEnv('BENCH_FC_SAMPLES', 30),
  };
}

/** One call the receiver answered: its customer, and when (performance.now() of this process). */
interface TimedCall {
  key: string;
  arrived: number;
  answered: number;
}

/**
 * A third party that answers after `holdMs`, recording each call; while held (hold()), calls wait until
 * open(), then take their `holdMs` from there.
 */
async function startTimedReceiver(holdMs: number) {
  const calls: TimedCall[] = [];
  let arrived = 0;
  let gate: { opened: Promise<void>; open: () => void } | undefined;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = performance.now();
      arrived += 1;
      let key = '';
      try {
        key = String((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { name?: unknown }).name);
      } catch {
        // not a call of this scenario's flow
      }
      const answer = () =>
        setTimeout(() => {
          calls.push({ key, arrived: at, answered: performance.now() });
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"ok":true}');
        }, holdMs);
      if (gate) void gate.opened.then(answer);
      else answer();
    });
  });
  server.keepAliveTimeout = 60_000;
  server.maxConnections = 100_000;
  const port = await listenOnLoopback(server);
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    arrived: () => arrived,
    hold() {
      let open = () => undefined as void;
      const opened = new Promise<void>((resolve) => (open = resolve));
      gate = { opened, open };
    },
    open() {
      gate?.open();
      gate = undefined;
    },
    reset() {
      calls.length = 0;
      arrived = 0;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        gate?.open();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * The onboard flow (bench/onboard/flow.ts: a rules step, then a POST of the customer's name and tier),
 * triggered through the API rather than its hook, each call tried once; `extra` adds flow control.
 */
function flowDefinition(id: string, url: string, extra: Partial<Definition> = {}, held = false): Definition {
  const { trigger: _hook, input_schema: _schema, steps, ...onboard } = onboardDefinition(url);
  return {
    ...onboard,
    id,
    name: `Benchmark: flow control (${id})`,
    ...extra,
    steps: steps.map((step) =>
      step.kind === 'connector'
        ? { ...step, retry: { max_attempts: 1 }, ...(held ? { timeout: HELD_STEP_TIMEOUT } : {}) }
        : step,
    ),
  };
}

const input = (n: number, keys: number) => ({
  customer: `customer-${n % keys}`,
  plan: n % 2 === 0 ? 'enterprise' : 'pro',
  n,
});

interface Workspace {
  id: string;
  api: ApiClient;
}

async function freshWorkspace(ctx: BenchContext, label: string, connections: number): Promise<Workspace> {
  const db = ctx.stack.runtime.services.db;
  const id = `bench-fc-${label}-${randomBase62(6).toLowerCase()}`;
  await createWorkspace(db, id, `Benchmark: flow control ${label}`);
  await setLimitOverrides(db, id, new Map([['open_executions', null]]));
  const { key } = await createApiKey(db, { workspaceId: id, name: 'bench', scopes: ['admin'] });
  return { id, api: createApiClient(ctx.stack.baseUrl, key, connections) };
}

const executionsOf = (workspaceId: string, workflowId: string) =>
  `${WORKSPACE_ATTRIBUTE.name} = ${quote(workspaceId)} AND ${WORKFLOW_ATTRIBUTE.name} = ${quote(workflowId)}`;

async function admissionRows(db: Queryable, workspaceId: string, workflowId: string, state?: string) {
  const [row] = await db.query<{ n: number }>(
    `select count(*)::int as n from admissions where workspace_id = $1 and workflow_id = $2${state ? ' and state = $3' : ''}`,
    state ? [workspaceId, workflowId, state] : [workspaceId, workflowId],
  );
  return Number(row?.n ?? 0);
}

/** Rows of a workspace's cap (the runs that asked for a place), or those in `state`. */
async function workspaceCapRows(db: Queryable, workspaceId: string, state?: string) {
  const [row] = await db.query<{ n: number }>(
    `select count(*)::int as n from workspace_admissions where workspace_id = $1${state ? ' and state = $2' : ''}`,
    state ? [workspaceId, state] : [workspaceId],
  );
  return Number(row?.n ?? 0);
}

async function waitFor(what: string, read: () => Promise<boolean> | boolean, timeoutMs = SETTLE_TIMEOUT_MS) {
  const began = performance.now();
  while (!(await read())) {
    if (performance.now() - began > timeoutMs) throw new Error(`flow-control: gave up waiting for ${what}`);
    await sleep(50);
  }
  return performance.now() - began;
}

/** Part 1: the same flow with and without a concurrency key that binds little, alternating rounds. */
async function benchThroughput(ctx: BenchContext, ws: Workspace, settings: FlowControlSettings) {
  const { client } = ctx.stack.runtime.services.temporal;
  const db = ctx.stack.runtime.services.db;
  const receiver = await startTimedReceiver(0);
  const pids = { bench: process.pid, dev_server: ctx.stack.devServer.process.pid! };
  try {
    const plain = flowDefinition('fc-plain', receiver.url);
    const keyed = flowDefinition('fc-keyed', receiver.url, {
      concurrency: { limit: settings.limit, key: 'input.customer' },
    });
    await ws.api.createWorkflow(plain);
    await ws.api.createWorkflow(keyed);
    interface Side {
      id: string;
      next: number;
      runs: CompletionRun[];
      cpuMs: Record<string, number>;
      maxQueued: number;
    }
    const sides: Side[] = [plain, keyed].map((d) => ({
      id: d.id,
      next: 0,
      runs: [],
      cpuMs: {},
      maxQueued: 0,
    }));
    const batch = async (side: Side, count: number, measured: boolean) => {
      const firstIndex = side.next;
      side.next += count;
      const meter = new ProcessMeter(pids);
      meter.start();
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          side.maxQueued = Math.max(side.maxQueued, await admissionRows(db, ws.id, side.id, 'queued'));
          await sleep(250);
        }
      })();
      const run = await runToCompletion({
        client,
        label: `flow-control ${side.id}${measured ? '' : ' (warm-up)'}`,
        query: executionsOf(ws.id, side.id),
        count,
        concurrency: settings.concurrency,
        firstIndex,
        start: (n) => ws.api.trigger(side.id, input(n, settings.keys)),
      });
      sampling = false;
      await sampler;
      const usage = meter.stop();
      if (!measured) return;
      side.runs.push(run);
      for (const [name, ms] of Object.entries(usage.cpu_ms)) side.cpuMs[name] = (side.cpuMs[name] ?? 0) + ms;
    };
    if (settings.warmup > 0) for (const side of sides) await batch(side, settings.warmup, false);
    for (const side of sides) side.maxQueued = 0;
    for (const [index, size] of split(settings.runs, settings.rounds).entries())
      for (const side of index % 2 === 0 ? sides : [...sides].reverse()) await batch(side, size, true);

    const figures = sides.map((side) => {
      const summary = summarizeCompletions(side.runs);
      const total = Object.values(side.cpuMs).reduce((sum, ms) => sum + ms, 0);
      const perRun = Object.fromEntries(
        Object.entries({ ...side.cpuMs, total }).map(([name, ms]) => [
          name,
          round(ms / Math.max(1, summary.completed), 3),
        ]),
      );
      return { ...summary, cpu_ms_per_run: perRun, max_queued: side.maxQueued };
    });
    const [off, on] = figures as [(typeof figures)[number], (typeof figures)[number]];
    return {
      runs: settings.runs,
      rounds: split(settings.runs, settings.rounds).length,
      concurrency: settings.concurrency,
      warmup: settings.warmup,
      keys: settings.keys,
      limit: settings.limit,
      plain: off,
      keyed: on,
      /** keyed over plain: completions/s (the goal: 0.9 at least), CPU per run, latencies. */
      keyed_vs_plain: {
        completed_per_sec: ratio(on.completed_per_sec, off.completed_per_sec),
        cpu_ms_per_run: ratio(on.cpu_ms_per_run['total'] ?? NaN, off.cpu_ms_per_run['total'] ?? NaN),
        cpu_ms_added_per_run: round(
          (on.cpu_ms_per_run['total'] ?? NaN) - (off.cpu_ms_per_run['total'] ?? NaN),
        ),
        latency_p50: ratio(on.execution_latency_ms.p50, off.execution_latency_ms.p50),
        latency_p99: ratio(on.execution_latency_ms.p99, off.execution_latency_ms.p99),
      },
    };
  } finally {
    await receiver.stop();
  }
}

const eventMs = (event: temporal.api.history.v1.IHistoryEvent) =>
  Number(event.eventTime!.seconds) * 1000 + (event.eventTime!.nanos ?? 0) / 1e6;

/**
 * From a run's history: its start to its `admitted` signal, and the signal to the workflow task that
 * resumed it; undefined when it was never signaled (it had its place at once).
 */
async function queueTimes(client: Client, executionId: string) {
  const history = await client.workflow.getHandle(executionId).fetchHistory();
  const events = history.events ?? [];
  const started = events[0];
  const signal = events.findIndex(
    (event) =>
      event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED &&
      event.workflowExecutionSignaledEventAttributes?.signalName === ADMITTED_SIGNAL,
  );
  if (!started || signal < 0) return undefined;
  const resumed = events
    .slice(signal + 1)
    .find((event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED);
  return {
    wait: eventMs(events[signal]!) - eventMs(started),
    toTask: resumed ? eventMs(resumed) - eventMs(events[signal]!) : undefined,
  };
}

/**
 * Per key, the k-th call of a queued run (k >= limit, in order of arrival) took the place of the run whose
 * call was answered (k - limit)-th: the gap between the two.
 */
function handoffs(calls: readonly TimedCall[], limit: number): number[] {
  const byKey = new Map<string, TimedCall[]>();
  for (const call of calls) byKey.set(call.key, [...(byKey.get(call.key) ?? []), call]);
  const gaps: number[] = [];
  for (const keyed of byKey.values()) {
    const arrivals = keyed.map((call) => call.arrived).sort((a, b) => a - b);
    const answers = keyed.map((call) => call.answered).sort((a, b) => a - b);
    for (let k = limit; k < arrivals.length; k++) gaps.push(arrivals[k]! - answers[k - limit]!);
  }
  return gaps;
}

/** Part 2: a limit that binds; the hand-off from a run's end to the next run's call, and the queue times. */
async function benchAdmission(ctx: BenchContext, ws: Workspace, settings: FlowControlSettings) {
  const { client } = ctx.stack.runtime.services.temporal;
  const db = ctx.stack.runtime.services.db;
  const { boundRuns: runs, boundKeys: keys, boundLimit: limit, holdMs } = settings;
  const receiver = await startTimedReceiver(holdMs);
  const id = 'fc-bound';
  try {
    await ws.api.createWorkflow(
      flowDefinition(id, receiver.url, { concurrency: { limit, key: 'input.customer' } }, true),
    );
    const places = Math.min(runs, keys * limit);
    receiver.hold();
    progress(
      `flow-control admission: ${runs} runs over ${keys} keys, limit ${limit}, calls held ${holdMs} ms`,
    );
    const ids: string[] = [];
    const triggered = await runClosedLoop({
      count: runs,
      concurrency: settings.concurrency,
      operation: async (n) => {
        ids.push(await ws.api.trigger(id, input(n, keys)));
      },
    });
    await waitFor('every run to be enqueued', async () => (await admissionRows(db, ws.id, id)) >= ids.length);
    await waitFor('the open runs to call', () => receiver.arrived() >= places);
    const opened = performance.now();
    receiver.open();
    await waitFor('every call', () => receiver.calls.length >= ids.length);
    const drainMs = performance.now() - opened;
    await waitUntilNoneRunning(client, executionsOf(ws.id, id));
    const gaps = handoffs(receiver.calls, limit);
    const waits: number[] = [];
    const toTask: number[] = [];
    for (const executionId of ids) {
      const times = await queueTimes(client, executionId);
      if (!times) continue;
      waits.push(times.wait);
      if (times.toTask !== undefined) toTask.push(times.toTask);
    }
    return {
      runs,
      keys,
      limit,
      hold_ms: holdMs,
      trigger_errors: triggered.errors,
      trigger_error_samples: triggered.errorSamples,
      calls: receiver.calls.length,
      /** A place freed (the holder's call answered) to the next run's call arriving. */
      handoff_ms: summarizeLatencies(gaps),
      /** Queued runs (signaled): start to the `admitted` signal. */
      queue_wait_ms: summarizeLatencies(waits),
      /** The `admitted` signal to the workflow task that resumed the run. */
      signal_to_task_ms: summarizeLatencies(toTask),
      /** The queued calls once released, per second, and what the limit allows with no overhead. */
      drain_calls_per_sec: perSecond(receiver.calls.length - places, drainMs),
      ideal_calls_per_sec: holdMs > 0 ? round((keys * limit * 1000) / holdMs) : null,
    };
  } finally {
    await receiver.stop();
  }
}

/**
 * The starts of a workspace's throttles as the database recorded them (`throttle_starts`, one row per start,
 * kept at least one period): every `started_at` seen, with its number of rows (one grant writes its starts
 * with one timestamp), merged over the polls.
 */
async function recordStarts(db: Queryable, workspaceId: string, seen: Map<number, number>) {
  const rows = await db.query<{ started_at: Date; n: number }>(
    'select started_at, count(*)::int as n from throttle_starts where workspace_id = $1 group by started_at',
    [workspaceId],
  );
  for (const row of rows) {
    const at = row.started_at.getTime();
    seen.set(at, Math.max(seen.get(at) ?? 0, Number(row.n)));
  }
}

/**
 * Part 3: a throttle of `rate` per second on one key. Its starts (the database's times) while runs were
 * queued behind it (from the moment every trigger was answered, when the queue is longest, to the last
 * start), and the most starts in any 1 s (at most `rate` if the throttle holds).
 */
async function benchThrottle(ctx: BenchContext, ws: Workspace, settings: FlowControlSettings) {
  const { client } = ctx.stack.runtime.services.temporal;
  const db = ctx.stack.runtime.services.db;
  const { throttleRate: rate, throttleRuns: runs } = settings;
  const receiver = await startTimedReceiver(0);
  const id = 'fc-throttle';
  const seen = new Map<number, number>();
  let polling = true;
  const poller = (async () => {
    while (polling) {
      await recordStarts(db, ws.id, seen);
      await sleep(200);
    }
  })();
  try {
    await ws.api.createWorkflow(
      flowDefinition(id, receiver.url, { throttle: { limit: rate, period: '1s', key: 'input.customer' } }),
    );
    progress(`flow-control throttle: ${runs} runs of one key, ${rate} per second`);
    const triggered = await runClosedLoop({
      count: runs,
      concurrency: settings.concurrency,
      operation: (n) => ws.api.trigger(id, input(n, 1)),
    });
    const triggersDone = Date.now();
    const [queued] = await db.query<{ n: number }>(
      `select count(*)::int as n from throttle_waits where workspace_id = $1 and state = 'queued'`,
      [ws.id],
    );
    await waitFor('every throttled call', () => receiver.calls.length >= triggered.latencies.length);
    await waitUntilNoneRunning(client, executionsOf(ws.id, id));
    polling = false;
    await poller;
    await recordStarts(db, ws.id, seen);
    const starts = [...seen.entries()].flatMap(([at, n]) => Array<number>(n).fill(at)).sort((x, y) => x - y);
    let most = 0;
    for (let i = 0, j = 0; i < starts.length; i++) {
      while (starts[i]! - starts[j]! >= 1000) j++;
      most = Math.max(most, i - j + 1);
    }
    const backlogged = starts.filter((at) => at > triggersDone);
    const backlogMs = backlogged.length > 0 ? backlogged[backlogged.length - 1]! - triggersDone : 0;
    const achieved = perSecond(backlogged.length, backlogMs);
    return {
      runs,
      limit_per_sec: rate,
      trigger_errors: triggered.errors,
      trigger_ms: round(triggered.durationMs, 1),
      triggers_per_sec: perSecond(triggered.latencies.length, triggered.durationMs),
      /** Runs waiting for the throttle when every trigger had been answered. */
      queued_when_triggers_done: Number(queued?.n ?? 0),
      starts: {
        /** Starts the database recorded (every run's, if the polls saw them all). */
        count: starts.length,
        /** From every trigger answered to the last start: starts per second while runs were queued. */
        backlog_ms: round(backlogMs, 1),
        achieved_per_sec: achieved,
        achieved_vs_limit: ratio(achieved, rate),
        /** The most starts within any 1 s: at most the limit. */
        most_in_any_second: most,
      },
      within_10_percent: achieved > 0 && Math.abs(achieved / rate - 1) <= 0.1,
    };
  } finally {
    polling = false;
    await poller;
    await receiver.stop();
  }
}

/** Part 4: workspace B's runs beside workspace A's backlog, queued on A's workspace cap (or one hot key). */
async function benchFairness(ctx: BenchContext, settings: FlowControlSettings) {
  const { client } = ctx.stack.runtime.services.temporal;
  const db = ctx.stack.runtime.services.db;
  const backlogConcurrency = 32;
  const a = await freshWorkspace(ctx, 'a', backlogConcurrency);
  const b = await freshWorkspace(ctx, 'b', 1);
  const slow = await startTimedReceiver(0);
  const fast = await startTimedReceiver(0);
  const aId = 'fc-backlog';
  const bId = 'fc-b';
  try {
    // A's backlog queues on its workspace's cap of `backlogLimit` open executions (a plain definition), or
    // on one concurrency key with that limit (BENCH_FC_BACKLOG_GATE=key).
    const byWorkspace = settings.backlogGate === 'workspace';
    if (byWorkspace) await setLimitOverrides(db, a.id, new Map([['open_executions', settings.backlogLimit]]));
    await a.api.createWorkflow(
      flowDefinition(
        aId,
        slow.url,
        byWorkspace ? {} : { concurrency: { limit: settings.backlogLimit, key: 'input.customer' } },
        true,
      ),
    );
    const rowsOfA = (state?: string) =>
      byWorkspace ? workspaceCapRows(db, a.id, state) : admissionRows(db, a.id, aId, state);
    await b.api.createWorkflow(
      flowDefinition(bId, fast.url, { concurrency: { limit: settings.backlogLimit, key: 'input.customer' } }),
    );
    let n = 0;
    const runB = async () => {
      const began = performance.now();
      const executionId = await b.api.trigger(bId, input(n++, 10));
      await client.workflow.getHandle(executionId).result();
      return performance.now() - began;
    };
    const sampleB = async (until: () => boolean = () => false) => {
      const samples: number[] = [];
      while (samples.length < settings.samples && !until()) samples.push(await runB());
      return samples;
    };
    progress(`flow-control fairness: ${settings.samples} runs of B alone`);
    for (let i = 0; i < 3; i++) await runB();
    const alone = await sampleB();

    progress(
      `flow-control fairness: A triggers ${settings.backlog} runs (${byWorkspace ? 'its workspace capped at' : 'one key, limit'} ${settings.backlogLimit})`,
    );
    slow.hold();
    const began = performance.now();
    let accepted = false;
    const triggering = runClosedLoop({
      count: settings.backlog,
      concurrency: backlogConcurrency,
      operation: async (k) => {
        await a.api.trigger(aId, { customer: 'hot', plan: 'pro', n: k });
        if ((k + 1) % 2000 === 0) progress(`flow-control fairness: ${k + 1} of A's triggers sent`);
      },
    }).then((run) => {
      accepted = true;
      return run;
    });
    const duringTriggers = await sampleB(() => accepted);
    const triggered = await triggering;
    const triggerMs = performance.now() - began;
    await waitFor("A's runs to be enqueued", async () => (await rowsOfA()) >= triggered.latencies.length);
    const enqueueMs = performance.now() - began;
    const queuedAtStart = await rowsOfA('queued');
    progress(
      `flow-control fairness: ${queuedAtStart} of A queued; ${settings.samples} runs of B beside them`,
    );
    const besideBacklog = await sampleB();
    const queuedAtEnd = await rowsOfA('queued');

    progress(`flow-control fairness: A's backlog drains`);
    const drainBegan = performance.now();
    slow.open();
    await waitFor(
      "A's backlog to drain",
      () => slow.calls.length >= triggered.latencies.length,
      3 * SETTLE_TIMEOUT_MS,
    );
    const drainMs = performance.now() - drainBegan;
    await waitUntilNoneRunning(client, executionsOf(a.id, aId), SETTLE_TIMEOUT_MS);
    const aloneSummary = summarizeLatencies(alone);
    const besideSummary = summarizeLatencies(besideBacklog);
    const duringSummary = summarizeLatencies(duringTriggers);
    return {
      backlog: settings.backlog,
      limit: settings.backlogLimit,
      gate: settings.backlogGate,
      trigger_concurrency: backlogConcurrency,
      trigger_errors: triggered.errors,
      trigger_error_samples: triggered.errorSamples,
      /** A's triggers: all answered 202. */
      trigger_ms: round(triggerMs, 1),
      triggers_per_sec: perSecond(triggered.latencies.length, triggerMs),
      /** A's first trigger until every A run had its admissions row. */
      enqueue_ms: round(enqueueMs, 1),
      queued_when_b_began: queuedAtStart,
      queued_when_b_ended: queuedAtEnd,
      b_alone_ms: aloneSummary,
      b_during_a_triggers_ms: duringSummary,
      b_beside_backlog_ms: besideSummary,
      /** B beside A's queued backlog over B alone: the goal is near 1. */
      beside_backlog_vs_alone: {
        p50: ratio(besideSummary.p50, aloneSummary.p50),
        p99: ratio(besideSummary.p99, aloneSummary.p99),
      },
      during_a_triggers_vs_alone: {
        p50: ratio(duringSummary.p50, aloneSummary.p50),
        p99: ratio(duringSummary.p99, aloneSummary.p99),
      },
      /** A's backlog let through: its calls per second (the admissions one workspace, or one hot key, sustains). */
      drain_ms: round(drainMs, 1),
      drain_per_sec: perSecond(slow.calls.length, drainMs),
    };
  } finally {
    await a.api.close();
    await b.api.close();
    await slow.stop();
    await fast.stop();
  }
}

export async function benchFlowControl(ctx: BenchContext, settings = flowControlSettingsFromEnv()) {
  const began = performance.now();
  const ws = await freshWorkspace(ctx, 'main', settings.concurrency);
  try {
    const throughput = await benchThroughput(ctx, ws, settings);
    progress(
      `flow-control: plain ${throughput.plain.completed_per_sec}/s, keyed ${throughput.keyed.completed_per_sec}/s ` +
        `(${throughput.keyed_vs_plain.completed_per_sec}×)`,
    );
    const admission = await benchAdmission(ctx, ws, settings);
    const throttle = await benchThrottle(ctx, ws, settings);
    const fairness = await benchFairness(ctx, settings);
    return {
      settings,
      throughput,
      admission,
      throttle,
      fairness,
      duration_s: Math.round((performance.now() - began) / 1000),
    };
  } finally {
    await ws.api.close();
  }
}
