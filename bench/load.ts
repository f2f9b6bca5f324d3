/**
 * A closed-loop load generator: `concurrency` callers, each starting its next operation as soon as the
 * previous one answered, until `count` operations are done. Several runs (rounds) of one scenario merge
 * into one result: throughput is successes over the summed wall time, latency is per successful operation.
 */
import { performance } from 'node:perf_hooks';
import { perSecond, round, summarizeLatencies, type LatencySummary } from './stats';

export interface LoadOptions {
  count: number;
  concurrency: number;
  /** One operation; `index` runs from `firstIndex` (default 0) on. A rejection counts as an error. */
  operation: (index: number) => Promise<unknown>;
  firstIndex?: number;
}

/** The raw outcome of one run. */
export interface LoadRun {
  concurrency: number;
  latencies: number[];
  errors: number;
  errorSamples: string[];
  durationMs: number;
}

export interface LoadResult {
  count: number;
  concurrency: number;
  rounds: number;
  ok: number;
  errors: number;
  /** The first few distinct error messages, to tell an overload from a bug. */
  error_samples: string[];
  duration_ms: number;
  per_sec: number;
  latency_ms: LatencySummary;
}

const MAX_ERROR_SAMPLES = 5;

export async function runClosedLoop({
  count,
  concurrency,
  operation,
  firstIndex = 0,
}: LoadOptions): Promise<LoadRun> {
  const latencies: number[] = [];
  const errorSamples = new Set<string>();
  let errors = 0;
  let next = 0;

  const caller = async (): Promise<void> => {
    for (let index = next++; index < count; index = next++) {
      const started = performance.now();
      try {
        await operation(firstIndex + index);
        latencies.push(performance.now() - started);
      } catch (error) {
        errors += 1;
        if (errorSamples.size < MAX_ERROR_SAMPLES) errorSamples.add(messageOf(error));
      }
    }
  };

  const started = performance.now();
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, caller));
  return {
    concurrency,
    latencies,
    errors,
    errorSamples: [...errorSamples],
    durationMs: performance.now() - started,
  };
}

/** One result over the runs of a scenario. */
export function summarizeRuns(runs: readonly LoadRun[]): LoadResult {
  const latencies = runs.flatMap((run) => run.latencies);
  const errors = runs.reduce((total, run) => total + run.errors, 0);
  const durationMs = runs.reduce((total, run) => total + run.durationMs, 0);
  return {
    count: latencies.length + errors,
    concurrency: runs[0]?.concurrency ?? 0,
    rounds: runs.length,
    ok: latencies.length,
    errors,
    error_samples: [...new Set(runs.flatMap((run) => run.errorSamples))].slice(0, MAX_ERROR_SAMPLES),
    duration_ms: round(durationMs, 1),
    per_sec: perSecond(latencies.length, durationMs),
    latency_ms: summarizeLatencies(latencies),
  };
}

function messageOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 300);
}
