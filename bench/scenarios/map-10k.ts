/**
 * `map-10k` (formerly `large_map`, still accepted in BENCH_SCENARIOS): one execution whose map runs over
 * BENCH_MAP_ITEMS (10,000) items with a two-step body (two rules steps), BENCH_MAP_CONCURRENCY (20) at
 * once, on the composition stack (composition-stack.ts), beside its floor in the same run:
 *
 * - `switchyard`: the definition, triggered through the API; the map runs in chunks of 100 items, each a
 *   child workflow, `concurrency` chunks at once, every item's two steps one `run_steps` local activity;
 * - `floor`: the same work hand-written (bench/workflows/composition-floor.ts `mapFloor`): child workflows
 *   of 100 items, `concurrency` at once, one local activity per item doing both steps' work.
 *
 * Each side: items per second (trigger or start → result), CPU ms per item of every process it runs on
 * (the service process or the floor worker, and the dev server, from /proc), the largest history of any
 * workflow it started (the execution and its chunks: events and bytes; Temporal stops a history at
 * 51,200 events or 50 MB), and whether every item's output is right. Then BENCH_MAP_READS (100) reads of
 * each finished run, one at a time, the two sides in turn: `GET /v1/executions/{id}` against describe +
 * history of the floor's parent, and a page of 100 of the map's runs from the middle of the list
 * (`GET .../steps/each/runs`) against describe + history of the floor's parent and the history of the
 * chunk that holds those items.
 *
 * The goal line: CPU ms per map item against CPU ms per whole execution of the onboard flow (signed hook
 * → rules → HTTP), measured on the same service in the same run (BENCH_MAP_ONBOARD executions, 10 at
 * once, after BENCH_MAP_ONBOARD_WARMUP). Before the measured runs, one unmeasured map of
 * BENCH_MAP_WARMUP_ITEMS (1,000) items on each side.
 */
import { performance } from 'node:perf_hooks';
import { temporal } from '@temporalio/proto';
import { Pool } from 'undici';
import type { Definition } from '../../core/definitions/schema';
import type { ExecutionResult } from '../../core/execution-types';
import { runPhase } from '../onboard/driver';
import { startOnboardReceiver } from '../onboard/receiver';
import { ProcessMeter } from '../proc';
import { progress } from '../stack';
import { perSecond, ratio, round, summarizeLatencies } from '../stats';
import {
  FLOOR_CHUNK_ITEMS,
  MAP_FLOOR_WORKFLOW_TYPE,
  type mapFloor,
  type MapFloorInput,
} from '../workflows/composition-floor';
import { intFromEnv } from './common';
import type { CompositionStack } from './composition-stack';
import { createOnboardWorkflow, hookStarter } from './onboard';

const EventType = temporal.api.enums.v1.EventType;
const MAP_STEP = 'each';

export interface MapSettings {
  items: number;
  concurrency: number;
  reads: number;
  warmupItems: number;
  onboard: number;
  onboardWarmup: number;
}

export function mapSettingsFromEnv(): MapSettings {
  return {
    items: intFromEnv('BENCH_MAP_ITEMS', 10_000),
    concurrency: intFromEnv('BENCH_MAP_CONCURRENCY', 20),
    reads: intFromEnv('BENCH_MAP_READS', 100),
    warmupItems: intFromEnv('BENCH_MAP_WARMUP_ITEMS', 1000, 0),
    onboard: intFromEnv('BENCH_MAP_ONBOARD', 1000),
    onboardWarmup: intFromEnv('BENCH_MAP_ONBOARD_WARMUP', 100, 0),
  };
}

/** A map over [1..items], two rules steps per item: square, then square + index. */
export function mapDefinition(id: string, items: number, concurrency: number): Definition {
  return {
    id,
    name: `Benchmark: a map over ${items} items`,
    steps: [
      {
        id: MAP_STEP,
        kind: 'map',
        items: `[1..${items}]`,
        concurrency,
        steps: [
          { id: 'square', kind: 'rules', rules: [{ when: 'true', output: '{{ item * item }}' }] },
          {
            id: 'plus',
            kind: 'rules',
            rules: [{ when: 'true', output: '{{ steps.square.output + index }}' }],
          },
        ],
      },
    ],
  };
}

/** What each item's output must be: the item squared plus its index (items are 1..n, indexes 0..n-1). */
export function expectedOutputs(items: number): number[] {
  return Array.from({ length: items }, (_, index) => (index + 1) * (index + 1) + index);
}

interface HistorySizes {
  /** The run's workflows: the execution (or the floor's parent) and its chunks. */
  workflows: number;
  chunks: number;
  execution_history_events: number;
  execution_history_bytes: number;
  largest_history_events: number;
  largest_history_bytes: number;
}

/** One map run: how long, what it cost each process, and the results. */
interface MapRun {
  workflowId: string;
  outputs: unknown;
  durationMs: number;
  usage: ReturnType<ProcessMeter['stop']>;
}

async function measureRun(
  pids: Record<string, number>,
  run: () => Promise<{ workflowId: string; outputs: unknown }>,
): Promise<MapRun> {
  const meter = new ProcessMeter(pids);
  meter.start();
  const began = performance.now();
  const { workflowId, outputs } = await run();
  const durationMs = performance.now() - began;
  return { workflowId, outputs, durationMs, usage: meter.stop() };
}

/** The figures of one side's run. */
function summarizeRun(run: MapRun, items: number, history: HistorySizes) {
  const total = Object.values(run.usage.cpu_ms).reduce((sum, ms) => sum + ms, 0);
  const perItem = Object.fromEntries(
    Object.entries({ ...run.usage.cpu_ms, total }).map(([name, ms]) => [name, round(ms / items, 3)]),
  );
  return {
    duration_ms: Math.round(run.durationMs),
    items_per_sec: perSecond(items, run.durationMs),
    cpu_ms: Object.fromEntries(Object.entries({ ...run.usage.cpu_ms, total }).map(([k, v]) => [k, round(v)])),
    cpu_ms_per_item: perItem,
    peak_rss_mb: run.usage.peak_rss_mb,
    outputs: Array.isArray(run.outputs) ? run.outputs.length : 0,
    outputs_correct: JSON.stringify(run.outputs) === JSON.stringify(expectedOutputs(items)),
    history,
  };
}

/** The history of a run's workflow and of every child it started, as Temporal counts them. */
async function historySizes(stack: CompositionStack, workflowId: string): Promise<HistorySizes> {
  const { client } = stack;
  const parent = await client.workflow.getHandle(workflowId).fetchHistory();
  const chunkIds = (parent.events ?? [])
    .filter((event) => event.eventType === EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED)
    .map((event) => event.childWorkflowExecutionStartedEventAttributes!.workflowExecution!.workflowId!);
  const sizes = [];
  for (const id of [workflowId, ...chunkIds]) {
    const description = await client.workflow.getHandle(id).describe();
    sizes.push({
      events: description.historyLength,
      bytes: Number(description.raw.workflowExecutionInfo?.historySizeBytes ?? 0),
    });
  }
  return {
    workflows: sizes.length,
    chunks: chunkIds.length,
    execution_history_events: sizes[0]!.events,
    execution_history_bytes: sizes[0]!.bytes,
    largest_history_events: Math.max(...sizes.map((size) => size.events)),
    largest_history_bytes: Math.max(...sizes.map((size) => size.bytes)),
  };
}

export async function benchMap10k(stack: CompositionStack, settings: MapSettings = mapSettingsFromEnv()) {
  const { api, client, pids } = stack;
  const { items, concurrency } = settings;
  const servicePids = { service: pids.service, dev_server: pids.dev_server };
  const floorPids = { worker: pids.floor_worker, dev_server: pids.dev_server };
  const tag = Date.now().toString(36);

  const runSwitchyard = async (definitionId: string) => {
    const workflowId = await api.trigger(definitionId, {});
    const result = (await client.workflow.getHandle(workflowId).result()) as ExecutionResult;
    return { workflowId, outputs: result.output };
  };
  const runFloor = async (label: string, input: MapFloorInput) => {
    const workflowId = `map-floor-${tag}-${label}`;
    const outputs = await client.workflow.execute<typeof mapFloor>(MAP_FLOOR_WORKFLOW_TYPE, {
      taskQueue: stack.floorTaskQueue,
      workflowId,
      args: [input],
    });
    return { workflowId, outputs };
  };

  const measured = mapDefinition('bench-map', items, concurrency);
  await api.createWorkflow(measured);
  if (settings.warmupItems > 0) {
    progress(`map-10k: warm-up, a map over ${settings.warmupItems} items on each side`);
    const warmup = mapDefinition('bench-map-warmup', settings.warmupItems, concurrency);
    await api.createWorkflow(warmup);
    await runSwitchyard(warmup.id);
    await runFloor('warmup', { items: settings.warmupItems, concurrency });
  }

  progress(`map-10k: Switchyard, one map over ${items} items, ${concurrency} chunks at once`);
  const ours = await measureRun(servicePids, () => runSwitchyard(measured.id));
  progress(`map-10k: floor, the same map hand-written (${Math.round(ours.durationMs)} ms before)`);
  const floor = await measureRun(floorPids, () => runFloor('measured', { items, concurrency }));

  const switchyard = summarizeRun(ours, items, await historySizes(stack, ours.workflowId));
  const floorResult = summarizeRun(floor, items, await historySizes(stack, floor.workflowId));
  const reads = await measureReads(stack, settings, ours.workflowId, floor.workflowId);
  const goal = await measureGoalLine(stack, settings, switchyard.cpu_ms_per_item['total'] ?? NaN);
  const switchyardSide = {
    ...switchyard,
    read_execution_ms: reads.switchyard.execution,
    read_runs_page_ms: reads.switchyard.runsPage,
  };
  const floorSide = {
    ...floorResult,
    read_execution_ms: reads.floor.execution,
    read_runs_page_ms: reads.floor.runsPage,
  };
  progress(
    `map-10k: ${switchyard.items_per_sec} items/s at ${switchyard.cpu_ms_per_item['total']} CPU ms each ` +
      `(floor ${floorResult.items_per_sec} at ${floorResult.cpu_ms_per_item['total']}); ` +
      `an onboard execution ${goal.onboard_cpu_ms_per_execution} CPU ms`,
  );
  return {
    items,
    concurrency,
    chunk_items: FLOOR_CHUNK_ITEMS,
    warmup_items: settings.warmupItems,
    reads: settings.reads,
    switchyard: switchyardSide,
    floor: floorSide,
    /** Switchyard over the floor. */
    versus_floor: {
      items_per_sec: ratio(switchyard.items_per_sec, floorResult.items_per_sec),
      cpu_ms_per_item: ratio(
        switchyard.cpu_ms_per_item['total'] ?? NaN,
        floorResult.cpu_ms_per_item['total'] ?? NaN,
      ),
      largest_history_events: ratio(
        switchyard.history.largest_history_events,
        floorResult.history.largest_history_events,
      ),
      largest_history_bytes: ratio(
        switchyard.history.largest_history_bytes,
        floorResult.history.largest_history_bytes,
      ),
      read_execution_p99: ratio(switchyardSide.read_execution_ms.p99, floorSide.read_execution_ms.p99),
      read_runs_page_p99: ratio(switchyardSide.read_runs_page_ms.p99, floorSide.read_runs_page_ms.p99),
    },
    goal,
  };
}

/**
 * The reads of both finished runs, one at a time, the two sides in turn (after five unmeasured reads
 * of each): the execution, and a page of 100 runs from the middle of the map's list.
 */
async function measureReads(
  stack: CompositionStack,
  settings: MapSettings,
  executionId: string,
  floorId: string,
) {
  const { api, client } = stack;
  const runsPath = `/v1/executions/${encodeURIComponent(executionId)}/steps/${MAP_STEP}/runs?limit=100`;
  // The cursor of the page that starts with the middle item: the list paged through up to it.
  const middle = Math.floor(settings.items / 2 / FLOOR_CHUNK_ITEMS) * FLOOR_CHUNK_ITEMS;
  let cursor: string | null = null;
  for (let listed = 0; listed < middle; listed += 100) {
    const page = JSON.parse(
      await api.get(cursor ? `${runsPath}&cursor=${encodeURIComponent(cursor)}` : runsPath),
    ) as { next_cursor: string | null };
    cursor = page.next_cursor;
    if (!cursor) break;
  }
  const middlePage = cursor ? `${runsPath}&cursor=${encodeURIComponent(cursor)}` : runsPath;
  const floorParent = client.workflow.getHandle(floorId);
  const floorChunk = client.workflow.getHandle(`${floorId}/chunk-${middle / FLOOR_CHUNK_ITEMS}`);

  const reads = {
    switchyardExecution: () => api.getExecution(executionId),
    floorExecution: () => Promise.all([floorParent.describe(), floorParent.fetchHistory()]),
    switchyardRunsPage: () => api.get(middlePage),
    floorRunsPage: () =>
      Promise.all([floorParent.describe(), floorParent.fetchHistory(), floorChunk.fetchHistory()]),
  };
  const latencies = {
    switchyardExecution: [],
    floorExecution: [],
    switchyardRunsPage: [],
    floorRunsPage: [],
  } as Record<keyof typeof reads, number[]>;
  progress(`map-10k: ${settings.reads} reads of each kind, one at a time`);
  for (let i = 0; i < 5 + settings.reads; i++) {
    for (const [name, read] of Object.entries(reads) as [keyof typeof reads, () => Promise<unknown>][]) {
      const began = performance.now();
      await read();
      if (i >= 5) latencies[name].push(performance.now() - began);
    }
  }
  return {
    switchyard: {
      execution: summarizeLatencies(latencies.switchyardExecution),
      runsPage: summarizeLatencies(latencies.switchyardRunsPage),
    },
    floor: {
      execution: summarizeLatencies(latencies.floorExecution),
      runsPage: summarizeLatencies(latencies.floorRunsPage),
    },
  };
}

/** CPU per whole onboard execution on the same service, beside CPU per map item. */
async function measureGoalLine(stack: CompositionStack, settings: MapSettings, cpuPerItem: number) {
  const { service, client, pids } = stack;
  const receiver = await startOnboardReceiver();
  const pool = new Pool(service.baseUrl, { connections: 10, pipelining: 1, keepAliveTimeout: 60_000 });
  try {
    const secret = await createOnboardWorkflow(service, pool, receiver.url);
    const phase = (label: string, count: number) =>
      runPhase({
        label,
        count,
        concurrency: 10,
        start: hookStarter(pool, secret),
        receiver,
        pids: { service: pids.service, dev_server: pids.dev_server },
        client,
      });
    progress(`map-10k: the goal line, ${settings.onboard} onboard executions on the same service`);
    if (settings.onboardWarmup > 0) await phase('map-10k-onboard-warm', settings.onboardWarmup);
    const onboard = await phase('map-10k-onboard', settings.onboard);
    const perExecution = onboard.cpu_ms_per_execution['total'] ?? NaN;
    return {
      cpu_ms_per_item: cpuPerItem,
      onboard_cpu_ms_per_execution: perExecution,
      /** CPU per map item over CPU per onboard execution: the goal is at most 1. */
      ratio: ratio(cpuPerItem, perExecution),
      met: Number.isFinite(cpuPerItem) && Number.isFinite(perExecution) ? cpuPerItem <= perExecution : null,
      onboard: {
        executions: onboard.executions,
        concurrency: onboard.concurrency,
        errors: onboard.errors,
        receiver_missing: onboard.receiver_missing,
        not_completed: onboard.history.runs - onboard.history.completed,
        executions_per_sec: onboard.executions_per_sec,
        cpu_ms_per_execution: onboard.cpu_ms_per_execution,
      },
    };
  } finally {
    await pool.close();
    await receiver.stop();
  }
}
