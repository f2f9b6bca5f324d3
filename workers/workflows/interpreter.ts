/**
 * The interpreter of step lists: runs the steps of one frame (the definition's own list, or one run of a
 * container) in order. Consecutive leaf steps (rules, connector, ai, approval, sleep, wait_for_event) go to the `run_steps` local
 * activity in batches (batches.ts), as before containers existed, so a flat definition costs what it did:
 * one workflow task and a marker per batch. A container is run by its module (containers/), which calls
 * back into runList for its step lists; a container's own expressions (its `if`, a map's items, a switch's
 * cases, a loop's `until`) are evaluated by the `evaluate_control` local activity, never here.
 *
 * Deterministic code only (Temporal's sandbox).
 */
import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { Duration } from '@temporalio/common';
import type { Activities } from '../activities';
import type { ContainerStep, LeafStep, Step, WorkflowStep } from '../../core/definitions/schema';
import {
  STEP_ERROR_CODES,
  type AiRequestSpec,
  type ApprovalDecision,
  type BatchNext,
  type ControlRequest,
  type ControlResult,
  type ControlStep,
  type HttpRequestSpec,
  type StepBatchResult,
  type StepRecord,
} from '../../core/execution-types';
import { attemptTimeoutOf, durationMs } from '../../core/step-defaults';
import { holdsApproval } from '../../core/definitions/nested-steps';
import { batchFrom, contextFor, describeBatch } from './batches';
import { retryActivityOptions } from './step-options';
import {
  errorPath,
  ExecutionStop,
  frameContext,
  Halted,
  StepFailure,
  waitKey,
  type Frame,
  type ListOutcome,
  type Run,
  type Runner,
} from './frame';
import { runParallel } from './containers/parallel';
import { runMap } from './containers/map';
import { runSwitch } from './containers/switch';
import { runLoop } from './containers/loop';
import { runSubWorkflow } from './containers/sub-workflow';
import { sleepUntil } from './sleep';
import { waitForEvent } from './event-wait';
import { waitBegan, waitEnded } from './waiting';
import { batchAdmission, settleBatchAdmission } from './admission';

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

const { evaluate_control } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '1m',
  // An expression's failure is a result; what throws is the worker's trouble, retried until it is over.
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
});

export function createRunner(run: Run): Runner {
  const runner: Runner = {
    run,
    runList: (frame, steps) => runList(runner, frame, steps),
    control: (frame, step, purpose) => control(run, frame, step, purpose),
  };
  return runner;
}

/** Runs `steps` from `from` on; the output of the last step that ran. */
export async function runList(runner: Runner, frame: Frame, steps: Step[], from = 0): Promise<ListOutcome> {
  const { run } = runner;
  const outcome: ListOutcome = { ran: false, output: null };
  let index = from;
  while (index < steps.length) {
    if (frame.halt.stopped) throw new Halted();
    const step = steps[index]!;
    checkHistorySize(run, frame, step);
    const batch = batchFrom(steps, index);
    if (batch.length === 0) {
      const output = await runContainer(runner, frame, step as ContainerStep | WorkflowStep);
      if (output !== SKIPPED) Object.assign(outcome, { ran: true, output });
      index += 1;
      continue;
    }
    const reachesEnd = frame.path.length === 0 && index + batch.length >= steps.length;
    const result = await runBatch(run, frame, batch, reachesEnd);
    for (const record of result.records) {
      remember(frame, record);
      if (record.status === 'success') Object.assign(outcome, { ran: true, output: record.output });
    }
    index += result.records.length;
    const last = batch[result.records.length - 1]!;
    // The usual answer, `continue`, needs no await: every promise in workflow code costs the SDK a
    // captured stack trace (docs/benchmarks.md#against-the-tight-floor-2026-11-27).
    if (result.next.kind === 'continue') continue;
    const output = await follow(run, frame, last, result.next, result.records.at(-1));
    if (output !== undefined) Object.assign(outcome, { ran: true, output: output.value });
  }
  return outcome;
}

/** Marks a container whose `if` did not hold. */
const SKIPPED = Symbol('skipped');

async function runContainer(
  runner: Runner,
  frame: Frame,
  step: ContainerStep | WorkflowStep,
): Promise<unknown> {
  const entered = await control(runner.run, frame, step, 'enter');
  if (entered.skip) {
    frame.steps[step.id] = { status: 'skipped', output: null };
    return SKIPPED;
  }
  if (entered.error)
    throw new StepFailure({ step: step.id, path: errorPath(frame, step.id), ...entered.error });
  let output: unknown;
  switch (step.kind) {
    case 'parallel':
      output = await runParallel(runner, frame, step);
      break;
    case 'map':
      output = await runMap(runner, frame, step, entered.items ?? []);
      break;
    case 'switch':
      output = await runSwitch(runner, frame, step, entered.case ?? null);
      break;
    case 'loop':
      output = await runLoop(runner, frame, step);
      break;
    case 'workflow':
      output = await runSubWorkflow(runner.run, frame, step, runner.run.depth);
      break;
  }
  frame.steps[step.id] = { status: 'success', output };
  return output;
}

/** Asks evaluate_control about a container; recorded in history, so a replay never evaluates again. */
async function control(
  run: Run,
  frame: Frame,
  step: ContainerStep | WorkflowStep,
  purpose: 'enter' | 'until',
): Promise<ControlResult> {
  const request: ControlRequest = {
    workspace_id: run.workspaceId,
    purpose,
    step: controlStep(step),
    context: contextFor(frameContext(run, frame), [controlStep(step)]),
  };
  if (frame.path.length > 0) request.path = frame.path;
  return evaluate_control(request);
}

/** A container without its step lists: what evaluate_control needs. */
function controlStep(step: ContainerStep | WorkflowStep): ControlStep {
  switch (step.kind) {
    case 'workflow': {
      const { input: _input, ...rest } = step;
      return rest;
    }
    case 'parallel':
      return { ...step, branches: step.branches.map((branch) => ({ id: branch.id })) };
    case 'map': {
      const { steps, ...rest } = step;
      return holdsApproval(steps) ? { ...rest, holds_approval: true } : rest;
    }
    case 'loop': {
      const { steps: _steps, ...rest } = step;
      return rest;
    }
    case 'switch': {
      const { cases, default: fallback, ...rest } = step;
      return {
        ...rest,
        cases: cases.map(({ id, when }) => ({ id, when })),
        has_default: fallback !== undefined,
      };
    }
  }
}

/** What the workflow does after a batch, by the batch's `next`; the last step's output when it has one now. */
async function follow(
  run: Run,
  frame: Frame,
  step: LeafStep,
  next: BatchNext,
  record: StepRecord | undefined,
): Promise<{ value: unknown } | undefined> {
  switch (next.kind) {
    case 'continue':
      return undefined;
    case 'stop':
      throw new ExecutionStop(step.id);
    case 'fail':
      throw new StepFailure(
        frame.path.length > 0 ? { ...next.error, path: errorPath(frame, step.id) } : next.error,
      );
    case 'retry':
    case 'defer':
      return { value: await retryAsActivity(frame, step, next) };
    case 'approval':
      return { value: await waitForDecision(run, frame, step, next.timeout) };
    case 'sleep':
      return { value: await sleepUntil(run, frame, step, next) };
    case 'event':
      return { value: await waitForEvent(run, frame, step, next, record!) };
  }
}

async function runBatch(
  run: Run,
  frame: Frame,
  steps: LeafStep[],
  reachesEnd: boolean,
): Promise<StepBatchResult> {
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
  const admission =
    frame.path.length === 0 && run.admission ? batchAdmission(run.admission, reachesEnd) : undefined;
  const result = await run_steps({
    workspace_id: run.workspaceId,
    execution: run.context.execution,
    steps,
    context: contextFor(frameContext(run, frame), steps),
    report_subscriptions: reportSubscriptions,
    ...(frame.path.length > 0 && { path: frame.path }),
    ...(admission && { admission }),
  });
  const now = workflowInfo().historyLength;
  run.taskBytes = { task: now, bytes: (run.taskBytes.task === now ? run.taskBytes.bytes : 0) + result.bytes };
  if (result.subscribed) run.subscribed = { kinds: result.subscribed, task: now };
  if (result.encrypted) run.encrypted = true;
  if (admission && run.admission) {
    // The run's gates (admission.ts): queued at one, the batch ran no step and runs again once let through.
    // A promise only when the run waits at a gate: see runList on promises.
    let settled = settleBatchAdmission(run.admission, result);
    if (settled instanceof Promise) settled = await settled;
    if (settled === 'again') return runBatch(run, frame, steps, reachesEnd);
    if (settled) throw new StepFailure(settled);
  }
  return result;
}

/** Fails the run with `history_too_large` before `next` when its history nears Temporal's limits. */
function checkHistorySize(run: Run, frame: Frame, next: Step): void {
  const info = workflowInfo();
  // historySize is the size when this workflow task began; add what its local activities recorded since.
  const bytes = info.historySize + (run.taskBytes.task === info.historyLength ? run.taskBytes.bytes : 0);
  if (bytes <= HISTORY_BYTES_LIMIT && info.historyLength <= HISTORY_EVENTS_LIMIT) return;
  const mb = (bytes / (1024 * 1024)).toFixed(1);
  throw new StepFailure({
    step: next.id,
    ...(frame.path.length > 0 && { path: errorPath(frame, next.id) }),
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
export function remember(frame: Frame, record: StepRecord): void {
  if (record.status === 'success' || record.status === 'skipped')
    frame.steps[record.id] = { status: record.status, output: record.output };
}

/**
 * The attempts a connector or ai step has left, as an activity, after the step's retry interval; or, for a
 * step deferred unattempted (its workspace held its share of the worker: workers/activities/step-slots.ts),
 * all its attempts, at once. A nested step's activity id names its run path, so that it is unique.
 */
async function retryAsActivity(
  frame: Frame,
  step: LeafStep,
  next: Extract<BatchNext, { kind: 'retry' | 'defer' }>,
): Promise<unknown> {
  const deferred = next.kind === 'defer';
  if (!deferred) await sleep(Math.max(1, next.delay_ms));
  const options = retryActivityOptions(step, deferred);
  if (frame.path.length > 0) options.activityId = waitKey(frame.path, step.id);
  const activities = proxyActivities<Activities>(options);
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
      throw new StepFailure({
        step: step.id,
        ...(frame.path.length > 0 && { path: errorPath(frame, step.id) }),
        ...describeActivityFailure(step, error),
      });
    throw error;
  }
  frame.steps[step.id] = { status: 'success', output };
  return output;
}

/** An approval waits (status `waiting`) for the `decide` Update, at most the step's `timeout`. */
async function waitForDecision(
  run: Run,
  frame: Frame,
  step: LeafStep,
  timeout: string | null,
): Promise<ApprovalDecision> {
  const key = waitKey(frame.path, step.id);
  run.waiting.set(key, undefined);
  waitBegan(run);
  await run.emit('execution.waiting', 'waiting');
  let decided = true;
  // A halted container (another of its runs failed) stops waiting too; a top-level approval never halts.
  const done = () => run.waiting.get(key) !== undefined || frame.halt.stopped;
  if (timeout) decided = await condition(done, timeout as Duration);
  else await condition(done);
  const decision = run.waiting.get(key);
  run.waiting.delete(key);
  waitEnded(run);
  if (!decision && frame.halt.stopped) throw new Halted();
  const path = frame.path.length > 0 ? { path: errorPath(frame, step.id) } : {};
  if (!decided || !decision) {
    throw new StepFailure({
      step: step.id,
      ...path,
      code: STEP_ERROR_CODES.approvalTimedOut,
      message: `No decision on step "${step.id}" within ${timeout}.`,
    });
  }
  if (decision.decision === 'rejected') {
    throw new StepFailure({
      step: step.id,
      ...path,
      code: STEP_ERROR_CODES.approvalRejected,
      message: `Step "${step.id}" was rejected by ${decision.decided_by}${decision.comment ? `: ${decision.comment}` : '.'}`,
    });
  }
  frame.steps[step.id] = { status: 'success', output: decision };
  return decision;
}

function describeActivityFailure(step: Step, error: ActivityFailure): { code: string; message: string } {
  const cause = error.cause;
  if (cause instanceof ApplicationFailure)
    return { code: cause.type ?? STEP_ERROR_CODES.stepFailed, message: cause.message };
  if (cause?.name === 'TimeoutFailure')
    return { code: STEP_ERROR_CODES.timeout, message: `Step "${step.id}" timed out.` };
  return { code: STEP_ERROR_CODES.stepFailed, message: cause?.message ?? error.message };
}
