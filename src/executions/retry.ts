/**
 * Retry from the failed step (docs/api.md#retry-from-the-failed-step): a new run of the same execution (same
 * workflow id, allowed because the last run failed) that resumes at the failed step. Its input carries the
 * records of the steps before that one exactly as the failed run recorded them (not run again, outputs and
 * timings kept) and, when given, the corrected input for the failed step and every later one.
 *
 * A new run rather than a Temporal reset: the retry never replays the failed run's history, so it works
 * whatever workflow code is deployed since (docs/operations.md#deploys-worker-builds-and-versioning), and the
 * new run is an ordinary run, replayable on its own. One retry per failed run: concurrent requests share the
 * first one's. The new run goes to the deployment's current build; while no worker of it runs, the retry
 * answers 503 `worker_unavailable` and starts nothing (src/executions/worker-presence.ts).
 */
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { AppError, invalidRequest, notFound, workerUnavailable } from '../../platform/errors';
import type { Services } from '../services';
import { jsonByteLength } from '../../core/step-data';
import { claimRetry, recordRetriedRun, releaseRetry } from '../../platform/store/execution-retries';
import { callTemporal } from '../../platform/temporal/errors';
import { decodeHistory, readExecution } from './history-mapper';
import { keptRunsOf } from './kept-runs';
import { buildWithoutWorker } from './worker-presence';
import {
  EXECUTION_WORKFLOW_TYPE,
  type ExecutionInput,
  type ResumePoint,
  type StepRecord,
} from '../../core/execution-types';
import { locateExecution } from './locate';
import { executionStartOptions, validatedInput } from './trigger';
import type { StepView } from './views';

export interface RetryRequest {
  workspaceId: string;
  executionId: string;
  /** A corrected input for the failed step and every later one. */
  input?: unknown;
  /** The API key that asked (kept in the new run's summary). */
  keyId: string;
}

/**
 * A new run's input is one Temporal payload (limit.blobSize.error: 2 MB); this leaves room for what
 * the start request adds around it.
 */
const MAX_RUN_INPUT_BYTES = 2 * 1024 * 1024 - 64 * 1024;

/** describe + the whole history of the failed run. */
const HISTORY_TIMEOUT_MS = 10_000;

export async function retryExecution(
  services: Services,
  request: RetryRequest,
): Promise<{ retriedFromStep: string }> {
  const { handle, description, status } = await locateExecution(
    services,
    request.workspaceId,
    request.executionId,
  );
  if (status !== 'failed') {
    throw new AppError(
      409,
      'execution_not_failed',
      `Only a failed execution can be retried; this one is ${status}.`,
    );
  }
  const runId = description.runId;
  const { connection } = services.temporal;
  const history = await callTemporal(connection, () => handle.fetchHistory(), HISTORY_TIMEOUT_MS);
  const events = history.events ?? [];
  await decodeHistory(events, services.temporal.payloadCodecs);
  const failed = readExecution(request.executionId, { events });
  const { view, input: failedRun } = failed;
  // A step that failed inside a container is retried from its top-level container (the path's first entry),
  // which keeps the branches or items that succeeded (kept-runs.ts).
  const step = view.error?.path?.[0] ?? view.error?.step;
  if (!step) {
    throw new AppError(
      409,
      'execution_not_failed',
      'This execution did not fail in a step, so it cannot be retried from one.',
    );
  }
  const corrected =
    request.input === undefined
      ? undefined
      : await correctedInput(services, request.workspaceId, failedRun, request.input);
  const resume: ResumePoint = {
    from_step: step,
    records: carriedRecords(view.steps, step),
    retry_of: runId,
  };
  const kept = (view.error?.path?.length ?? 0) > 1 && keptRunsOf(failed, step, corrected !== undefined);
  if (kept) resume.kept = kept;
  const retryInput: ExecutionInput = { ...failedRun, resume };
  if (corrected !== undefined) {
    retryInput.input = corrected;
    resume.original_input = originalInput(failedRun);
  } else if (failedRun.resume && 'original_input' in failedRun.resume) {
    resume.original_input = failedRun.resume.original_input;
  }
  delete retryInput.emit_started;
  // The run it retries waited for its debounce already, and ran with the input read above.
  delete retryInput.debounce;
  const inputBytes = jsonByteLength(retryInput);
  if (inputBytes > MAX_RUN_INPUT_BYTES) {
    throw new AppError(
      413,
      'payload_too_large',
      `This execution cannot be retried: the steps it keeps (before "${step}", and the runs of "${step}" that ` +
        `succeeded) recorded ${(inputBytes / 1048576).toFixed(1)} MB, and a new run carries them in its input, ` +
        `which Temporal limits to 2 MB. Start a new execution instead.`,
    );
  }

  // A new run: it goes where new runs go, not to the failed run's build.
  const absent = await buildWithoutWorker(services);
  if (absent) {
    throw workerUnavailable(
      absent.buildId,
      `No worker of build ${absent.buildId}, where new runs go, is running to retry execution ` +
        `'${request.executionId}'; the request did nothing. Start a worker of that build, or make a ` +
        'running build current (docs/operations.md#a-run-whose-build-has-no-worker).',
    );
  }

  const claim = await claimRetry(services.db, {
    workspaceId: request.workspaceId,
    executionId: request.executionId,
    baseRunId: runId,
    step,
  });
  if (!claim.owner) return { retriedFromStep: claim.retriedFromStep };
  try {
    const options = executionStartOptions(services, request.executionId, retryInput);
    const started = await callTemporal(connection, () =>
      services.temporal.client.workflow.start(EXECUTION_WORKFLOW_TYPE, {
        ...options,
        // A new run of this execution, allowed only because its last run failed.
        workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
        staticSummary: `${options.staticSummary} — retry from step "${step}" (API key ${request.keyId})`,
        requestEagerStart: false,
      }),
    );
    await recordRetriedRun(services.db, runId, started.firstExecutionRunId);
  } catch (error) {
    // Another request's retry got there first: that is the retry.
    if (error instanceof WorkflowExecutionAlreadyStartedError) return { retriedFromStep: step };
    await releaseRetry(services.db, runId).catch(() => undefined);
    throw error;
  }
  return { retriedFromStep: step };
}

/** The steps before the failed one, as records the new run shows unchanged. */
function carriedRecords(steps: StepView[], failedStep: string): StepRecord[] {
  const records: StepRecord[] = [];
  for (const view of steps) {
    if (view.id === 'trigger') continue;
    if (view.id === failedStep) break;
    records.push({
      id: view.id,
      status: view.status === 'skipped' ? 'skipped' : 'success',
      started_at: view.started_at,
      finished_at: view.finished_at,
      attempts: view.attempts,
      input: view.input,
      output: view.output,
      error: view.error,
    });
  }
  return records;
}

/** The input the trigger gave the first run (the trigger step keeps showing it). */
function originalInput(run: ExecutionInput): unknown {
  return run.resume && 'original_input' in run.resume ? run.resume.original_input : run.input;
}

/**
 * A corrected input, validated against the input_schema of the version the execution runs: the run's
 * snapshot holds it in runs started before runDefinition left it out, else the version in the database.
 * Once that version is deleted, nothing can check the input: 404 `workflow_not_found`.
 */
async function correctedInput(
  services: Services,
  workspaceId: string,
  run: ExecutionInput,
  input: unknown,
): Promise<unknown> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw invalidRequest('`input` must be a JSON object of input fields.', [
      { path: '/input', message: 'must be an object' },
    ]);
  }
  const { id, version } = run.workflow;
  const record = run.workflow.definition.input_schema
    ? { workflow_id: id, version, definition: run.workflow.definition }
    : await services.reads.workflowVersion(workspaceId, id, version);
  if (!record) {
    throw notFound(
      'workflow_not_found',
      `Version ${version} of workflow '${id}' was deleted, so a corrected input cannot be checked against its input_schema. Retry without "input" to run the failed step again with the input the execution has.`,
    );
  }
  return validatedInput(services, workspaceId, record, structuredClone(input), '/input');
}
