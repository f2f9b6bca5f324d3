/**
 * A closed-loop load generator: `concurrency` callers, each starting its next operation as soon as the
 * previous one answered, until `count` operations are done. Throughput is successes over wall time;
 * latency is measured per successful operation.
 */
import { performance } from 'node:perf_hooks';
import { perSecond, round, summarizeLatencies, type LatencySummary } from './stats';

export interface LoadOptions {
  count: number;
  concurrency: number;
  /** One operation; `index` runs from 0 to count - 1. A rejection counts as an error. */
  operation: (index: number) => Promise<unknown>;
}

export interface LoadResult {
  count: number;
  concurrency: number;
  ok: number;
  errors: number;
  /** The first few distinct error messages, to tell an overload from a bug. */
  error_samples: string[];
  duration_ms: number;
  per_sec: number;
  latency_ms: LatencySummary;
}

const MAX_ERROR_SAMPLES = 5;

export async function runClosedLoop({ count, concurrency, operation }: LoadOptions): Promise<LoadResult> {
  const latencies: number[] = [];
  const errorSamples = new Set<string>();
  let errors = 0;
  let next = 0;

  const caller = async (): Promise<void> => {
    for (let index = next++; index < count; index = next++) {
      const started = performance.now();
      try {
        await operation(index);
        latencies.push(performance.now() - started);
      } catch (error) {
        errors += 1;
        if (errorSamples.size < MAX_ERROR_SAMPLES) errorSamples.add(messageOf(error));
      }
    }
  };

  const started = performance.now();
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, caller));
  const durationMs = performance.now() - started;
  return {
    count,
    concurrency,
    ok: latencies.length,
    errors,
    error_samples: [...errorSamples],
    duration_ms: round(durationMs, 1),
    per_sec: perSecond(latencies.length, durationMs),
    latency_ms: summarizeLatencies(latencies),
  };
}

function messageOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 300);
}
