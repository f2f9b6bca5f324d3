/**
 * How a step's `retry` and `timeout` map onto the options of the activity that retries it
 * (docs/definitions.md#conditions-retries-and-timeouts).
 */
import type { Duration } from '@temporalio/common';
import { ActivityCancellationType, type ActivityOptions } from '@temporalio/workflow';
import type { LeafStep } from '../../core/definitions/schema';
import { attemptTimeoutOf, durationMs, retryOf } from '../../core/step-defaults';

export const NETWORK_HEARTBEAT_TIMEOUT = '6s';

/**
 * Options of the activity that takes over a connector or ai step after its first attempt (run in the
 * step local activity) failed: the attempts left, spaced as the step's policy says from the second on.
 * `deferred`: the step was not attempted at all (its workspace held its share of the worker's local
 * calls, workers/activities/step-slots.ts): every attempt, spaced from the first.
 */
export function retryActivityOptions(step: LeafStep, deferred = false): ActivityOptions {
  const retry = retryOf(step);
  if (deferred) {
    return {
      ...retryActivityOptions(step),
      retry: {
        maximumAttempts: Math.max(1, retry.max_attempts),
        initialInterval: retry.initial_interval as Duration,
        backoffCoefficient: retry.backoff,
        maximumInterval: retry.max_interval as Duration,
      },
    };
  }
  return {
    activityId: step.id,
    summary: step.name ?? step.id,
    // Definition durations ("30s", "72h") are validated on save and are in the format Temporal takes.
    startToCloseTimeout: attemptTimeoutOf(step) as Duration,
    retry: {
      maximumAttempts: Math.max(1, retry.max_attempts - 1),
      // The wait before this activity's first attempt (the step's second) was the workflow's timer.
      initialInterval: Math.round(durationMs(retry.initial_interval) * retry.backoff),
      backoffCoefficient: retry.backoff,
      maximumInterval: retry.max_interval as Duration,
    },
    heartbeatTimeout: NETWORK_HEARTBEAT_TIMEOUT,
    // A canceled execution shows its running step canceled once the request was really abandoned.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  };
}
