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
  ApplicationFailure,
  CancellationScope,
  defineUpdate,
  isCancellation,
  patched,
  proxyLocalActivities,
  setHandler,
  setWorkflowOptions,
  upsertMemo,
  upsertSearchAttributes,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import {
  DECIDE_UPDATE,
  DECISION_TOO_LATE,
  RUN_REQUIRED,
  STEP_ERROR_CODES,
  type ApprovalDecision,
  type ApprovalDecisionRequest,
  type ExecutionInput,
  type ExecutionResult,
} from '../../core/execution-types';
import type { ExecutionError } from '../../core/error-detail';
import type { EventKind } from '../../core/event-types';
import { listenForEventWakes } from './event-wait';
import {
  admit,
  foldIntoBatches,
  holdsPlaces,
  listenForAdmission,
  release,
  type Admission,
} from './admission';
import { isLeafStep } from '../../core/definitions/step-kinds';
import { closeDebounce, waitForQuiet } from './debounce';
import { createRunner, remember, runList } from './interpreter';
import { ERROR_CODE_ATTRIBUTE, QUEUED_ATTRIBUTE } from '../../core/search-attributes';

/** Marks runs that set SwitchyardErrorCode as they fail (GET /v1/executions?error_code=). */
const ERROR_CODE_PATCH = 'error-code-search-attribute';
import { ExecutionStop, frameContext, runKeyOf, StepFailure, topFrame, type Frame, type Run } from './frame';

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

/** The definition's `output` template, evaluated like a container's expressions (workers/activities/control.ts). */
const { evaluate_control: evaluate_output } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '1m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
});

setWorkflowOptions({ versioningBehavior: 'PINNED' }, execution);
export async function execution(input: ExecutionInput): Promise<ExecutionResult> {
  const run: Run = {
    workspaceId: input.workspaceId,
    workflow: { id: input.workflow.id, version: input.workflow.version },
    context: {
      input: input.input,
      execution: {
        id: workflowInfo().workflowId,
        workflow: input.workflow.id,
        version: input.workflow.version,
      },
    },
    waiting: new Map(),
    sleeping: 0,
    eventWakes: new Map(),
    depth: input.parent?.depth ?? 0,
    taskBytes: { task: 0, bytes: 0 },
    emit: (event, status) => emit(run, event, status),
    ...(input.resume?.kept && { kept: input.resume.kept }),
  };
  listenForEventWakes(run);
  // Flow control (admission.ts): definitions with `concurrency` or `throttle` pass their gates, and every
  // top-level run its workspace's cap after them; a child run is part of its parent's place.
  const admission = listenForAdmission(input);
  // A debounced trigger's run (debounce.ts) waits for its key's quiet time first; a retry never does.
  const debounced = input.debounce === true && !input.resume;
  const frame = topFrame();
  for (const record of input.resume?.records ?? []) remember(frame, record);
  setHandler(
    decideUpdate,
    (request) => {
      const decision: ApprovalDecision = {
        decision: request.decision === 'approve' ? 'approved' : 'rejected',
        decided_by: request.decided_by,
        comment: request.comment,
        decided_at: new Date().toISOString(),
      };
      const key = waitingKeyOf(run, request);
      if (key !== undefined) run.waiting.set(key, decision);
      return decision;
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
        const runs = waitingRunsOf(run, request.step);
        if (request.run === undefined && runs.length > 1) {
          throw ApplicationFailure.create({
            type: RUN_REQUIRED,
            message: `Step "${request.step}" waits in ${runs.length} runs (${runs.join(', ')}): say which one with "run".`,
            nonRetryable: true,
          });
        }
        const key = waitingKeyOf(run, request);
        if (key === undefined || run.waiting.get(key) !== undefined) {
          throw ApplicationFailure.create({
            type: STEP_ERROR_CODES.stepNotWaiting,
            message: `Step "${request.step}" is not waiting for a decision${request.run ? ` in run "${request.run}"` : ''}.`,
            nonRetryable: true,
          });
        }
      },
    },
  );

  try {
    if (debounced) {
      await waitForQuiet(input);
      run.context.input = input.input;
    }
    if (admission && foldsAdmission(admission, input, debounced)) {
      // Its first batch passes the gates, and the batch that ends the run gives back its places (admission.ts).
      foldIntoBatches(admission, input);
      run.admission = admission;
    } else if (admission) {
      const refused = await admit(admission, input, debounced);
      if (refused) return await failExecution(run, refused);
    } else if (debounced) upsertSearchAttributes([{ key: QUEUED_ATTRIBUTE, value: false }]);
    return await runSteps(input, run, frame);
  } catch (error) {
    if (isCancellation(error)) {
      // The run is being canceled: announce it (in a scope the cancellation cannot interrupt), then end.
      await CancellationScope.nonCancellable(async () => emit(run, 'execution.canceled', 'canceled'));
    }
    // Awaited here: a rejection returned unawaited would be unhandled while the finally below awaits.
    if (error instanceof StepFailure) return await failExecution(run, error.error);
    throw error;
  } finally {
    // Whatever way the run ends (a cancel while queued included), its place goes to the next run.
    if (admission && holdsPlaces(admission))
      await CancellationScope.nonCancellable(() => release(admission, input));
    if (debounced) await CancellationScope.nonCancellable(closeDebounce);
  }
}

/**
 * The waiting approval a decision is for: the one of `request.step` in run `request.run` (the run keys of
 * its containers, "3" or "crm/0"), or the only one of that step when `run` is left out.
 */
function waitingRunsOf(run: Run, stepId: string): string[] {
  return [...run.waiting.keys()]
    .map((key) => key.split('/'))
    .filter((parts) => parts[parts.length - 1] === stepId)
    .map((parts) => runKeyOf(parts.slice(0, -1)));
}

function waitingKeyOf(run: Run, request: ApprovalDecisionRequest): string | undefined {
  const matches = [...run.waiting.keys()].filter((key) => {
    const parts = key.split('/');
    if (parts[parts.length - 1] !== request.step) return false;
    if (request.run === undefined) return true;
    return runKeyOf(parts.slice(0, -1)) === request.run;
  });
  return matches.length === 1 ? matches[0] : undefined;
}

/**
 * Whether the run's gates can be folded into its batches (admission.ts): its first await is a top-level batch
 * (no `execution.started` to emit first, no debounce wait, a step that runs in a batch where it starts), and
 * its input says so for the definition's own gates (runs recorded before asked them in activities).
 */
function foldsAdmission(admission: Admission, input: ExecutionInput, debounced: boolean): boolean {
  if (debounced || (admission.keys && !input.gates_in_batch)) return false;
  if (input.emit_started !== false && !input.resume) return false;
  const steps = input.workflow.definition.steps;
  const first = input.resume ? steps.find((step) => step.id === input.resume!.from_step) : steps[0];
  return first !== undefined && isLeafStep(first);
}

async function runSteps(input: ExecutionInput, run: Run, frame: Frame): Promise<ExecutionResult> {
  if (input.emit_started !== false && !input.resume) await emit(run, 'execution.started', 'running');
  const steps = input.workflow.definition.steps;
  const index = input.resume ? steps.findIndex((step) => step.id === input.resume!.from_step) : 0;
  if (index < 0) throw new Error(`Step "${input.resume?.from_step}" is not in the definition`);
  const runner = createRunner(run);
  let outcome;
  try {
    outcome = await runList(runner, frame, steps, index);
  } catch (error) {
    if (error instanceof ExecutionStop) return succeed(run, { status: 'success', stopped_at: error.stepId });
    throw error;
  }
  // Without an `output` template, the output of the last step that ran.
  const template = input.workflow.definition.output;
  const output = template === undefined ? outcome.output : await executionOutput(run, frame, template);
  return succeed(run, { status: 'success', output });
}

/** The definition's `output` template over the run's steps. */
async function executionOutput(run: Run, frame: Frame, template: unknown): Promise<unknown> {
  const result = await evaluate_output({
    workspace_id: run.workspaceId,
    purpose: 'output',
    output: template,
    context: frameContext(run, frame),
  });
  if (result.error) throw new StepFailure({ step: null, ...result.error });
  return result.output;
}

/** Emits `execution.completed` (when subscribed) and ends the run with `result`. */
function succeed(run: Run, result: ExecutionResult): ExecutionResult | Promise<ExecutionResult> {
  const emitted = emit(run, 'execution.completed', 'success', null, result.output);
  return emitted ? emitted.then(() => result) : result;
}

/**
 * Fails the execution (Temporal status Failed, which operators expect in Temporal UI). The error also
 * goes into the memo so execution lists can show it without reading each history.
 */
async function failExecution(run: Run, failure: ExecutionError): Promise<never> {
  // Where the step is, top-level ones included: `[step]` (docs/api.md#executions).
  const error: ExecutionError =
    failure.step !== null && !failure.path ? { ...failure, path: [failure.step] } : failure;
  upsertMemo({ error });
  // Runs recorded before the attribute existed replay without it (test/replay/histories).
  if (patched(ERROR_CODE_PATCH)) upsertSearchAttributes([{ key: ERROR_CODE_ATTRIBUTE, value: error.code }]);
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
 * would be. Then it returns no promise at all: every promise in workflow code costs the SDK a captured stack
 * trace (docs/benchmarks.md#against-the-tight-floor-2026-11-27).
 */
function emit(
  run: Run,
  event: EventKind,
  status: string,
  error: ExecutionError | null = null,
  output?: unknown,
): Promise<unknown> | undefined {
  const known = run.subscribed;
  if (known && known.task === workflowInfo().historyLength && !known.kinds.includes(event)) return undefined;
  return emit_event({
    payload: {
      id: `evt_${uuid4().replace(/-/g, '')}`,
      event,
      created_at: new Date().toISOString(),
      execution_id: run.context.execution.id,
      workflow: run.workflow.id,
      workflow_version: run.workflow.version,
      status,
      error,
      ...(output !== undefined && { output }),
    },
    workspace_id: run.workspaceId,
    run_id: workflowInfo().runId,
  });
}
