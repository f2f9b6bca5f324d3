/**
 * `isolation`: how promptly a normal run completes while costly definitions run beside it.
 * A one-step rules workflow is run one at a time (trigger accepted → run closed, from Temporal), first
 * on a quiet service, then while twenty runs of an endless JSONata loop (each stopped by its step budget)
 * are kept in flight — re-triggered as they end. Sizes: BENCH_ISOLATION_RUNS (30), BENCH_ISOLATION_LOOPS (20).
 */
import { performance } from 'node:perf_hooks';
import type { Definition } from '../../core/definitions/schema';
import { progress } from '../stack';
import { ratio, summarizeLatencies } from '../stats';
import type { BenchContext } from './common';

const PING: Definition = {
  id: 'bench-isolation-ping',
  name: 'Benchmark: a normal run',
  steps: [{ id: 'ping', kind: 'rules', rules: [{ when: 'true', output: { pong: true } }] }],
};

const LOOP: Definition = {
  id: 'bench-isolation-loop',
  name: 'Benchmark: an endless loop',
  steps: [
    {
      id: 'spin',
      kind: 'rules',
      if: '($f := function($x){ $f($x + 1) }; $f(0))',
      rules: [{ when: 'true', output: 1 }],
    },
  ],
};

export async function benchIsolation(ctx: BenchContext) {
  const { api, stack } = ctx;
  const client = stack.runtime.services.temporal.client;
  const runs = Number(process.env['BENCH_ISOLATION_RUNS'] ?? 30);
  const loops = Number(process.env['BENCH_ISOLATION_LOOPS'] ?? 20);
  await api.createWorkflow(PING);
  await api.createWorkflow(LOOP);

  const runOnce = async (workflow: string): Promise<number> => {
    const started = performance.now();
    const id = await api.trigger(workflow, {});
    await client.workflow
      .getHandle(id)
      .result()
      .catch(() => undefined);
    return performance.now() - started;
  };
  const pings = async (count: number) => {
    const latencies: number[] = [];
    for (let i = 0; i < count; i++) latencies.push(await runOnce(PING.id));
    return latencies;
  };

  progress(`isolation: ${runs} normal runs on a quiet service`);
  await pings(5); // warm-up
  const quiet = await pings(runs);

  progress(`isolation: ${runs} normal runs beside ${loops} endless loops`);
  let keepGoing = true;
  let loopsEnded = 0;
  const neighbours = Array.from({ length: loops }, async () => {
    while (keepGoing) {
      await runOnce(LOOP.id);
      loopsEnded += 1;
    }
  });
  // Let the loops get going before measuring.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const crowded = await pings(runs);
  keepGoing = false;
  await Promise.all(neighbours);

  const quietLatency = summarizeLatencies(quiet);
  const crowdedLatency = summarizeLatencies(crowded);
  return {
    runs,
    loops,
    loop_runs_ended: loopsEnded,
    quiet_latency_ms: quietLatency,
    beside_loops_latency_ms: crowdedLatency,
    p50_ratio: ratio(crowdedLatency.p50, quietLatency.p50),
  };
}
