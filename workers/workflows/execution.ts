/**
 * The execution workflow: interprets a definition snapshot and records nothing outside Temporal.
 *
 * It evaluates no expression itself. Steps run in batches through the `run_steps` local activity (see
 * workers/activities/steps.ts): a batch is the rules steps before the next connector, ai or approval
 * step, and that step. The activity evaluates every `if`, rule and template, runs the step's first
 * attempt, and returns one record per step; its marker in history is the steps' record (what each read,
 * produced, when, and why it failed). So a common run is one workflow task, a replay never re-evaluates
 * anything (changes to the evaluator cannot break it), and no definition can hold the workflow thread.
 *
 * After that, the workflow only waits: for the attempts a connector or ai step has left (an activity
 * whose id is the step id), for an approval's decision (the `decide` Update, with the step's timeout),
 * and for the events it emits. A failed step fails the run (Temporal status Failed); a retry is a new
 * run of the same execution that resumes at the failed step (ExecutionInput.resume).
 *
 * Versioning: a run stays on the worker build that started it (PINNED), so a deploy never replays it on code
 * it was not written for (platform/temporal/worker-deployment.ts,
 * docs/operations.md#deploys-worker-builds-and-versioning).
 *
 * Deterministic code only (Temporal's sandbox). No module-level mutable state: with reuseV8Context,
 * module scope is shared between runs.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  defineUpdate,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  setWorkflowOptions,
  sleep,
  upsertMemo,
  upsertSearchAttributes,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { Duration } from '@temporalio/common';
import type { Activities } from '../activities';
import type { Step } from '../../core/definitions/schema';
import {
  DECIDE_UPDATE,
  DECISION_TOO_LATE,
  STEP_ERROR_CODES,
  type AiRequestSpec,
  type ApprovalDecision,
  type ApprovalDecisionRequest,
  type BatchNext,
  type ExecutionInput,
  type ExecutionResult,
  type ExpressionContext,
  type HttpRequestSpec,
  type StepBatchResult,
  type StepRecord,
} from '../../core/execution-types';
import type { ExecutionError } from '../../core/error-detail';
import type { EventKind } from '../../core/event-types';
import { WAITING_ATTRIBUTE } from '../../core/search-attributes';
import { attemptTimeoutOf, durationMs } from '../../core/step-defaults';
import { batchFrom, contextFor, describeBatch } from './batches';
import { retryActivityOptions } from './step-options';

/** Approve or reject the approval step that is waiting. */
export const decideUpdate = defineUpdate<ApprovalDecision, [ApprovalDecisionRequest]>(DECIDE_UPDATE);

/**
 * Emitting an event is a local activity: no extra round trip, recorded in history (so a replay never
 * emits twice). It waits for the database 2 s at most, then hands the event to Temporal (events.ts), and
 * is retried only while Temporal itself cannot take it: an event is never dropped.
 */
const { emit_event } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
});

/**
 * Local activity results recorded in one workflow task, past which the next batch waits for a new task:
 * a task's markers travel in one request to the server.
 */
const TASK_RESULT_BYTES = 1536 * 1024;

/**
 * Temporal terminates a run whose history passes 50 MB or 51,200 events (limit.historySize.error,
 * limit.historyCount.error). Before each batch of steps the run checks how far it is; past these marks
 * it fails with `history_too_large` at the step it would have run, an error the API shows with its
 * step, instead of a termination that names none. The margin holds what one more batch, its
 * step's retry activity and the failure can add (a batch records at most about 2.5 MB: steps.ts).
 *
 * Not continue-as-new: the new run would have to carry every step's record in its input, and a
 * workflow input is one payload (2 MB at most), so a history this large cannot be carried over.
 */
const HISTORY_BYTES_LIMIT = 40 * 1024 * 1024;
const HISTORY_EVENTS_LIMIT = 40_000;

/** One run's state, passed explicitly to every helper. */
interface Run {
  workspaceId: string;
  workflow: { id: string; version: number };
  context: ExpressionContext;
  /** The approval step waiting for a decision, if any. */
  waitingFor?: string;
  decision?: ApprovalDecision;
  /** The workspace's subscribed event kinds as the last batch reported them, and in which workflow task. */
  subscribed?: { kinds: EventKind[]; task: number };
  /** Bytes of local activity results in the current workflow task (see TASK_RESULT_BYTES). */
  taskBytes: { task: number; bytes: number };
  /** The worker encrypts payloads: the failure's message stays in its details (StepBatchResult.encrypted). */
  encrypted?: boolean;
}

/** A step failed: the run fails with its error. */
class StepFailure extends Error {
  constructor(readonly error: ExecutionError) {
    super(error.message);
  }
}

setWorkflowOptions({ versioningBehavior: 'PINNED' }, execution);
export async function execution(input: ExecutionInput): Promise<ExecutionResult> {
  const run: Run = {
    workspaceId: input.workspaceId,
    workflow: { id: input.workflow.id, version: input.workflow.version },
    context: {
      input: input.input,
      steps: {},
      execution: {
        id: workflowInfo().workflowId,
        workflow: input.workflow.id,
        version: input.workflow.version,
      },
    },
    taskBytes: { task: 0, bytes: 0 },
  };
  for (const record of input.resume?.records ?? []) remember(run, record);
  setHandler(
    decideUpdate,
    (request) => {
      run.decision = {
        decision: request.decision === 'approve' ? 'approved' : 'rejected',
        decided_by: request.decided_by,
        comment: request.comment,
        decided_at: new Date().toISOString(),
      };
      return run.decision;
    },
    {
      validator: (request: ApprovalDecisionRequest) => {
        // Workflow time is when this workflow task started, on Temporal's clock. Validators run only when an
        // Update arrives, never in a replay, so this check leaves old histories replaying as they did.
        if (request.apply_by !== undefined && Date.now() > request.apply_by) {
          throw ApplicationFailure.create({
            type: DECISION_TOO_LATE,
            message: `The decision on step "${request.step}" arrived after ${new Date(request.apply_by).toISOString()}, when its request was answered.`,
            nonRetryable: true,
          });
        }
        if (run.waitingFor !== request.step || run.decision !== undefined) {
          throw ApplicationFailure.create({
            type: STEP_ERROR_CODES.stepNotWaiting,
            message: `Step "${request.step}" is not waiting for a decision.`,
            nonRetryable: true,
          });
        }
      },
    },
  );

  try {
    return await runSteps(input, run);
  } catch (error) {
    if (isCancellation(error)) {
      // The run is being canceled: announce it (in a scope the cancellation cannot interrupt), then end.
      await CancellationScope.nonCancellable(() => emit(run, 'execution.canceled', 'canceled'));
    }
    if (error instanceof StepFailure) return failExecution(run, error.error);
    throw error;
  }
}

async function runSteps(input: ExecutionInput, run: Run): Promise<ExecutionResult> {
  if (input.emit_started !== false && !input.resume) await emit(run, 'execution.started', 'running');
  const steps = input.workflow.definition.steps;
  let index = input.resume ? steps.findIndex((step) => step.id === input.resume!.from_step) : 0;
  if (index < 0) throw new Error(`Step "${input.resume?.from_step}" is not in the definition`);
  while (index < steps.length) {
    checkHistorySize(run, steps[index]!);
    const batch = batchFrom(steps, index);
    const result = await runBatch(run, batch, index + batch.length >= steps.length);
    result.records.forEach((record) => remember(run, record));
    index += result.records.length;
    const last = batch[result.records.length - 1]!;
    await follow(run, last, result.next);
    if (result.next.kind === 'stop') return succeed(run, { status: 'success', stopped_at: last.id });
  }
  return succeed(run, { status: 'success' });
}

/** What the workflow does after a batch, by the batch's `next`. */
async function follow(run: Run, step: Step, next: BatchNext): Promise<void> {
  switch (next.kind) {
    case 'continue':
    case 'stop':
      return;
    case 'fail':
      throw new StepFailure(next.error);
    case 'retry':
    case 'defer':
      return retryAsActivity(run, step, next);
    case 'approval':
      return waitForDecision(run, step, next.timeout);
  }
}

async function runBatch(run: Run, steps: Step[], reachesEnd: boolean): Promise<StepBatchResult> {
  const task = workflowInfo().historyLength;
  if (run.taskBytes.task === task && run.taskBytes.bytes > TASK_RESULT_BYTES) {
    // A timer ends this workflow task: the next batch's record goes out with the next one.
    await sleep(1);
  }
  const last = steps[steps.length - 1]!;
  const { run_steps } = proxyLocalActivities<Activities>({
    ...describeBatch(steps),
    // The first attempt of a connector or ai step, plus time to evaluate and to read secrets.
    startToCloseTimeout: durationMs(attemptTimeoutOf(last)) + 60_000,
    // A step's failure is a result, not an error: what throws is the worker's trouble (the database
    // reading secrets), retried until it is over.
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
  });
  const reportSubscriptions = reachesEnd || steps.some((step) => step.kind === 'approval');
  const result = await run_steps({
    workspace_id: run.workspaceId,
    execution: run.context.execution,
    steps,
    context: contextFor(run.context, steps),
    report_subscriptions: reportSubscriptions,
  });
  const now = workflowInfo().historyLength;
  run.taskBytes = { task: now, bytes: (run.taskBytes.task === now ? run.taskBytes.bytes : 0) + result.bytes };
  if (result.subscribed) run.subscribed = { kinds: result.subscribed, task: now };
  if (result.encrypted) run.encrypted = true;
  return result;
}

/** Fails the run with `history_too_large` before `next` when its history nears Temporal's limits. */
function checkHistorySize(run: Run, next: Step): void {
  const info = workflowInfo();
  // historySize is the size when this workflow task began; add what its local activities recorded since.
  const bytes = info.historySize + (run.taskBytes.task === info.historyLength ? run.taskBytes.bytes : 0);
  if (bytes <= HISTORY_BYTES_LIMIT && info.historyLength <= HISTORY_EVENTS_LIMIT) return;
  const mb = (bytes / (1024 * 1024)).toFixed(1);
  throw new StepFailure({
    step: next.id,
    code: STEP_ERROR_CODES.historyTooLarge,
    message:
      `The execution's history reached ${mb} MB and ${info.historyLength} events, close to Temporal's limits ` +
      `(50 MB, 51,200 events), so step "${next.id}" did not run. Keep large data out of step outputs ` +
      `(store it elsewhere and pass a reference).`,
  });
}

/**
 * A record's step as later expressions see it (docs/definitions.md#expressions-and-templates:
 * `steps.<id>.output`, `.status`).
 */
function remember(run: Run, record: StepRecord): void {
  if (record.status === 'success' || record.status === 'skipped')
    run.context.steps[record.id] = { status: record.status, output: record.output };
}

/**
 * The attempts a connector or ai step has left, as an activity, after the step's retry interval; or, for a
 * step deferred unattempted (its workspace held its share of the worker: workers/activities/step-slots.ts),
 * all its attempts, at once.
 */
async function retryAsActivity(
  run: Run,
  step: Step,
  next: Extract<BatchNext, { kind: 'retry' | 'defer' }>,
): Promise<void> {
  const deferred = next.kind === 'defer';
  if (!deferred) await sleep(Math.max(1, next.delay_ms));
  const activities = proxyActivities<Activities>(retryActivityOptions(step, deferred));
  let output: unknown;
  try {
    output =
      step.kind === 'ai'
        ? await activities.ai(next.request as AiRequestSpec, next.meta)
        : await activities.connector_http(next.request as HttpRequestSpec, next.meta);
  } catch (error) {
    // The workflow ends as canceled only when the cancellation itself is thrown, not the activity failure wrapping it.
    if (isCancellation(error)) throw error instanceof ActivityFailure && error.cause ? error.cause : error;
    if (error instanceof ActivityFailure)
      throw new StepFailure({ step: step.id, ...describeActivityFailure(step, error) });
    throw error;
  }
  run.context.steps[step.id] = { status: 'success', output };
}

/** An approval waits (status `waiting`) for the `decide` Update, at most the step's `timeout`. */
async function waitForDecision(run: Run, step: Step, timeout: string | null): Promise<void> {
  run.waitingFor = step.id;
  run.decision = undefined;
  upsertSearchAttributes([{ key: WAITING_ATTRIBUTE, value: true }]);
  await emit(run, 'execution.waiting', 'waiting');
  let decided = true;
  if (timeout) decided = await condition(() => run.decision !== undefined, timeout as Duration);
  else await condition(() => run.decision !== undefined);
  run.waitingFor = undefined;
  upsertSearchAttributes([{ key: WAITING_ATTRIBUTE, value: false }]);
  // Set by the update handler while this code awaited (the compiler cannot see that).
  const decision = run.decision as ApprovalDecision | undefined;
  if (!decided || !decision) {
    throw new StepFailure({
      step: step.id,
      code: STEP_ERROR_CODES.approvalTimedOut,
      message: `No decision on step "${step.id}" within ${timeout}.`,
    });
  }
  if (decision.decision === 'rejected') {
    throw new StepFailure({
      step: step.id,
      code: STEP_ERROR_CODES.approvalRejected,
      message: `Step "${step.id}" was rejected by ${decision.decided_by}${decision.comment ? `: ${decision.comment}` : '.'}`,
    });
  }
  run.context.steps[step.id] = { status: 'success', output: decision };
}

async function succeed(run: Run, result: ExecutionResult): Promise<ExecutionResult> {
  await emit(run, 'execution.completed', 'success');
  return result;
}

/**
 * Fails the execution (Temporal status Failed, which operators expect in Temporal UI). The error also
 * goes into the memo so execution lists can show it without reading each history.
 */
async function failExecution(run: Run, error: ExecutionError): Promise<never> {
  upsertMemo({ error });
  await emit(run, 'execution.failed', 'failed', error);
  throw ApplicationFailure.create({
    type: error.code,
    // A step's message can quote what a receiver answered: with payloads encrypted it stays in the details.
    message: run.encrypted
      ? `${error.step ? `Step "${error.step}" failed` : 'The execution failed'} (${error.code}); the message is in the encrypted details.`
      : error.message,
    nonRetryable: true,
    details: [error],
  });
}

/**
 * Emits an execution event (docs/webhooks.md#events-and-payload) about this run. Skipped when the last batch,
 * in this very workflow task, reported that nobody subscribes to it: the answer is as fresh as the database's
 * would be.
 */
async function emit(
  run: Run,
  event: EventKind,
  status: string,
  error: ExecutionError | null = null,
): Promise<void> {
  const known = run.subscribed;
  if (known && known.task === workflowInfo().historyLength && !known.kinds.includes(event)) return;
  await emit_event({
    payload: {
      id: `evt_${uuid4().replace(/-/g, '')}`,
      event,
      created_at: new Date().toISOString(),
      execution_id: run.context.execution.id,
      workflow: run.workflow.id,
      workflow_version: run.workflow.version,
      status,
      error,
    },
    workspace_id: run.workspaceId,
    run_id: workflowInfo().runId,
  });
}

function describeActivityFailure(step: Step, error: ActivityFailure): { code: string; message: string } {
  const cause = error.cause;
  if (cause instanceof ApplicationFailure)
    return { code: cause.type ?? STEP_ERROR_CODES.stepFailed, message: cause.message };
  if (cause?.name === 'TimeoutFailure')
    return { code: STEP_ERROR_CODES.timeout, message: `Step "${step.id}" timed out.` };
  return { code: STEP_ERROR_CODES.stepFailed, message: cause?.message ?? error.message };
}
