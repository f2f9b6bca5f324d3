/**
 * `parallel-5`: what running connector calls side by side costs in latency, on the composition stack
 * (composition-stack.ts). A local receiver answers every POST after BENCH_PARALLEL_DELAY_MS (50 ms).
 * Four contenders, each run BENCH_PARALLEL_RUNS (200) times one at a time, from the start to the
 * result, in BENCH_PARALLEL_ROUNDS (4) rounds whose order turns (after BENCH_PARALLEL_WARMUP (20)
 * unmeasured runs each):
 *
 * - Switchyard `parallel`: a definition whose one `parallel` step has BENCH_PARALLEL_CALLS (5) branches,
 *   each one connector step POSTing to the receiver, triggered through the API;
 * - Switchyard `one_call`: a definition of one such connector step;
 * - the floor (bench/workflows/composition-floor.ts `parallelFloor`): the same calls hand-written, five
 *   (or one) local activities at once, started with `client.workflow.execute`.
 *
 * Ideally five calls at once take as long as one: the ratios `parallel_vs_one` say how far each side is
 * from that, `versus_floor` how far Switchyard is from the hand-written workflow.
 */
import { performance } from 'node:perf_hooks';
import type { Definition, Step } from '../../core/definitions/schema';
import { startSlowReceiver } from '../receiver';
import { progress } from '../stack';
import { ratio, summarizeLatencies } from '../stats';
import { PARALLEL_FLOOR_WORKFLOW_TYPE, type parallelFloor } from '../workflows/composition-floor';
import { intFromEnv, split } from './common';
import type { CompositionStack } from './composition-stack';

export interface ParallelSettings {
  calls: number;
  delayMs: number;
  runs: number;
  warmup: number;
  rounds: number;
}

export function parallelSettingsFromEnv(): ParallelSettings {
  return {
    calls: intFromEnv('BENCH_PARALLEL_CALLS', 5),
    delayMs: intFromEnv('BENCH_PARALLEL_DELAY_MS', 50),
    runs: intFromEnv('BENCH_PARALLEL_RUNS', 200),
    warmup: intFromEnv('BENCH_PARALLEL_WARMUP', 20, 0),
    rounds: intFromEnv('BENCH_PARALLEL_ROUNDS', 4),
  };
}

function call(id: string, url: string, n: number): Step {
  return {
    id,
    kind: 'connector',
    connector: 'http',
    request: { method: 'POST', url, body: { n: '{{ input.n }}', call: n } },
  };
}

/** One parallel step of `calls` branches, each one connector call to `url`. */
export function parallelDefinition(id: string, url: string, calls: number): Definition {
  return {
    id,
    name: `Benchmark: ${calls} connector calls at once`,
    steps: [
      {
        id: 'fan_out',
        kind: 'parallel',
        branches: Array.from({ length: calls }, (_, i) => ({
          id: `branch_${i + 1}`,
          steps: [call(`call_${i + 1}`, url, i + 1)],
        })),
      },
    ],
  };
}

/** One connector call to `url`. */
export function oneCallDefinition(id: string, url: string): Definition {
  return { id, name: 'Benchmark: one connector call', steps: [call('call', url, 1)] };
}

interface Contender {
  label: string;
  calls: number;
  run(n: number): Promise<unknown>;
  latencies: number[];
  errors: number;
  errorSamples: Set<string>;
}

async function runOnce(contender: Contender, n: number, measured: boolean): Promise<void> {
  const began = performance.now();
  try {
    await contender.run(n);
    if (measured) contender.latencies.push(performance.now() - began);
  } catch (error) {
    contender.errors += 1;
    if (contender.errorSamples.size < 5) contender.errorSamples.add(String(error).slice(0, 300));
  }
}

export async function benchParallel5(
  stack: CompositionStack,
  settings: ParallelSettings = parallelSettingsFromEnv(),
) {
  const { api, client } = stack;
  const receiver = await startSlowReceiver(settings.delayMs);
  try {
    const parallel = parallelDefinition('bench-parallel', receiver.url, settings.calls);
    const single = oneCallDefinition('bench-one-call', receiver.url);
    await api.createWorkflow(parallel);
    await api.createWorkflow(single);
    const tag = Date.now().toString(36);
    const contender = (label: string, calls: number, run: (n: number) => Promise<unknown>): Contender => ({
      label,
      calls,
      run,
      latencies: [],
      errors: 0,
      errorSamples: new Set(),
    });
    const switchyard = (definitionId: string) => async (n: number) => {
      const id = await api.trigger(definitionId, { n });
      return client.workflow.getHandle(id).result();
    };
    const floor = (calls: number) => (n: number) =>
      client.workflow.execute<typeof parallelFloor>(PARALLEL_FLOOR_WORKFLOW_TYPE, {
        taskQueue: stack.floorTaskQueue,
        workflowId: `parallel-floor-${tag}-${calls}-${n}`,
        args: [{ url: receiver.url, calls, n }],
      });
    const contenders = [
      contender('switchyard parallel', settings.calls, switchyard(parallel.id)),
      contender('switchyard one call', 1, switchyard(single.id)),
      contender('floor parallel', settings.calls, floor(settings.calls)),
      contender('floor one call', 1, floor(1)),
    ];

    let n = 0;
    progress(`parallel-5: warm-up, ${settings.warmup} runs of each`);
    for (const side of contenders) for (let i = 0; i < settings.warmup; i++) await runOnce(side, n++, false);
    const sizes = split(settings.runs, settings.rounds);
    for (const [round, size] of sizes.entries()) {
      const order = contenders.map((_, i) => contenders[(i + round) % contenders.length]!);
      for (const side of order) {
        progress(`parallel-5: round ${round + 1} of ${sizes.length}, ${size} runs of ${side.label}`);
        for (let i = 0; i < size; i++) await runOnce(side, n++, true);
      }
    }

    const [ourParallel, ourOne, floorParallel, floorOne] = contenders.map((side) => ({
      latency_ms: summarizeLatencies(side.latencies),
      errors: side.errors,
      error_samples: [...side.errorSamples],
    }));
    const expectedRequests = contenders.reduce(
      (sum, side) => sum + side.calls * (settings.warmup + settings.runs - side.errors),
      0,
    );
    return {
      calls: settings.calls,
      delay_ms: settings.delayMs,
      runs: settings.runs,
      warmup: settings.warmup,
      rounds: sizes.length,
      switchyard: { parallel: ourParallel!, one_call: ourOne! },
      floor: { parallel: floorParallel!, one_call: floorOne! },
      /** Five calls at once over one call, on each side: 1 would be ideal. */
      parallel_vs_one: {
        switchyard_p50: ratio(ourParallel!.latency_ms.p50, ourOne!.latency_ms.p50),
        switchyard_p95: ratio(ourParallel!.latency_ms.p95, ourOne!.latency_ms.p95),
        floor_p50: ratio(floorParallel!.latency_ms.p50, floorOne!.latency_ms.p50),
        floor_p95: ratio(floorParallel!.latency_ms.p95, floorOne!.latency_ms.p95),
      },
      /** Switchyard over the floor. */
      versus_floor: {
        parallel_p50: ratio(ourParallel!.latency_ms.p50, floorParallel!.latency_ms.p50),
        parallel_p95: ratio(ourParallel!.latency_ms.p95, floorParallel!.latency_ms.p95),
        one_call_p50: ratio(ourOne!.latency_ms.p50, floorOne!.latency_ms.p50),
        one_call_p95: ratio(ourOne!.latency_ms.p95, floorOne!.latency_ms.p95),
      },
      receiver_requests: receiver.answered(),
      /** What the receiver should have answered at least (retried calls add more). */
      expected_requests: expectedRequests,
    };
  } finally {
    await receiver.stop();
  }
}
