/**
 * The execution workflow: interprets a definition snapshot, one activity per step (activity id = step
 * id, summary = step name), and records nothing outside Temporal. History is the execution record: the
 * API reads each step's input (the activity's scheduled input), output, attempts and timings from it.
 *
 * Retry from the failed step is a Temporal reset to the workflow task that failed the run: in the reset
 * run (run id differs from the first run's), the step failure found at that point waits for the `retry`
 * signal meant for this run, instead of failing again, then runs the step anew (with a corrected input
 * if one came). Earlier retries' signals are in the history and are consumed at the same points on
 * replay, so a retried run that fails can be retried again. (The SDK's history replayer runs every
 * history under the first run's id, so it cannot replay a reset run; workers see the real run id.)
 *
 * Deterministic code only (Temporal's sandbox): expressions are evaluated with step-count limits.
 * No module-level mutable state: with reuseV8Context, module scope is shared between runs.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  defineSignal,
  defineUpdate,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  upsertMemo,
  upsertSearchAttributes,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { Duration } from '@temporalio/common';
import type { Activities } from '../activities';
import type { AiStep, ApprovalStep, ConnectorStep, RulesStep, Step } from '../../src/definitions/schema';
import {
  DATA_LIMIT_CODES,
  EvaluationBudget,
  ExpressionError,
  evaluateExpression,
  findReferences,
  isTruthy,
  readsSecrets,
  resolveTemplates,
  secretTemplatePointers,
  stepDataProblem,
  templateExpressions,
  WORKFLOW_LIMITS,
} from '../shared/expressions';
import {
  DECIDE_UPDATE,
  RETRY_SIGNAL,
  STEP_ERROR_CODES,
  type AiRequestSpec,
  type ApprovalDecision,
  type ApprovalDecisionRequest,
  type ExecutionError,
  type ExecutionInput,
  type ExecutionResult,
  type ExpressionContext,
  type HttpRequestSpec,
  type RetrySignal,
  type RulesActivityInput,
} from '../shared/execution-types';
import type { EventKind } from '../shared/event-types';
import { WAITING_ATTRIBUTE } from '../shared/search-attributes';
import { stepActivityOptions } from './step-options';

/** Resumes a reset run at its failed step (see the header). */
export const retrySignal = defineSignal<[RetrySignal]>(RETRY_SIGNAL);
/** Approve or reject the approval step that is waiting. */
export const decideUpdate = defineUpdate<ApprovalDecision, [ApprovalDecisionRequest]>(DECIDE_UPDATE);

/**
 * Emitting an event is a local activity: no extra round trip, recorded in history (so a replay never
 * emits twice), retried until the database answers (an event is never dropped).
 */
const { emit_event } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
});

/** One run's state, passed explicitly to every helper. */
interface Run {
  workspaceId: string;
  workflow: { id: string; version: number };
  context: ExpressionContext;
  /** The approval step waiting for a decision, if any. */
  waitingFor?: string;
  decision?: ApprovalDecision;
  /** Retry signals in arrival order, and how many of them were consumed. */
  retries: RetrySignal[];
  consumedRetries: number;
  /** True once the retry meant for this very run was consumed. */
  retriedThisRun: boolean;
  /** Evaluation steps of the current workflow task (WORKFLOW_LIMITS): reset whenever the run waits. */
  budget: EvaluationBudget;
}

/** A step failed: the main loop either waits for a retry (reset run) or fails the execution with it. */
class StepFailure extends Error {
  constructor(readonly error: ExecutionError) {
    super(error.message);
  }
}

interface StepOutcome {
  output: unknown;
  /** A rules `stop`: the execution ends with success, later steps are skipped. */
  stop?: boolean;
}

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
    retries: [],
    consumedRetries: 0,
    retriedThisRun: false,
    budget: new EvaluationBudget(),
  };
  setHandler(retrySignal, (signal) => {
    run.retries.push(signal);
  });
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
    throw error;
  }
}

async function runSteps(input: ExecutionInput, run: Run): Promise<ExecutionResult> {
  await emit(run, 'execution.started', 'running');
  const steps = input.workflow.definition.steps;
  for (let index = 0; index < steps.length;) {
    const step = steps[index]!;
    try {
      if (step.if !== undefined && !isTruthy(await evaluate(step, step.if, run))) {
        run.context.steps[step.id] = { status: 'skipped', output: null };
        index += 1;
        continue;
      }
      const outcome = await runStep(step, run);
      run.budget.reset(); // the step waited for its activity: this is a new workflow task
      run.context.steps[step.id] = { status: 'success', output: outcome.output };
      if (outcome.stop) return await succeed(run, { status: 'success', stopped_at: step.id });
      index += 1;
    } catch (error) {
      if (!(error instanceof StepFailure)) throw error;
      if (await awaitRetry(run)) {
        run.budget.reset(); // it waited for the retry signal: a new workflow task
        continue; // the same step again
      }
      return await failExecution(run, error.error);
    }
  }
  return await succeed(run, { status: 'success' });
}

async function succeed(run: Run, result: ExecutionResult): Promise<ExecutionResult> {
  await emit(run, 'execution.completed', 'success');
  return result;
}

/** Emits an execution event (CONTRACT §6) about this run. */
async function emit(
  run: Run,
  event: EventKind,
  status: string,
  error: ExecutionError | null = null,
): Promise<void> {
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

/** In a reset run whose retry has not been consumed yet, waits for the next retry signal and applies it. */
async function awaitRetry(run: Run): Promise<boolean> {
  const info = workflowInfo();
  if (info.runId === info.firstExecutionRunId || run.retriedThisRun) return false;
  await condition(() => run.retries.length > run.consumedRetries);
  const signal = run.retries[run.consumedRetries]!;
  run.consumedRetries += 1;
  run.retriedThisRun = signal.for_run === info.runId;
  if (signal.input !== undefined) run.context.input = signal.input;
  return true;
}

async function runStep(step: Step, run: Run): Promise<StepOutcome> {
  const activities = proxyActivities<Activities>(stepActivityOptions(step));
  try {
    switch (step.kind) {
      case 'rules':
        return await runRules(step, run, activities);
      case 'connector':
        return { output: await runConnector(step, run, activities) };
      case 'ai':
        return { output: await runAi(step, run, activities) };
      case 'approval':
        return { output: await runApproval(step, run, activities) };
    }
  } catch (error) {
    // The workflow ends as canceled only when the cancellation itself is thrown, not the activity failure wrapping it.
    if (isCancellation(error)) throw error instanceof ActivityFailure && error.cause ? error.cause : error;
    if (error instanceof ActivityFailure) return failFromActivity(step.id, error);
    throw error;
  }
}

async function runRules(step: RulesStep, run: Run, activities: Activities): Promise<StepOutcome> {
  let data: Partial<ExpressionContext>;
  try {
    data = dataReadBy(step, run.context);
  } catch (error) {
    // A definition saved before a check was added (e.g. unsafe regular expressions) fails its step.
    return expressionFailure(step, error);
  }
  const request: RulesActivityInput = { rules: step.rules, data };
  if (step.default !== undefined) request.default = step.default;
  checkInputSize(step, request);
  const result = await activities.rules(request);
  if (result.action === 'fail') {
    const message =
      result.message ?? `Rule ${(result.matched ?? 0) + 1} of step "${step.id}" failed the execution.`;
    return fail(step.id, STEP_ERROR_CODES.ruleFailed, message);
  }
  return { output: result.output, stop: result.action === 'stop' };
}

async function runConnector(step: ConnectorStep, run: Run, activities: Activities): Promise<unknown> {
  const resolved = (await resolve(step, step.request, run)) as HttpRequestSpec;
  const request: HttpRequestSpec = { ...resolved, method: resolved.method ?? 'GET' };
  checkInputSize(step, request);
  return activities.connector_http(request, {
    workspaceId: run.workspaceId,
    secretPointers: secretTemplatePointers(step.request),
  });
}

async function runAi(step: AiStep, run: Run, activities: Activities): Promise<unknown> {
  const configuration = { system: step.system ?? null, prompt: step.prompt };
  const resolved = (await resolve(step, configuration, run)) as {
    system: string | null;
    prompt: unknown;
  };
  const request: AiRequestSpec = {
    model: step.model ?? null,
    system: resolved.system,
    prompt: typeof resolved.prompt === 'string' ? resolved.prompt : JSON.stringify(resolved.prompt),
    temperature: step.temperature ?? null,
    max_tokens: step.max_tokens ?? null,
    output_schema: step.output_schema ?? null,
  };
  checkInputSize(step, request);
  return activities.ai(request, {
    workspaceId: run.workspaceId,
    secretPointers: secretTemplatePointers(configuration),
  });
}

/**
 * An approval: the `approval` activity records the request, then the execution waits (status
 * `waiting`) for the `decide` update, at most the step's `timeout`.
 */
async function runApproval(step: ApprovalStep, run: Run, activities: Activities): Promise<ApprovalDecision> {
  const message = await resolve(step, step.message ?? null, run);
  checkInputSize(step, message);
  run.waitingFor = step.id;
  run.decision = undefined;
  upsertSearchAttributes([{ key: WAITING_ATTRIBUTE, value: true }]);
  await activities.approval({ message, timeout: step.timeout ?? null });
  await emit(run, 'execution.waiting', 'waiting');
  let decided = true;
  if (step.timeout) decided = await condition(() => run.decision !== undefined, step.timeout as Duration);
  else await condition(() => run.decision !== undefined);
  run.waitingFor = undefined;
  upsertSearchAttributes([{ key: WAITING_ATTRIBUTE, value: false }]);
  // Set by the update handler while this code awaited (the compiler cannot see that).
  const decision = run.decision as ApprovalDecision | undefined;
  if (!decided || !decision) {
    return fail(
      step.id,
      STEP_ERROR_CODES.approvalTimedOut,
      `No decision on step "${step.id}" within ${step.timeout}.`,
    );
  }
  if (decision.decision === 'rejected') {
    return fail(
      step.id,
      STEP_ERROR_CODES.approvalRejected,
      `Step "${step.id}" was rejected by ${decision.decided_by}${decision.comment ? `: ${decision.comment}` : '.'}`,
    );
  }
  return decision;
}

/**
 * The part of the context a rules step reads (its `when` expressions and output templates), so that
 * history records exactly what the rules saw, and no more: a long workflow does not copy every earlier
 * output into every rules step.
 */
function dataReadBy(step: RulesStep, context: ExpressionContext): Partial<ExpressionContext> {
  const expressions = step.rules.map((rule) => rule.when);
  const templated = JSON.stringify([step.rules.map((rule) => [rule.output, rule.message]), step.default]);
  expressions.push(...templateExpressions(templated));
  const data: Partial<ExpressionContext> = {};
  const stepIds = new Set<string>();
  let allSteps = false;
  for (const expression of expressions) {
    const refs = findReferences(expression);
    if (refs.roots.has('input')) data.input = context.input;
    if (refs.roots.has('execution')) data.execution = context.execution;
    refs.steps.forEach((id) => stepIds.add(id));
    allSteps ||= refs.allSteps;
  }
  if (allSteps) data.steps = context.steps;
  else if (stepIds.size > 0) {
    data.steps = Object.fromEntries(
      [...stepIds].filter((id) => id in context.steps).map((id) => [id, context.steps[id]!]),
    );
  }
  return data;
}

/**
 * Resolves `{{ }}` templates except those reading secrets, which only the activity may resolve. Like
 * `if`, within the workflow task's budget (WORKFLOW_LIMITS), so that no definition can stall the task.
 */
async function resolve(step: Step, value: unknown, run: Run): Promise<unknown> {
  try {
    return await resolveTemplates(value, run.context, {
      defer: readsSecrets,
      limits: WORKFLOW_LIMITS,
      budget: run.budget,
    });
  } catch (error) {
    return expressionFailure(step, error);
  }
}

async function evaluate(step: Step, expression: string, run: Run): Promise<unknown> {
  try {
    return await evaluateExpression(expression, run.context, WORKFLOW_LIMITS, run.budget);
  } catch (error) {
    return expressionFailure(step, error);
  }
}

/**
 * A step's input (its configuration after templates; for rules, the data they read) must fit in a
 * Temporal payload: templates can build more than Temporal accepts, and an activity it refuses to
 * schedule would leave the run failing workflow tasks forever. The step fails instead.
 */
function checkInputSize(step: Step, input: unknown): void {
  const problem = stepDataProblem(input);
  if (problem) {
    const what =
      step.kind === 'rules' ? 'its rules and the data they read' : 'its configuration after templates';
    fail(step.id, DATA_LIMIT_CODES.input, `The input of step "${step.id}" (${what}) ${problem}.`);
  }
}

function expressionFailure(step: Step, error: unknown): never {
  if (error instanceof ExpressionError) {
    return fail(
      step.id,
      STEP_ERROR_CODES.expression,
      `Expression "${error.expression}" failed: ${error.message}`,
    );
  }
  throw error;
}

function failFromActivity(stepId: string, error: ActivityFailure): never {
  const cause = error.cause;
  if (cause instanceof ApplicationFailure) {
    return fail(stepId, cause.type ?? STEP_ERROR_CODES.stepFailed, cause.message);
  }
  if (cause?.name === 'TimeoutFailure') {
    return fail(stepId, STEP_ERROR_CODES.timeout, `Step "${stepId}" timed out.`);
  }
  return fail(stepId, STEP_ERROR_CODES.stepFailed, cause?.message ?? error.message);
}

/** A step failed (see StepFailure). */
function fail(step: string, code: string, message: string): never {
  throw new StepFailure({ step, code, message });
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
    message: error.message,
    nonRetryable: true,
    details: [error],
  });
}
