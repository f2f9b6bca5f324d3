/** How a step's `retry` and `timeout` map onto its activity's options (CONTRACT §4, §10). */
import type { Duration } from '@temporalio/common';
import { ActivityCancellationType, type ActivityOptions } from '@temporalio/workflow';
import type { Step } from '../../src/definitions/schema';

/** Time limit of one attempt when the step sets no `timeout`. */
export const DEFAULT_STEP_TIMEOUT: Record<Step['kind'], string> = {
  rules: '10s',
  connector: '30s',
  ai: '2m',
  // The approval activity only records the request; the wait for a decision is the step's `timeout`.
  approval: '10s',
};

/** Retry policy when the step sets no `retry`: transient failures are retried a few times. */
export const DEFAULT_RETRY = {
  max_attempts: 3,
  initial_interval: '1s',
  backoff: 2,
  max_interval: '30s',
} as const;

/** Steps that wait on the network heartbeat, so a cancel reaches them while they wait. */
const NETWORK_KINDS = new Set<Step['kind']>(['connector', 'ai']);
export const NETWORK_HEARTBEAT_TIMEOUT = '6s';

export function stepActivityOptions(step: Step): ActivityOptions {
  const retry = { ...DEFAULT_RETRY, ...step.retry };
  const options: ActivityOptions = {
    activityId: step.id,
    summary: step.name ?? step.id,
    // Definition durations ("30s", "72h") are validated on save and are in the format Temporal takes.
    startToCloseTimeout: (step.kind === 'approval'
      ? DEFAULT_STEP_TIMEOUT.approval
      : (step.timeout ?? DEFAULT_STEP_TIMEOUT[step.kind])) as Duration,
    retry: {
      maximumAttempts: retry.max_attempts,
      initialInterval: retry.initial_interval as Duration,
      backoffCoefficient: retry.backoff,
      maximumInterval: retry.max_interval as Duration,
    },
  };
  if (NETWORK_KINDS.has(step.kind)) {
    options.heartbeatTimeout = NETWORK_HEARTBEAT_TIMEOUT;
    // A canceled execution shows its running step canceled once the request was really abandoned.
    options.cancellationType = ActivityCancellationType.WAIT_CANCELLATION_COMPLETED;
  }
  return options;
}
