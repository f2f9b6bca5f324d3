/**
 * Starting an execution (docs/api.md#workflows): load the definition version, validate the input against
 * its input_schema, honour the Idempotency-Key, start the Temporal workflow whose id is the execution id
 * with the definition snapshot as input and the contract's search attributes.
 */
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Duration } from '@temporalio/common';
import { AppError, invalidRequest, notFound } from '../../platform/errors';
import { newExecutionId } from '../../platform/ids';
import type { Services } from '../services';
import { SchemaError } from '../../core/definitions/input-schema';
import type { Definition, TriggerType } from '../../core/definitions/schema';
import { claimIdempotencyKey } from '../../platform/store/idempotency';
import type { WorkflowVersionRecord } from '../../platform/store/workflows';
import { status as grpcStatus } from '@grpc/grpc-js';
import { callTemporal, grpcCodeOf } from '../../platform/temporal/errors';
import { EXECUTION_WORKFLOW_TYPE, type ExecutionInput, type TriggerEvent } from '../../core/execution-types';
import { executionSearchAttributes } from '../../core/search-attributes';
import { REQUEST_ID_MEMO } from '../../core/telemetry';
import { workspacePriority } from '../../core/fairness';
import { debounce } from '../flow-control/debounce';
import { metrics } from '../../platform/observability/metrics';
import { runDefinition } from '../../core/definitions/run-definition';

export interface TriggerRequest {
  workspaceId: string;
  workflowId: string;
  /** Pins a version; the latest when undefined. */
  version?: number;
  body: unknown;
  idempotencyKey?: string;
  /**
   * The execution id, when the caller derives it from the request (a signed hook): a repeat of the
   * request starts nothing new, since Temporal refuses a second run of a workflow id.
   */
  executionId?: string;
  triggerType: TriggerType;
  /** An event trigger's start: the event, which the trigger step names. */
  event?: TriggerEvent;
  /** The request's X-Request-Id: the run's memo keeps it, and its activities log it. */
  requestId?: string;
  /** A rerun: the execution whose input this one runs again (ExecutionInput.rerun_of). */
  rerunOf?: string;
}

export async function triggerExecution(
  services: Services,
  request: TriggerRequest,
): Promise<{ executionId: string }> {
  // Without a worker here, Temporal's backlog is the only measure of how far behind the workers are.
  if (!services.admission) services.backlog.admit();
  const record = await services.reads.workflowVersion(
    request.workspaceId,
    request.workflowId,
    request.version,
  );
  if (!record) {
    throw notFound(
      'workflow_not_found',
      request.version === undefined
        ? `No workflow '${request.workflowId}' in this workspace.`
        : `No version ${request.version} of workflow '${request.workflowId}' in this workspace.`,
    );
  }
  const body = request.body === undefined ? {} : request.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalidRequest('The trigger body must be a JSON object of input fields.', [
      { path: '', message: 'must be an object' },
    ]);
  }
  const received = JSON.stringify(body);
  const input = await validatedInput(services, request.workspaceId, record, structuredClone(body));
  let executionId = request.executionId ?? newExecutionId();
  // A debounced trigger (not a rerun, which runs at once) coalesces by key; its start claims the
  // Idempotency-Key in the same transaction (debounce.ts).
  const debounced = record.definition.debounce !== undefined && request.rerunOf === undefined;
  if (request.idempotencyKey !== undefined && !debounced) {
    ({ executionId } = await claimIdempotencyKey(services.db, {
      workspaceId: request.workspaceId,
      workflowId: request.workflowId,
      key: request.idempotencyKey,
      candidateId: executionId,
    }));
  }
  const executionInput: ExecutionInput = {
    workspaceId: request.workspaceId,
    workflow: {
      id: record.workflow_id,
      version: record.version,
      definition: runDefinition(record.definition),
    },
    trigger: { type: request.triggerType, ...(request.event && { event: request.event }) },
    input,
    ...(request.rerunOf !== undefined && { rerun_of: request.rerunOf }),
  };
  // The started event belongs to this moment: the run emits it only if someone subscribes now.
  executionInput.emit_started = (await services.reads.subscribedEventKinds(request.workspaceId)).includes(
    'execution.started',
  );
  // Only when the schema changed it (defaults): the trigger step shows what was received.
  if (JSON.stringify(input) !== received) executionInput.trigger.body = body;
  // A workspace without a cap (set unlimited) spares its runs the cap's activity and statements.
  if (
    (await services.reads.workspaceLimit(
      request.workspaceId,
      'open_executions',
      services.config.workspaceLimits.open_executions,
    )) !== null
  )
    executionInput.workspace_cap = true;
  // Its first batch of steps asks its `concurrency` and `throttle` (workers/workflows/admission.ts).
  if (record.definition.concurrency || record.definition.throttle) executionInput.gates_in_batch = true;
  if (debounced) {
    // An id derived from the request (a hook's delivery, an event) names a run only if this trigger makes
    // one; a repeat that joined another must still find that one: it is kept as an idempotency key (with a
    // space, which no Idempotency-Key header has).
    const idempotencyKey =
      request.idempotencyKey ??
      (request.executionId !== undefined ? `derived ${request.executionId}` : undefined);
    // No place in the process's admission gate: the run waits for its quiet time before any step.
    return debounce(
      services,
      executionInput,
      { executionId, ...(idempotencyKey !== undefined && { idempotencyKey }) },
      (id, debouncedInput) => startExecutionWorkflow(services, id, debouncedInput, request.requestId),
    );
  }
  const admitted = (await services.admission?.admit(executionId, request.workspaceId)) ?? false;
  try {
    const started = await startExecutionWorkflow(services, executionId, executionInput, request.requestId);
    if (!started && admitted) services.admission?.release(executionId);
  } catch (error) {
    if (admitted) services.admission?.release(executionId);
    throw error;
  }
  return { executionId };
}

/**
 * The input checked against the version's input_schema, with the schema's defaults filled in; 400
 * `invalid_input` listing the problems.
 */
export async function validatedInput(
  services: Services,
  workspaceId: string,
  record: Pick<WorkflowVersionRecord, 'workflow_id' | 'version' | 'definition'>,
  input: unknown,
  where = '',
): Promise<unknown> {
  const schema = record.definition.input_schema;
  if (!schema) return input;
  let checked;
  try {
    checked = await services.schemas.validate(workspaceId, schema, input);
  } catch (error) {
    if (!(error instanceof SchemaError)) throw error;
    // A schema saved before a rule that now refuses it (e.g. one past the size limits): the version cannot run.
    throw new AppError(
      400,
      'invalid_definition',
      `Version ${record.version} of '${record.workflow_id}' has an input_schema that is no longer accepted: ${error.message}. Save a new version.`,
      { details: [{ path: '/input_schema', message: error.message }] },
    );
  }
  const problems = checked.problems.map((p) => ({ ...p, path: `${where}${p.path}` }));
  if (problems.length > 0) {
    throw new AppError(
      400,
      'invalid_input',
      `The input does not match the workflow's input_schema: ${problems[0]!.path || '/'} ${problems[0]!.message}.`,
      { details: problems },
    );
  }
  return checked.value;
}

/** Starts the execution's workflow; false when it had started already (an idempotent replay). */
export async function startExecutionWorkflow(
  services: Services,
  executionId: string,
  input: ExecutionInput,
  requestId?: string,
): Promise<boolean> {
  const { client, connection } = services.temporal;
  try {
    const handle = await callTemporal(connection, () =>
      client.workflow.start(
        EXECUTION_WORKFLOW_TYPE,
        executionStartOptions(services, executionId, input, requestId),
      ),
    );
    metrics.executionStarts.inc({ eager: String(handle.eagerlyStarted) });
    return true;
  } catch (error) {
    // An idempotent replay of a trigger that already started: nothing new to start.
    if (error instanceof WorkflowExecutionAlreadyStartedError) return false;
    // A start whose answer did not come in time may still have been done (a loaded server answers late):
    // then the trigger did start the execution, and saying "did nothing" would be false.
    // (Not when Temporal could not be reached at all: then it did nothing.)
    if (
      error instanceof AppError &&
      error.code === 'temporal_unavailable' &&
      grpcCodeOf(error.cause) !== grpcStatus.UNAVAILABLE &&
      (await exists(services, executionId))
    )
      return true;
    throw error;
  }
}

/**
 * Whether Temporal has the execution: false when it does not, or cannot say within
 * STARTED_CHECK_TIMEOUT_MS (a hard bound: a client reconnecting to a server that is down may take longer
 * than a call's deadline to give up).
 */
async function exists(services: Services, executionId: string): Promise<boolean> {
  const { client, connection } = services.temporal;
  let timer: NodeJS.Timeout | undefined;
  const giveUp = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), STARTED_CHECK_TIMEOUT_MS);
  });
  const check = callTemporal(
    connection,
    () => client.workflow.getHandle(executionId).describe(),
    STARTED_CHECK_TIMEOUT_MS,
  ).then(
    () => true,
    () => false,
  );
  try {
    return await Promise.race([check, giveUp]);
  } finally {
    clearTimeout(timer);
  }
}

/** How long a trigger whose start timed out waits to learn whether the run started anyway. */
const STARTED_CHECK_TIMEOUT_MS = 2_000;

/** How every execution starts in Temporal (the benchmark's raw starts use the very same options). */
export function executionStartOptions(
  services: Services,
  executionId: string,
  input: ExecutionInput,
  requestId?: string,
) {
  return {
    taskQueue: services.config.temporal.taskQueue,
    workflowId: executionId,
    args: [input] as [ExecutionInput],
    typedSearchAttributes: executionSearchAttributes(input),
    staticSummary: summaryOf(input.workflow.definition, input.workflow.version),
    workflowIdConflictPolicy: 'FAIL' as const,
    workflowIdReusePolicy: 'REJECT_DUPLICATE' as const,
    requestEagerStart: services.eagerStart,
    // Tasks are shared fairly between workspaces (core/fairness.ts).
    priority: workspacePriority(input.workspaceId),
    // The request that started the run (Temporal UI shows it; workflow interceptors hand it to activities).
    ...(requestId ? { memo: { [REQUEST_ID_MEMO]: requestId } } : {}),
    ...(input.workflow.definition.timeout
      ? { workflowExecutionTimeout: input.workflow.definition.timeout as Duration }
      : {}),
  };
}

/** The run's static summary in Temporal UI: which workflow, which version. */
function summaryOf(definition: Definition, version: number): string {
  return `${definition.name ?? definition.id} (${definition.id} v${version})`;
}
