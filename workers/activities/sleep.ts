/**
 * When a sleep step wakes (docs/definitions.md#sleep), decided in `run_steps` as the step starts: its
 * `duration` from now, or its `until` (after templates), which must be an RFC 3339 time at most 365 days
 * ahead. The workflow then waits on a Temporal timer until that time (workers/workflows/sleep.ts).
 */
import { MAX_WAIT_TIMEOUT_MS, type SleepStep } from '../../core/definitions/schema';
import { STEP_ERROR_CODES, type SleepRequestSpec } from '../../core/execution-types';
import { durationMs } from '../../core/step-defaults';
import { parseRfc3339 } from '../../core/time';

/** The longest sleep: 365 days (as an approval's or an event wait's timeout). */
export const MAX_SLEEP_MS = MAX_WAIT_TIMEOUT_MS;

/** A wake time (epoch ms), or why the step fails. */
export type WakeTime = { at: number } | { error: { code: string; message: string } };

/** The wake time of `step` started at `now`, given its recorded input (its `until` resolved). */
export function wakeTime(step: SleepStep, input: SleepRequestSpec, now: number): WakeTime {
  if ('duration' in input) return { at: now + durationMs(input.duration) };
  const { until } = input;
  const at = typeof until === 'string' ? parseRfc3339(until) : undefined;
  if (at === undefined) {
    return {
      error: {
        code: STEP_ERROR_CODES.invalidTime,
        message: `The "until" of step "${step.id}" must give an RFC 3339 time such as "2026-12-01T09:00:00Z"; it gave ${describe(until)}.`,
      },
    };
  }
  if (at - now > MAX_SLEEP_MS) {
    return {
      error: {
        code: STEP_ERROR_CODES.sleepTooLong,
        message: `Step "${step.id}" would sleep until ${new Date(at).toISOString()}, more than 365 days from now.`,
      },
    };
  }
  return { at };
}

/** A value in a message: a short string quoted, otherwise its type. */
function describe(value: unknown): string {
  if (typeof value === 'string')
    return value.length <= 64 ? JSON.stringify(value) : `a string of ${value.length} characters`;
  if (value === null || value === undefined) return 'nothing (null)';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number' || typeof value === 'boolean') return `the ${typeof value} ${value}`;
  return 'an object';
}
