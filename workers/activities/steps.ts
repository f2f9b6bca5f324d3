/**
 * The `run_steps` local activity: runs a batch of consecutive steps (see batchFrom in the workflow) and
 * records what each did. Every expression of a definition (`if`, rules, templates) is evaluated here, on the
 * worker's main thread, never in workflow code: the workflow sandbox costs 100 µs or more per JSONata step,
 * and a workflow task that outruns the SDK's isolate time limit can abort the whole worker process
 * (docs/operations.md#architecture says why). Here, evaluation is bounded by deterministic step and work
 * budgets, backed by a time limit, and pauses every few thousand steps so that other runs go on
 * meanwhile.
 *
 * A step's outcome is data, not an exception: its record (input, output, timings, error) lands in the
 * local activity's marker in history, and `next` says what the workflow does: go on, stop, fail, retry
 * a connector or ai step as an activity, wait for an approval or sleep. Only a cancellation, or trouble with
 * the worker's own dependencies (the database reading secrets), throws, and the local activity is
 * retried.
 */
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import { msToNumber } from '@temporalio/common/lib/time';
import type {
  AiStep,
  ApprovalStep,
  ConnectorStep,
  LeafStep,
  RulesStep,
  SleepStep,
  WaitForEventStep,
} from '../../core/definitions/schema';
import { ExpressionError } from '../../core/expressions/errors';
import { isTruthy } from '../../core/expressions/evaluate';
import { DEFAULT_LIMITS, type EvaluationBudget, type EvaluationLimits } from '../../core/expressions/limits';
import { readsSecrets } from '../../core/expressions/references';
import { resolveTemplates, secretTemplatePointers, type Evaluate } from '../../core/expressions/templates';
import type { ComputePool } from '../../platform/compute/pool';
import { pausingBudget, workspaceEvaluator } from '../../platform/compute/evaluation';
import {
  DATA_LIMIT_CODES,
  jsonByteLength,
  MAX_STEP_INPUT_BYTES,
  MAX_STEP_OUTPUT_BYTES,
  stepDataProblem,
} from '../../core/step-data';
import {
  STEP_ERROR_CODES,
  type AiOutput,
  type AiRequestSpec,
  type BatchNext,
  type ExpressionContext,
  type HttpRequestSpec,
  type HttpResponseOutput,
  type SleepOutput,
  type SleepRequestSpec,
  type BatchAdmissionAnswer,
  type StepBatch,
  type StepBatchResult,
  type StepMeta,
  type StepRecord,
} from '../../core/execution-types';
import type { EventKind } from '../../core/event-types';
import { DATABASE_WAIT_MS, withDeadline } from '../../platform/store/deadline';
import { attemptTimeoutOf, durationMs, retryOf } from '../../core/step-defaults';
import { metrics } from '../../platform/observability/metrics';
import type { WorkspaceStepSlots } from './step-slots';
import { wakeTime } from './sleep';
import type { createEventWaits } from './event-waits';
import type { AdmissionActivities } from './admission';

export interface StepRunnerDeps {
  /** Threads for the evaluations that match regular expressions (evaluation.ts). */
  compute: ComputePool;
  connector: (spec: HttpRequestSpec, meta: StepMeta, signal: AbortSignal) => Promise<HttpResponseOutput>;
  ai: (spec: AiRequestSpec, meta: StepMeta, signal: AbortSignal) => Promise<AiOutput>;
  subscribedEventKinds: (workspaceId: string) => Promise<EventKind[]>;
  /** Told as each batch begins, with the execution id. */
  onBatchBegin?: (executionId: string) => void;
  /** This worker encrypts payloads: the batch result says so (StepBatchResult.encrypted). */
  encryptsPayloads?: boolean;
  /**
   * Per-workspace cap on the connector and ai calls running here at once (step-slots.ts); past it the
   * step is deferred to a regular activity. None: no cap.
   */
  slots?: WorkspaceStepSlots;
  /** Files wait_for_event steps among their event's waiters (event-waits.ts). */
  eventWaits: Pick<ReturnType<typeof createEventWaits>, 'beginEventWait'>;
  /** A run's flow control gates, when its batches pass them and give back its places (admission.ts). */
  gates: Pick<
    AdmissionActivities,
    'acquire_admission' | 'acquire_throttle' | 'acquire_workspace_place' | 'release_admission'
  >;
  /**
   * A workspace place the batch may hold in memory (platform/store/batch-places.ts): `keep` writes it before
   * a batch that does not end its run completes, `drop` forgets it when the batch fails (its retry asks again).
   */
  batchPlaces: {
    keep: (workspaceId: string, executionId: string) => Promise<void>;
    drop: (workspaceId: string, executionId: string) => void;
  };
}

/**
 * Limits of one step's evaluations together (`if`, every rule, every template): 50 000 evaluation steps
 * cost at most about 150 ms of CPU, far more than business rules need (mapping a few hundred items takes
 * a few thousand). The counts decide, so the same definition fails the same way however busy the worker
 * is; the time limit (DEFAULT_LIMITS.maxActiveMs) is only a backstop, far above what the counts allow.
 */
const STEP_LIMITS: EvaluationLimits = { ...DEFAULT_LIMITS, maxSteps: 50_000 };
/**
 * A batch's records travel in one payload: past this many bytes the batch ends early (the workflow runs
 * the rest in another local activity), well below Temporal's 2 MiB limit.
 */
const BATCH_RESULT_BYTES = 512 * 1024;

interface StepOutcome {
  record: StepRecord;
  /** Set when the batch ends here. */
  next?: BatchNext;
}

export function createStepRunner(deps: StepRunnerDeps) {
  return async function run_steps(batch: StepBatch): Promise<StepBatchResult> {
    deps.onBatchBegin?.(batch.execution.id);
    const admission = batch.admission?.acquire ? await passGates(batch, deps) : undefined;
    // Held back at a gate (or refused by an expression): no step runs before the run passes them all.
    if (admission?.held) return { records: [], next: CONTINUE, bytes: 0, admission: admission.answers };
    try {
      return await runBatch(batch, deps, admission);
    } catch (error) {
      deps.batchPlaces.drop(batch.workspace_id, batch.execution.id);
      throw error;
    }
  };
}

/** The batch's steps once it passed its gates, then what it gives back or keeps of its places. */
async function runBatch(
  batch: StepBatch,
  deps: StepRunnerDeps,
  admission: { answers: BatchAdmissionAnswer; held: boolean } | undefined,
): Promise<StepBatchResult> {
  const context = batch.context;
  const records: StepRecord[] = [];
  let next: BatchNext = { kind: 'continue' };
  let bytes = 0;
  for (const step of batch.steps) {
    const started = performance.now();
    const outcome = await runStep(step, context, batch, deps);
    recordStepMetrics(step.kind, outcome.record, (performance.now() - started) / 1000);
    if (batch.path && batch.path.length > 0) outcome.record.path = batch.path;
    records.push(outcome.record);
    if (outcome.record.status === 'success' || outcome.record.status === 'skipped') {
      context.steps[step.id] = { status: outcome.record.status, output: outcome.record.output };
    }
    if (outcome.next) {
      next = outcome.next;
      break;
    }
    bytes += jsonByteLength(outcome.record);
    if (bytes > BATCH_RESULT_BYTES) break;
  }
  const result: StepBatchResult = { records, next, bytes: jsonByteLength(records) };
  if (deps.encryptsPayloads) result.encrypted = true;
  if (admission) result.admission = admission.answers;
  if (batch.admission && endsRun(batch, next, records.length)) {
    const { keys, workspace } = batch.admission.release;
    // A workspace answered `unlimited` in this very batch holds no place.
    const place =
      workspace &&
      !(
        admission?.answers.workspace &&
        'state' in admission.answers.workspace &&
        admission.answers.workspace.state === 'unlimited'
      );
    if (keys || place) {
      // The steps ran: nothing may fail this activity now (a retry would run them again). Without the
      // database's answer in time, the run's own `release_admission` gives the places back, retried.
      const release = deps.gates.release_admission({
        execution_id: batch.execution.id,
        ...(!keys && { keys: false }),
        ...(place && { workspace_id: batch.workspace_id }),
      });
      try {
        await withDeadline(release, DATABASE_WAIT_MS);
        result.released = true;
      } catch (error) {
        Context.current().log.warn('The places are left to the run to give back', {
          executionId: batch.execution.id,
          error: String(error),
        });
      }
    }
  }
  if (admission?.answers.workspace && !result.released) {
    // The run holds its place past this batch: written now if it was only held in memory. Without the
    // database's answer in time the run goes on uncounted, as when its ask got no answer.
    await withDeadline(deps.batchPlaces.keep(batch.workspace_id, batch.execution.id), DATABASE_WAIT_MS).catch(
      (error: unknown) => {
        Context.current().log.warn('The workspace place could not be written: the run goes on uncounted', {
          executionId: batch.execution.id,
          error: String(error),
        });
      },
    );
  }
  // Lets the workflow skip events nobody subscribes to. Without an answer from the database it emits
  // them all (emit_event hands them to Temporal while the database is away): steps never wait for it.
  if (batch.report_subscriptions)
    result.subscribed = await withDeadline(
      deps.subscribedEventKinds(batch.workspace_id),
      DATABASE_WAIT_MS,
    ).catch(() => undefined);
  return result;
}

const CONTINUE: BatchNext = { kind: 'continue' };

/**
 * Passes the gates the batch asks (StepBatch.admission), in the workflow's order: the definition's
 * `concurrency`, its `throttle`, the workspace's cap. Stops at the first that does not let the run through:
 * `held` then, and the run waits for that gate's signal.
 */
async function passGates(
  batch: StepBatch,
  deps: StepRunnerDeps,
): Promise<{ answers: BatchAdmissionAnswer; held: boolean }> {
  const ask = batch.admission!.acquire!;
  const answers: BatchAdmissionAnswer = {};
  const run = { workspace_id: batch.workspace_id, execution_id: batch.execution.id };
  const priority = ask.priority !== undefined ? { priority: ask.priority } : {};
  const input = batch.context.input;
  const through = (answer: { state: string } | { error: unknown }) =>
    'state' in answer && answer.state !== 'queued';
  if (ask.concurrency) {
    answers.concurrency = await deps.gates.acquire_admission({
      ...run,
      ...ask.concurrency,
      ...priority,
      input,
    });
    if (!through(answers.concurrency)) return { answers, held: true };
  }
  if (ask.throttle) {
    answers.throttle = await deps.gates.acquire_throttle({ ...run, ...ask.throttle, ...priority, input });
    if (!through(answers.throttle)) return { answers, held: true };
  }
  if (ask.workspace) {
    answers.workspace = await deps.gates.acquire_workspace_place(
      { ...run, ...(ask.priority !== undefined && { priority: ask.priority, input }) },
      { forBatch: true },
    );
    if (!through(answers.workspace)) return { answers, held: true };
  }
  return { answers, held: false };
}

/**
 * Whether the run ends after this top-level batch: a failure or a stop ends it, and so does the last step
 * of the definition gone through. What follows then (the output template, the closing event) needs no place.
 */
function endsRun(batch: StepBatch, next: BatchNext, reached: number): boolean {
  if (next.kind === 'fail' || next.kind === 'stop') return true;
  return next.kind === 'continue' && reached === batch.steps.length && batch.admission!.reaches_end;
}

function recordStepMetrics(kind: string, record: StepRecord, seconds: number): void {
  metrics.stepDuration.observe({ kind, status: record.status }, seconds);
  if (record.error) metrics.activityFailures.inc({ activity: 'run_steps', code: record.error.code });
}

async function runStep(
  step: LeafStep,
  context: ExpressionContext,
  batch: StepBatch,
  deps: StepRunnerDeps,
): Promise<StepOutcome> {
  const evaluation: StepEvaluation = {
    budget: pausingBudget(),
    evaluate: workspaceEvaluator(deps.compute, batch.workspace_id),
  };
  const started = new Date();
  try {
    if (step.if !== undefined && !isTruthy(await evaluate(evaluation, step.if, context)))
      return { record: skipped(step) };
    switch (step.kind) {
      case 'rules':
        return await runRules(step, context, evaluation, started);
      case 'connector':
        return await runNetworkStep(step, started, deps.slots, async (signal) => {
          const resolved = (await resolve(step.request, context, evaluation)) as HttpRequestSpec;
          const request: HttpRequestSpec = { ...resolved, method: resolved.method ?? 'GET' };
          const meta = {
            workspaceId: batch.workspace_id,
            secretPointers: secretTemplatePointers(step.request),
          };
          return { request, meta, call: () => deps.connector(request, meta, signal) };
        });
      case 'ai':
        return await runNetworkStep(step, started, deps.slots, async (signal) => {
          const request = await aiRequest(step, context, evaluation);
          const configuration = { system: step.system ?? null, prompt: step.prompt };
          const meta = {
            workspaceId: batch.workspace_id,
            secretPointers: secretTemplatePointers(configuration),
          };
          return { request, meta, call: () => deps.ai(request, meta, signal) };
        });
      case 'approval':
        return await requestApproval(step, context, evaluation, started);
      case 'sleep':
        return await beginSleep(step, context, evaluation, started);
      case 'wait_for_event':
        return await beginEventWait(step, context, batch, evaluation, deps, started);
    }
  } catch (error) {
    if (error instanceof ExpressionError) {
      return failed(step, started, null, {
        code: STEP_ERROR_CODES.expression,
        message: `Expression "${error.expression}" failed: ${error.message}`,
      });
    }
    throw error;
  }
}

/** First matching rule wins; no match gives `default` (docs/definitions.md#rules). */
async function runRules(
  step: RulesStep,
  context: ExpressionContext,
  evaluation: StepEvaluation,
  started: Date,
): Promise<StepOutcome> {
  let output: unknown = null;
  let action: 'continue' | 'fail' | 'stop' = 'continue';
  let message: string | undefined;
  let matched: number | null = null;
  for (const [index, rule] of step.rules.entries()) {
    if (!isTruthy(await evaluate(evaluation, rule.when, context))) continue;
    matched = index;
    output = rule.output === undefined ? null : await resolve(rule.output, context, evaluation);
    action = rule.action ?? 'continue';
    if (rule.message !== undefined) message = String(await resolve(rule.message, context, evaluation));
    break;
  }
  if (matched === null && step.default !== undefined)
    output = await resolve(step.default, context, evaluation);
  const problem = stepDataProblem(output, MAX_STEP_OUTPUT_BYTES);
  if (problem) {
    return failed(step, started, undefined, {
      code: DATA_LIMIT_CODES.output,
      message: `The step's output ${problem}.`,
    });
  }
  if (action === 'fail') {
    return failed(step, started, undefined, {
      code: STEP_ERROR_CODES.ruleFailed,
      message: message ?? `Rule ${(matched ?? 0) + 1} of step "${step.id}" failed the execution.`,
    });
  }
  const record: StepRecord = {
    ...timing(started),
    id: step.id,
    status: 'success',
    attempts: 1,
    output,
    error: null,
  };
  if (action === 'stop') return { record: { ...record, stop: true }, next: { kind: 'stop' } };
  return { record };
}

interface PreparedCall<T> {
  request: HttpRequestSpec | AiRequestSpec;
  meta: StepMeta;
  call: () => Promise<T>;
}

/**
 * The record of a step that has not finished after its first attempt: running (a connector or ai step
 * whose attempts go on as an activity) or waiting (an approval for its decision, a sleep for its timer).
 */
function unfinishedRecord(
  step: LeafStep,
  status: 'running' | 'waiting',
  started: Date,
  input: unknown,
): StepRecord {
  return {
    id: step.id,
    status,
    started_at: started.toISOString(),
    finished_at: null,
    attempts: 1,
    input,
    output: null,
    error: null,
  };
}

/**
 * A connector or ai step's first attempt. Its templates are resolved first (secrets templates stay as
 * written: the call resolves them, so secret values never reach history). A retryable failure hands the
 * step over to an activity for the attempts left (`next: retry`), visible to describe and Temporal UI.
 */
async function runNetworkStep<T>(
  step: ConnectorStep | AiStep,
  started: Date,
  slots: WorkspaceStepSlots | undefined,
  prepare: (signal: AbortSignal) => Promise<PreparedCall<T>>,
): Promise<StepOutcome> {
  const canceled = Context.current().cancellationSignal;
  const timeoutMs = durationMs(attemptTimeoutOf(step));
  const deadline = AbortSignal.timeout(timeoutMs);
  const { request, meta, call } = await prepare(AbortSignal.any([canceled, deadline]));
  const inputProblem = stepDataProblem(request, MAX_STEP_INPUT_BYTES);
  if (inputProblem) return inputTooLarge(step, started, inputProblem);
  // The workspace holds its share of this worker's local calls: the step runs as an activity instead.
  const release = slots ? slots.tryAcquire(meta.workspaceId) : () => undefined;
  if (!release) {
    metrics.stepsDeferred.inc({ kind: step.kind });
    return {
      record: { ...unfinishedRecord(step, 'running', started, request), attempts: 0 },
      next: { kind: 'defer', request, meta },
    };
  }
  let output: T;
  try {
    output = await call();
  } catch (error) {
    if (canceled.aborted)
      throw canceled.reason instanceof CancelledFailure
        ? canceled.reason
        : new CancelledFailure('The step was canceled.');
    const failure = deadline.aborted
      ? ApplicationFailure.retryable(`Step "${step.id}" timed out.`, STEP_ERROR_CODES.timeout)
      : toApplicationFailure(error);
    const code = failure.type ?? STEP_ERROR_CODES.stepFailed;
    const retry = retryOf(step);
    if (failure.nonRetryable || retry.max_attempts <= 1)
      return failed(step, started, request, { code, message: failure.message });
    const delayMs =
      failure.nextRetryDelay != null
        ? msToNumber(failure.nextRetryDelay)
        : durationMs(retry.initial_interval);
    const finished = new Date();
    return {
      record: {
        ...unfinishedRecord(step, 'running', started, request),
        error: { code, message: failure.message },
        next_attempt_at: new Date(finished.getTime() + delayMs).toISOString(),
      },
      next: { kind: 'retry', request, meta, delay_ms: delayMs },
    };
  } finally {
    release();
  }
  const problem = stepDataProblem(output, MAX_STEP_OUTPUT_BYTES);
  if (problem) {
    return failed(step, started, request, {
      code: DATA_LIMIT_CODES.output,
      message: `The step's output ${problem}.`,
    });
  }
  return {
    record: {
      ...timing(started),
      id: step.id,
      status: 'success',
      attempts: 1,
      input: request,
      output,
      error: null,
    },
  };
}

async function aiRequest(
  step: AiStep,
  context: ExpressionContext,
  evaluation: StepEvaluation,
): Promise<AiRequestSpec> {
  const configuration = { system: step.system ?? null, prompt: step.prompt };
  const resolved = (await resolve(configuration, context, evaluation)) as {
    system: string | null;
    prompt: unknown;
  };
  return {
    model: step.model ?? null,
    system: resolved.system,
    prompt: typeof resolved.prompt === 'string' ? resolved.prompt : JSON.stringify(resolved.prompt),
    temperature: step.temperature ?? null,
    max_tokens: step.max_tokens ?? null,
    output_schema: step.output_schema ?? null,
  };
}

/** An approval starts waiting: its input is the resolved message and how long the decision may take. */
async function requestApproval(
  step: ApprovalStep,
  context: ExpressionContext,
  evaluation: StepEvaluation,
  started: Date,
): Promise<StepOutcome> {
  const input = {
    message: await resolve(step.message ?? null, context, evaluation),
    timeout: step.timeout ?? null,
  };
  const problem = stepDataProblem(input, MAX_STEP_INPUT_BYTES);
  if (problem) return inputTooLarge(step, started, problem);
  return {
    record: unfinishedRecord(step, 'waiting', started, input),
    next: { kind: 'approval', timeout: step.timeout ?? null },
  };
}

/**
 * A sleep starts: its input is its duration or its resolved `until`. It waits for its timer in the workflow
 * (`next: sleep`), or, when its time has passed already, succeeds at once.
 */
async function beginSleep(
  step: SleepStep,
  context: ExpressionContext,
  evaluation: StepEvaluation,
  started: Date,
): Promise<StepOutcome> {
  const input: SleepRequestSpec =
    step.until === undefined
      ? { duration: step.duration! }
      : { until: await resolve(step.until, context, evaluation) };
  const problem = stepDataProblem(input, MAX_STEP_INPUT_BYTES);
  if (problem) return inputTooLarge(step, started, problem);
  const wake = wakeTime(step, input, started.getTime());
  if ('error' in wake) return failed(step, started, input, wake.error);
  const until = new Date(wake.at).toISOString();
  if (wake.at <= started.getTime()) {
    const output: SleepOutput = { slept_until: until };
    return {
      record: { ...timing(started), id: step.id, status: 'success', attempts: 1, input, output, error: null },
    };
  }
  return {
    record: { ...unfinishedRecord(step, 'waiting', started, input), waiting_for: { type: 'timer', until } },
    next: { kind: 'sleep', until, delay_ms: wake.at - Date.now() },
  };
}

/**
 * A wait_for_event starts: filed among its event's waiters (event-waits.ts), it waits in the workflow
 * (`next: event`) until an event wakes it or its timeout passes; an event that came while it was being
 * filed wakes it at once.
 */
async function beginEventWait(
  step: WaitForEventStep,
  context: ExpressionContext,
  batch: StepBatch,
  evaluation: StepEvaluation,
  deps: StepRunnerDeps,
  started: Date,
): Promise<StepOutcome> {
  const wait = await deps.eventWaits.beginEventWait(
    step,
    context,
    { workspaceId: batch.workspace_id, executionId: batch.execution.id, path: batch.path ?? [] },
    // Each evaluation with a budget of its own, as the dispatcher's are (src/events/wake.ts): a burst of
    // events that arrived while the wait was filed must not use up the budget of the one that matches.
    (expression, over) => evaluation.evaluate(expression, over, STEP_LIMITS, pausingBudget()),
    started,
  );
  const { input } = wait;
  if (!wait.waiting) {
    return {
      record: {
        ...timing(started),
        id: step.id,
        status: 'success',
        attempts: 1,
        input,
        output: wait.event,
        error: null,
      },
    };
  }
  const until = wait.until.toISOString();
  return {
    record: {
      ...unfinishedRecord(step, 'waiting', started, input),
      waiting_for: { type: 'event', event: step.event, until },
    },
    next: { kind: 'event', until, delay_ms: wait.until.getTime() - Date.now(), on_timeout: input.on_timeout },
  };
}

/** How one step evaluates: its shared budget, and where each expression runs (evaluation.ts). */
interface StepEvaluation {
  budget: EvaluationBudget;
  evaluate: Evaluate;
}

function evaluate(
  evaluation: StepEvaluation,
  expression: string,
  context: ExpressionContext,
): Promise<unknown> {
  return evaluation.evaluate(expression, context, STEP_LIMITS, evaluation.budget);
}

/** Templates, except those reading secrets, which only the step's call resolves. */
function resolve(value: unknown, context: ExpressionContext, evaluation: StepEvaluation): Promise<unknown> {
  return resolveTemplates(value, context, {
    defer: readsSecrets,
    limits: STEP_LIMITS,
    budget: evaluation.budget,
    evaluate: evaluation.evaluate,
  });
}

function timing(started: Date): Pick<StepRecord, 'started_at' | 'finished_at'> {
  return { started_at: started.toISOString(), finished_at: new Date().toISOString() };
}

function skipped(step: LeafStep): StepRecord {
  return {
    id: step.id,
    status: 'skipped',
    started_at: null,
    finished_at: null,
    attempts: 0,
    output: null,
    error: null,
  };
}

/** The step failed and fails the execution. `input` null: none to show; undefined: left to the reader. */
function failed(
  step: LeafStep,
  started: Date,
  input: unknown,
  error: { code: string; message: string },
): StepOutcome {
  const record: StepRecord = {
    ...timing(started),
    id: step.id,
    status: 'failed',
    attempts: 1,
    output: null,
    error,
  };
  if (input !== undefined) record.input = input;
  return { record, next: { kind: 'fail', error: { step: step.id, ...error } } };
}

/** The step's input (its configuration after templates) is past the limit stepDataProblem describes. */
function inputTooLarge(step: LeafStep, started: Date, problem: string): StepOutcome {
  return failed(step, started, null, {
    code: DATA_LIMIT_CODES.input,
    message: `The input of step "${step.id}" (its configuration after templates) ${problem}.`,
  });
}

function toApplicationFailure(error: unknown): ApplicationFailure {
  if (error instanceof ApplicationFailure) return error;
  return ApplicationFailure.retryable((error as Error).message ?? String(error), STEP_ERROR_CODES.stepFailed);
}
