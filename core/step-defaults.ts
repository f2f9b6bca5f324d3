/**
 * What a step's `retry` and `timeout` mean when the definition leaves them out
 * (docs/definitions.md#conditions-retries-and-timeouts).
 */
import type { LeafStep } from './definitions/schema';

/** Time limit of one attempt when the step sets no `timeout`. */
export const DEFAULT_STEP_TIMEOUT: Record<LeafStep['kind'], string> = {
  rules: '10s',
  connector: '30s',
  ai: '2m',
  // An approval's own work is to resolve its message; the wait for a decision is the step's `timeout`.
  approval: '10s',
  // A sleep's own work is to resolve its `until`; the sleep itself is a Temporal timer.
  sleep: '10s',
  // A wait's own work is to file it (and look for an event that came meanwhile); the wait is its `timeout`.
  wait_for_event: '30s',
};

/** Retry policy when the step sets no `retry`: transient failures are retried a few times. */
export const DEFAULT_RETRY = {
  max_attempts: 3,
  initial_interval: '1s',
  backoff: 2,
  max_interval: '30s',
} as const;

export interface EffectiveRetry {
  max_attempts: number;
  initial_interval: string;
  backoff: number;
  max_interval: string;
}

export function retryOf(step: LeafStep): EffectiveRetry {
  // A sleep has no retry: nothing it does can fail for a while and then work.
  return {
    ...DEFAULT_RETRY,
    ...(step.kind === 'sleep' || step.kind === 'wait_for_event' ? undefined : step.retry),
  };
}

/** The time limit of one attempt of a connector or ai step (an approval's `timeout` is its wait). */
export function attemptTimeoutOf(step: LeafStep): string {
  return step.kind === 'approval' || step.kind === 'sleep' || step.kind === 'wait_for_event'
    ? DEFAULT_STEP_TIMEOUT[step.kind]
    : (step.timeout ?? DEFAULT_STEP_TIMEOUT[step.kind]);
}

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** A definition duration ("500ms", "30s", "15m", "72h", "7d"; validated on save) in milliseconds. */
export function durationMs(duration: string): number {
  const match = /^(\d+)(ms|s|m|h|d)$/.exec(duration);
  if (!match) throw new Error(`Not a definition duration: "${duration}"`);
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
}
