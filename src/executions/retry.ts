/**
 * Retry from the failed step (CONTRACT §5): a Temporal reset of the failed run to the workflow task that
 * failed it, then a `retry` signal to the new run, which waits for it at the failed step (see
 * workers/workflows/execution.ts) and runs that step again, with the corrected input if one came.
 * Steps before it stay in history as they were: not run again, outputs and timings kept.
 * One reset per failed run: concurrent requests share the first one's retry.
 */
import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type Long from 'long';
import { AppError, invalidRequest } from '../errors';
import type { Services } from '../services';
import { validateInput } from '../definitions/input-schema';
import {
  claimRetry,
  recordRetriedRun,
  recordRetrySignaled,
  releaseRetry,
  unsignaledRetry,
} from '../store/execution-retries';
import { callTemporal } from '../temporal/errors';
import { firstPayload } from '../temporal/history-mapper';
import {
  RETRY_SIGNAL,
  type ExecutionError,
  type ExecutionInput,
  type RetrySignal,
} from '../../workers/shared/execution-types';
import { locateExecution } from './locate';

const EventType = temporal.api.enums.v1.EventType;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

export interface RetryRequest {
  workspaceId: string;
  executionId: string;
  /** A corrected input for the failed step and every later one. */
  input?: unknown;
  /** The API key that asked (kept in Temporal's reset reason). */
  keyId: string;
}

export async function retryExecution(
  services: Services,
  request: RetryRequest,
): Promise<{ retriedFromStep: string }> {
  const { handle, description, status } = await locateExecution(
    services,
    request.workspaceId,
    request.executionId,
  );
  const { connection, namespace } = services.temporal;
  if (status === 'running') {
    // A retry whose request died between the reset and the signal: complete it.
    const pending = await unsignaledRetry(
      services.db,
      request.workspaceId,
      request.executionId,
      description.runId,
    );
    if (pending) {
      await signalRetry(services, request.executionId, description.runId, pending.baseRunId, undefined);
      return { retriedFromStep: pending.retriedFromStep };
    }
  }
  if (status !== 'failed') {
    throw new AppError(
      409,
      'execution_not_failed',
      `Only a failed execution can be retried; this one is ${status}.`,
    );
  }
  const runId = description.runId;
  const history = await callTemporal(connection, () => handle.fetchHistory(), 10_000);
  const events = history.events ?? [];
  const { step, resetEventId } = resetPointOf(events);
  const input = request.input === undefined ? undefined : correctedInput(events, request.input);

  const claim = await claimRetry(services.db, {
    workspaceId: request.workspaceId,
    executionId: request.executionId,
    baseRunId: runId,
    step,
  });
  if (!claim.owner) return { retriedFromStep: claim.retriedFromStep };
  let newRunId: string;
  try {
    const response = await callTemporal(connection, () =>
      connection.workflowService.resetWorkflowExecution({
        namespace,
        workflowExecution: { workflowId: request.executionId, runId },
        reason: `Retry from step "${step}" (API key ${request.keyId})`,
        workflowTaskFinishEventId: resetEventId,
        // The same id for the same failed run: Temporal treats a repeated request as the same reset.
        requestId: `retry-${runId}`,
        resetReapplyType: temporal.api.enums.v1.ResetReapplyType.RESET_REAPPLY_TYPE_NONE,
      }),
    );
    newRunId = response.runId ?? '';
    await recordRetriedRun(services.db, runId, newRunId);
  } catch (error) {
    await releaseRetry(services.db, runId).catch(() => undefined);
    throw error;
  }
  await signalRetry(services, request.executionId, newRunId, runId, input);
  return { retriedFromStep: step };
}

async function signalRetry(
  services: Services,
  executionId: string,
  runId: string,
  baseRunId: string,
  input: unknown,
): Promise<void> {
  const { connection, namespace } = services.temporal;
  const signal: RetrySignal = { for_run: runId, ...(input !== undefined ? { input } : {}) };
  await callTemporal(connection, () =>
    connection.workflowService.signalWorkflowExecution({
      namespace,
      workflowExecution: { workflowId: executionId, runId },
      signalName: RETRY_SIGNAL,
      input: { payloads: [defaultPayloadConverter.toPayload(signal)] },
      // Sending it twice (a request completing another's retry) delivers it once.
      requestId: `retry-signal-${runId}`,
    }),
  );
  await recordRetrySignaled(services.db, baseRunId);
}

/** The failed step, and the workflow task that failed the run (the one to reset to). */
function resetPointOf(events: HistoryEvent[]): { step: string; resetEventId: Long } {
  const failedIndex = events.findIndex((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED);
  const failed = events[failedIndex];
  const details = firstPayload(
    failed?.workflowExecutionFailedEventAttributes?.failure?.applicationFailureInfo?.details,
  ) as ExecutionError | undefined;
  const step = details?.step;
  if (!failed || !step)
    throw new AppError(
      409,
      'execution_not_failed',
      'This execution did not fail in a step, so it cannot be retried from one.',
    );
  const failingTask = events
    .slice(0, failedIndex)
    .reverse()
    .find((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
  if (!failingTask?.eventId) throw new Error('No workflow task to reset to');
  return { step, resetEventId: failingTask.eventId };
}

/** A corrected input, validated against the input_schema of the version the execution runs. */
function correctedInput(events: HistoryEvent[], input: unknown): unknown {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw invalidRequest('`input` must be a JSON object of input fields.', [
      { path: '/input', message: 'must be an object' },
    ]);
  }
  const started = firstPayload(events[0]?.workflowExecutionStartedEventAttributes?.input) as
    ExecutionInput | undefined;
  const corrected = structuredClone(input);
  const problems = validateInput(started?.workflow.definition.input_schema, corrected);
  if (problems.length > 0) {
    throw new AppError(
      400,
      'invalid_input',
      `The corrected input does not match the workflow's input_schema: ${problems[0]!.path || '/'} ${problems[0]!.message}.`,
      {
        details: problems.map((p) => ({ ...p, path: `/input${p.path}` })),
      },
    );
  }
  return corrected;
}
