/**
 * The execution workflow: interprets a definition snapshot, one activity per step (activity id = step
 * id, summary = step name), and records nothing outside Temporal. History is the execution record: the
 * API reads each step's input (the activity's scheduled input), output, attempts and timings from it.
 *
 * Deterministic code only (Temporal's sandbox): expressions are evaluated with step-count limits.
 * No module-level mutable state: with reuseV8Context, module scope is shared between runs.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  isCancellation,
  proxyActivities,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { ConnectorStep, RulesStep, Step } from '../../src/definitions/schema';
import {
  ExpressionError,
  evaluateExpression,
  findReferences,
  isTruthy,
  readsSecrets,
  resolveTemplates,
  secretTemplatePointers,
  templateExpressions,
} from '../shared/expressions';
import {
  STEP_ERROR_CODES,
  type ExecutionError,
  type ExecutionInput,
  type ExecutionResult,
  type ExpressionContext,
  type HttpRequestSpec,
  type RulesActivityInput,
} from '../shared/execution-types';
import { stepActivityOptions } from './step-options';

/** One run's state, passed explicitly to every helper. */
interface Run {
  workspaceId: string;
  context: ExpressionContext;
}

interface StepOutcome {
  output: unknown;
  /** A rules `stop`: the execution ends with success, later steps are skipped. */
  stop?: boolean;
}

export async function execution(input: ExecutionInput): Promise<ExecutionResult> {
  const run: Run = {
    workspaceId: input.workspaceId,
    context: {
      input: input.input,
      steps: {},
      execution: {
        id: workflowInfo().workflowId,
        workflow: input.workflow.id,
        version: input.workflow.version,
      },
    },
  };
  for (const step of input.workflow.definition.steps) {
    if (step.if !== undefined && !isTruthy(await evaluate(step, step.if, run.context))) {
      run.context.steps[step.id] = { status: 'skipped', output: null };
      continue;
    }
    const outcome = await runStep(step, run);
    run.context.steps[step.id] = { status: 'success', output: outcome.output };
    if (outcome.stop) return { status: 'success', stopped_at: step.id };
  }
  return { status: 'success' };
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
      case 'approval':
        // Accepted by the definition schema; the engine for these kinds is not built yet.
        return fail(
          step.id,
          STEP_ERROR_CODES.unsupported,
          `Step kind "${step.kind}" is not supported by this version of the worker.`,
        );
    }
  } catch (error) {
    if (isCancellation(error)) throw error;
    if (error instanceof ActivityFailure) return failFromActivity(step.id, error);
    throw error;
  }
}

async function runRules(step: RulesStep, run: Run, activities: Activities): Promise<StepOutcome> {
  const request: RulesActivityInput = { rules: step.rules, data: dataReadBy(step, run.context) };
  if (step.default !== undefined) request.default = step.default;
  const result = await activities.rules(request);
  if (result.action === 'fail') {
    const message =
      result.message ?? `Rule ${(result.matched ?? 0) + 1} of step "${step.id}" failed the execution.`;
    return fail(step.id, STEP_ERROR_CODES.ruleFailed, message);
  }
  return { output: result.output, stop: result.action === 'stop' };
}

async function runConnector(step: ConnectorStep, run: Run, activities: Activities): Promise<unknown> {
  const resolved = (await resolve(step, step.request, run.context)) as HttpRequestSpec;
  const request: HttpRequestSpec = { ...resolved, method: resolved.method ?? 'GET' };
  return activities.connector_http(request, {
    workspaceId: run.workspaceId,
    secretPointers: secretTemplatePointers(step.request),
  });
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

/** Resolves `{{ }}` templates except those reading secrets, which only the activity may resolve. */
async function resolve(step: Step, value: unknown, context: ExpressionContext): Promise<unknown> {
  try {
    return await resolveTemplates(value, context, { defer: readsSecrets });
  } catch (error) {
    return expressionFailure(step, error);
  }
}

async function evaluate(step: Step, expression: string, context: ExpressionContext): Promise<unknown> {
  try {
    return await evaluateExpression(expression, context);
  } catch (error) {
    return expressionFailure(step, error);
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

/**
 * Fails the execution (Temporal status Failed, which operators expect in Temporal UI). The error also
 * goes into the memo so execution lists can show it without reading each history.
 */
function fail(step: string, code: string, message: string): never {
  const error: ExecutionError = { step, code, message };
  upsertMemo({ error });
  throw ApplicationFailure.create({ type: code, message, nonRetryable: true, details: [error] });
}
