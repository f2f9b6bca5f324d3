/**
 * `fairness`: one workspace's flood of slow runs must not hold up another workspace's run.
 * Workspace B runs a one-connector-step workflow against a receiver that answers at once, one run at a
 * time: first on a quiet service (its idle latency), then while workspace A floods the service with
 * BENCH_FAIRNESS_FLOOD (2,000) runs of a one-connector-step workflow whose receiver answers after
 * BENCH_FAIRNESS_SLOW_MS (2,000 ms). Each B run is timed from its trigger to its result (Temporal).
 * The figure is the ratio of B's median latency under the flood to its median on a quiet service.
 * "Under the flood": B runs that began and ended while A's triggers were still coming in (the API paces
 * them by how fast the worker takes runs up: src/flow-control/admission.ts) or, once all were accepted,
 * while at least a tenth of A's runs were unanswered; both parts are also reported apart. Other sizes: BENCH_FAIRNESS_SAMPLES (B runs per phase, 20),
 * BENCH_FAIRNESS_CONCURRENCY (A's triggers in flight, 32).
 *
 * BENCH_FAIRNESS_DEBUG=1 prints the event times of B's runs (and of some of A's) on stderr.
 *
 * measureFairness is also what test/load/fairness.test.ts runs, with a smaller flood and a looser bound.
 */
import { performance } from 'node:perf_hooks';
import type { Client } from '@temporalio/client';
import type { Definition } from '../../core/definitions/schema';
import { newApiKey } from '../../platform/ids';
import { createApiKey } from '../../platform/store/api-keys';
import type { Queryable } from '../../platform/store/db';
import { setLimitOverrides } from '../../platform/store/workspace-limits';
import { createWorkspace } from '../../platform/store/workspaces';
import { WORKSPACE_ATTRIBUTE } from '../../core/search-attributes';
import { createApiClient } from '../http-load';
import { runClosedLoop } from '../load';
import { startReceiver, startSlowReceiver } from '../receiver';
import { ratio, summarizeLatencies } from '../stats';
import { quote, sleep, waitUntilNoneRunning } from '../visibility';
import { intFromEnv, type BenchContext } from './common';

export interface FairnessOptions {
  /** The service's database (to create the two workspaces and lift A's open-executions limit). */
  db: Queryable;
  /** Temporal client of the service's namespace (B's results, and waiting for the flood to drain). */
  client: Client;
  /** Base URL of the API. */
  baseUrl: string;
  /** A's runs. */
  flood: number;
  /** A's triggers in flight at once. */
  floodConcurrency: number;
  /** How long A's receiver takes to answer. */
  slowMs: number;
  /** B's measured runs per phase. */
  samples: number;
  /** Where progress lines go. */
  progress?: (message: string) => void;
}

export interface FairnessResult {
  flood: number;
  slow_ms: number;
  flood_trigger_errors: number;
  flood_trigger_error_samples: string[];
  /** B alone, trigger to result. */
  idle_latency_ms: ReturnType<typeof summarizeLatencies>;
  /** B while the flood went on (both parts below): trigger to result. */
  under_flood_latency_ms: ReturnType<typeof summarizeLatencies>;
  /** The part of them while A's triggers were still pouring into the API (same process, same admission gate). */
  during_flood_triggers_latency_ms: ReturnType<typeof summarizeLatencies>;
  /** The part once A's runs were all accepted, while at least a tenth of them were unanswered. */
  after_flood_accepted_latency_ms: ReturnType<typeof summarizeLatencies>;
  /** Runs of A not yet answered by its receiver when each counted B run began (median, min). */
  flood_in_flight_at_b_start: { p50: number; min: number };
  /** B runs left out: they ended after the flood had mostly drained. */
  b_runs_after_flood: number;
  /** B triggers the API refused (429 after waiting for their turn), left out of the latencies. */
  b_triggers_refused: number;
  b_refusal_samples: string[];
  p50_ratio: number | null;
  p90_ratio: number | null;
  /** From A's first trigger until every A run had closed. */
  flood_drain_ms: number;
}

/** One connector step POSTing to `url`, not retried. */
function oneCall(id: string, url: string): Definition {
  return {
    id,
    name: `Benchmark: one call to ${url}`,
    steps: [
      {
        id: 'call',
        kind: 'connector',
        connector: 'http',
        request: { method: 'POST', url, body: { n: '{{ input.n }}' } },
        retry: { max_attempts: 1 },
      },
    ],
  };
}

async function newWorkspace(db: Queryable, label: string): Promise<{ id: string; key: string }> {
  const id = `bench-fair-${label}-${newApiKey().slice(3, 11).toLowerCase()}`;
  await createWorkspace(db, id, `Benchmark fairness ${label}`);
  return { id, key: (await createApiKey(db, { workspaceId: id, name: 'bench', scopes: ['admin'] })).key };
}

export async function measureFairness(options: FairnessOptions): Promise<FairnessResult> {
  const say = options.progress ?? (() => undefined);
  const { client, db } = options;
  const slow = await startSlowReceiver(options.slowMs);
  const fast = await startReceiver();
  const a = await newWorkspace(db, 'a');
  const b = await newWorkspace(db, 'b');
  // The operator lets A keep its whole flood open at once (`npm run admin`): the flood is the point.
  await setLimitOverrides(db, a.id, new Map([['open_executions', null]]));
  const apiA = createApiClient(options.baseUrl, a.key, options.floodConcurrency);
  const apiB = createApiClient(options.baseUrl, b.key, 1);
  try {
    await apiA.createWorkflow(oneCall('fairness-slow', slow.url));
    await apiB.createWorkflow(oneCall('fairness-fast', `${fast.url}/fast`));

    const describeRun = async (id: string): Promise<string> => {
      const history = await client.workflow.getHandle(id).fetchHistory();
      const at = (e: NonNullable<typeof history.events>[number]) =>
        Number(e.eventTime!.seconds) * 1000 + e.eventTime!.nanos! / 1e6;
      const t0 = at(history.events![0]!);
      return history.events!.map((e) => `${e.eventType}@${Math.round(at(e) - t0)}`).join(' ');
    };
    let refused = 0;
    const refusals: string[] = [];
    /** B's run, trigger to result; undefined when the API refused the trigger (429 after waiting its turn). */
    const runB = async (n: number): Promise<number | undefined> => {
      const started = performance.now();
      let id: string;
      try {
        id = await apiB.trigger('fairness-fast', { n });
      } catch (error) {
        refused += 1;
        if (refusals.length < 3) refusals.push((error as Error).message.slice(0, 200));
        return undefined;
      }
      await client.workflow.getHandle(id).result();
      const took = performance.now() - started;
      if (process.env['BENCH_FAIRNESS_DEBUG'])
        say(`B ${n}: ${Math.round(took)} ms: ${await describeRun(id)}`);
      return took;
    };

    say(`fairness: ${options.samples} runs of B on a quiet service`);
    for (let i = 0; i < 3; i++) await runB(i); // warm-up
    const idle: number[] = [];
    for (let i = 0; i < options.samples; i++) {
      const latency = await runB(i);
      if (latency !== undefined) idle.push(latency);
    }

    say(`fairness: A floods ${options.flood} runs answered after ${options.slowMs} ms; B runs beside them`);
    const floodBegan = performance.now();
    let triggered = 0;
    const flooding = runClosedLoop({
      count: options.flood,
      concurrency: options.floodConcurrency,
      operation: async (n) => {
        await apiA.trigger('fairness-slow', { n });
        triggered += 1;
      },
    });
    const inFlight = () => triggered - slow.answered();
    // "Under the flood": at least a tenth of it unanswered by A's receiver (and at least one run).
    const floodThreshold = Math.max(1, Math.floor(options.flood / 10));
    let accepted = false;
    void flooding.then(() => (accepted = true));
    // The flood is under way once a tenth of it came in.
    while (triggered < floodThreshold && !accepted) await sleep(20);

    // B runs one at a time while the flood lasts: first while A's triggers still pour into the API
    // (they share its process and admission gate with B's), then while A's accepted runs are in flight.
    const duringTriggers: number[] = [];
    const afterAccepted: number[] = [];
    const inFlightAtStart: number[] = [];
    let afterFlood = 0;
    const floodGoesOn = () => !accepted || inFlight() >= floodThreshold;
    for (let i = 0; duringTriggers.length + afterAccepted.length < options.samples; i++) {
      if (!floodGoesOn()) break;
      const atStart = inFlight();
      const triggering = !accepted;
      const latency = await runB(1000 + i);
      if (latency === undefined) continue;
      if (!floodGoesOn()) afterFlood += 1;
      else {
        (triggering ? duringTriggers : afterAccepted).push(latency);
        inFlightAtStart.push(atStart);
      }
    }
    const crowded = [...duringTriggers, ...afterAccepted];
    const started = await flooding;
    if (process.env['BENCH_FAIRNESS_DEBUG']) {
      let shown = 0;
      for await (const run of client.workflow.list({
        query: `${WORKSPACE_ATTRIBUTE.name} = ${quote(a.id)}`,
      })) {
        if (shown++ % 37 === 0) say(`A ${run.workflowId}: ${await describeRun(run.workflowId)}`);
        if (shown > 300) break;
      }
    }
    say(
      `fairness: ${crowded.length} runs of B under the flood (${afterFlood} ended after it); waiting for A's runs to close`,
    );
    await waitUntilNoneRunning(client, `${WORKSPACE_ATTRIBUTE.name} = ${quote(a.id)}`);
    const drainMs = performance.now() - floodBegan;

    const idleLatency = summarizeLatencies(idle);
    const crowdedLatency = summarizeLatencies(crowded);
    const triggersLatency = summarizeLatencies(duringTriggers);
    const acceptedLatency = summarizeLatencies(afterAccepted);
    const sortedInFlight = [...inFlightAtStart].sort((x, y) => x - y);
    return {
      flood: options.flood,
      slow_ms: options.slowMs,
      flood_trigger_errors: started.errors,
      flood_trigger_error_samples: started.errorSamples,
      idle_latency_ms: idleLatency,
      under_flood_latency_ms: crowdedLatency,
      during_flood_triggers_latency_ms: triggersLatency,
      after_flood_accepted_latency_ms: acceptedLatency,
      flood_in_flight_at_b_start: {
        p50: sortedInFlight[Math.floor(sortedInFlight.length / 2)] ?? 0,
        min: sortedInFlight[0] ?? 0,
      },
      b_runs_after_flood: afterFlood,
      b_triggers_refused: refused,
      b_refusal_samples: refusals,
      p50_ratio: ratio(crowdedLatency.p50, idleLatency.p50),
      p90_ratio: ratio(crowdedLatency.p90, idleLatency.p90),
      flood_drain_ms: Math.round(drainMs),
    };
  } finally {
    await apiA.close();
    await apiB.close();
    await slow.stop();
    await fast.stop();
  }
}

export async function benchFairness(ctx: BenchContext): Promise<FairnessResult> {
  const { stack } = ctx;
  return measureFairness({
    db: stack.runtime.services.db,
    client: stack.runtime.services.temporal.client,
    baseUrl: stack.baseUrl,
    flood: intFromEnv('BENCH_FAIRNESS_FLOOD', 2000),
    floodConcurrency: intFromEnv('BENCH_FAIRNESS_CONCURRENCY', 32),
    slowMs: intFromEnv('BENCH_FAIRNESS_SLOW_MS', 2000),
    samples: intFromEnv('BENCH_FAIRNESS_SAMPLES', 20),
    progress: (message) => process.stderr.write(`[bench] ${message}\n`),
  });
}
