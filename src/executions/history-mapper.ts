/**
 * Temporal history → the execution the API shows (docs/api.md#executions). Pure: events in, view out.
 *
 * Steps are recorded by the `run_steps` local activity (workers/activities/steps.ts): each of its markers
 * carries one record per step it ran (input, output, timings, attempts, error). A retry run carries the
 * records of the steps before the failed one in its input (ExecutionInput.resume). Beside them:
 *  - a connector or ai step whose first attempt failed goes on as an activity whose id is the step id:
 *    its attempts, result or failure complete the step's record (pending ones from describe);
 *  - an approval step's decision comes from the `decide` Update's events;
 *  - a rules step's input (the data it read) is derived from the context, as the worker saw it;
 *  - whether the run is stuck on a failing workflow task (src/executions/stalled.ts).
 * While a batch runs, its first step shows as running (its record lands when the batch ends).
 */
import { defaultPayloadConverter, type PayloadCodec } from '@temporalio/common';
import { optionalTsToDate } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import type { Step } from '../../core/definitions/schema';
import {
  DECIDE_UPDATE,
  type ApprovalDecision,
  type ApprovalDecisionRequest,
  type ExecutionInput,
  type ExpressionContext,
  type StepBatchResult,
  type StepRecord,
} from '../../core/execution-types';
import type { ExecutionError } from '../../core/error-detail';
import {
  durationMs,
  errorViewOf,
  type ErrorView,
  type ExecutionStatus,
  type ExecutionView,
  type StepView,
} from './views';
import { closedFromOutsideError, closedStatusOfEvent, type ClosedStatus } from './status';
import { stalledOf, type StalledSource } from './stalled';
import { decodePayloads } from '../../platform/temporal/encryption-codec';
import { failureMessage } from './failure-message';
import { rulesStepInput } from './rules-input';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
type Payloads = temporal.api.common.v1.IPayloads | null | undefined;
type Failure = temporal.api.failure.v1.IFailure | null | undefined;
type PendingActivity = temporal.api.workflow.v1.IPendingActivityInfo;
const EventType = temporal.api.enums.v1.EventType;

/** Marker name of local activities (Temporal's core SDK) and the activity type that runs steps. */
const LOCAL_ACTIVITY_MARKER = 'core_local_activity';
const STEP_BATCH_ACTIVITY = 'run_steps';

export interface HistorySource {
  events: HistoryEvent[];
  /** From describe; empty for closed runs. */
  pendingActivities?: PendingActivity[];
  /** True while an approval waits (the SwitchyardWaiting search attribute). */
  waiting?: boolean;
  /** From describe: the workflow task being retried, and the build it goes to (src/executions/stalled.ts). */
  pendingWorkflowTask?: StalledSource['pendingWorkflowTask'];
  versioningInfo?: StalledSource['versioningInfo'];
  now?: Date;
}

/** The activity that takes over a connector or ai step after its first attempt. */
interface RetryActivity {
  attempts: number;
  state: 'running' | 'success' | 'failed' | 'canceled';
  finishedAt: Date | null;
  output: unknown;
  error: { code: string; message: string } | null;
}

interface Close {
  status: ClosedStatus;
  at: Date;
  error: ErrorView | null;
  /** A completed run's result (ExecutionResult): its `output`, when the run recorded one. */
  result?: { output?: unknown };
}

export function firstPayload(payloads: Payloads): unknown {
  const payload = payloads?.payloads?.[0];
  return payload ? defaultPayloadConverter.fromPayload(payload) : undefined;
}

/**
 * Decodes (decrypts, platform/temporal/encryption-codec.ts) in place the payloads that mapExecution and the
 * retry read: a history from Temporal holds them as the worker and the client wrote them. Nothing to do
 * without codecs; payloads written in clear pass through.
 */
export async function decodeHistory(events: HistoryEvent[], codecs: readonly PayloadCodec[]): Promise<void> {
  if (codecs.length === 0) return;
  const decodeIn = async (payloads: Payloads): Promise<void> => {
    if (payloads?.payloads?.length) payloads.payloads = await decodePayloads(codecs, payloads.payloads);
  };
  const work: Promise<void>[] = [];
  for (const event of events) {
    work.push(
      decodeIn(event.workflowExecutionStartedEventAttributes?.input),
      decodeIn(event.activityTaskCompletedEventAttributes?.result),
      decodeIn(event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.args),
      decodeIn(event.workflowExecutionUpdateCompletedEventAttributes?.outcome?.success),
      decodeIn(event.workflowExecutionCompletedEventAttributes?.result),
      decodeIn(event.workflowExecutionFailedEventAttributes?.failure?.applicationFailureInfo?.details),
    );
    const details = event.markerRecordedEventAttributes?.details;
    if (details) for (const key of Object.keys(details)) work.push(decodeIn(details[key]));
    work.push(decodeFailure(event.activityTaskFailedEventAttributes?.failure, codecs));
    // A workflow task the worker fails outside workflow code (decoding its activation, say) carries a
    // failure of the worker's failure converter, encoded while payloads are encrypted.
    work.push(decodeFailure(event.workflowTaskFailedEventAttributes?.failure, codecs));
  }
  await Promise.all(work);
}

/**
 * Decodes in place a failure's encoded message (the worker's failure converter puts it in a payload while
 * payloads are encrypted: workers/failure-converter.ts), along its causes.
 */
export async function decodeFailure(failure: Failure, codecs: readonly PayloadCodec[]): Promise<void> {
  for (let current = failure; current && codecs.length > 0; current = current.cause) {
    if (current.encodedAttributes)
      [current.encodedAttributes] = await decodePayloads(codecs, [current.encodedAttributes]);
  }
}

const eventDate = (event: HistoryEvent): Date => optionalTsToDate(event.eventTime) ?? new Date(0);

/** The code and message of a failure, without stack traces or Temporal internals. */
export function describeFailure(failure: Failure): { code: string; message: string } {
  if (!failure) return { code: 'step_failed', message: 'The step failed.' };
  if (failure.applicationFailureInfo) {
    return {
      code: failure.applicationFailureInfo.type || 'step_failed',
      message: failureMessage(failure) ?? '',
    };
  }
  if (failure.timeoutFailureInfo) return { code: 'step_timed_out', message: 'The step timed out.' };
  if (failure.canceledFailureInfo) return { code: 'canceled', message: 'The step was canceled.' };
  // Activity failures wrap the real cause.
  if (failure.activityFailureInfo && failure.cause) return describeFailure(failure.cause);
  return { code: 'step_failed', message: failureMessage(failure) ?? 'The step failed.' };
}

export function mapExecution(executionId: string, source: HistorySource): ExecutionView {
  const now = source.now ?? new Date();
  const [first] = source.events;
  const started = first?.workflowExecutionStartedEventAttributes;
  if (!first || !started)
    throw new Error(`History of ${executionId} does not start with WorkflowExecutionStarted`);
  const input = firstPayload(started.input) as ExecutionInput;
  const startedAt = eventDate(first);

  const records = new Map<string, StepRecord>();
  for (const record of input.resume?.records ?? []) records.set(record.id, record);
  const retries = new Map<string, RetryActivity>();
  const byScheduledId = new Map<string, RetryActivity>();
  const decisionSteps = new Map<string, string>();
  const decisions = new Map<string, ApprovalDecision>();
  let lastTaskStarted = startedAt;
  let close: Close | undefined;
  /** Ends the attempts of the activity that event `scheduledEventId` scheduled, as `event` says. */
  const endRetry = (
    event: HistoryEvent,
    scheduledEventId: unknown,
    end: Pick<RetryActivity, 'state'> & Partial<Pick<RetryActivity, 'output' | 'error'>>,
  ): void => {
    const retry = byScheduledId.get(String(scheduledEventId));
    if (retry) Object.assign(retry, { ...end, finishedAt: eventDate(event) });
  };

  for (const event of source.events) {
    const id = String(event.eventId);
    switch (event.eventType) {
      case EventType.EVENT_TYPE_MARKER_RECORDED: {
        for (const record of batchRecords(event)) records.set(record.id, record);
        break;
      }
      case EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED:
        lastTaskStarted = eventDate(event);
        break;
      case EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED: {
        const attrs = event.activityTaskScheduledEventAttributes!;
        const retry: RetryActivity = {
          attempts: 0,
          state: 'running',
          finishedAt: null,
          output: null,
          error: null,
        };
        retries.set(attrs.activityId ?? '', retry);
        byScheduledId.set(id, retry);
        break;
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED: {
        const attrs = event.activityTaskStartedEventAttributes!;
        const retry = byScheduledId.get(String(attrs.scheduledEventId));
        if (retry) retry.attempts = attrs.attempt ?? 1;
        break;
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED: {
        const attrs = event.activityTaskCompletedEventAttributes!;
        endRetry(event, attrs.scheduledEventId, {
          state: 'success',
          output: firstPayload(attrs.result) ?? null,
        });
        break;
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED: {
        const attrs = event.activityTaskFailedEventAttributes!;
        endRetry(event, attrs.scheduledEventId, { state: 'failed', error: describeFailure(attrs.failure) });
        break;
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT: {
        const attrs = event.activityTaskTimedOutEventAttributes!;
        endRetry(event, attrs.scheduledEventId, {
          state: 'failed',
          error: { code: 'step_timed_out', message: 'The step timed out.' },
        });
        break;
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_CANCELED: {
        const attrs = event.activityTaskCanceledEventAttributes!;
        endRetry(event, attrs.scheduledEventId, { state: 'canceled' });
        break;
      }
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED: {
        const request = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest;
        if (request?.input && request.input.name === DECIDE_UPDATE) {
          const args = firstPayload(request.input.args) as ApprovalDecisionRequest | undefined;
          if (args) decisionSteps.set(request.meta?.updateId ?? '', args.step);
        }
        break;
      }
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED: {
        const attrs = event.workflowExecutionUpdateCompletedEventAttributes;
        const step = decisionSteps.get(attrs?.meta?.updateId ?? '');
        const decision = firstPayload(attrs?.outcome?.success) as ApprovalDecision | undefined;
        if (step && decision) decisions.set(step, decision);
        break;
      }
      default:
        close ??= closeOf(event);
    }
  }

  for (const pending of source.pendingActivities ?? []) {
    const retry = retries.get(pending.activityId ?? '');
    if (!retry || retry.state !== 'running') continue;
    retry.attempts = pending.attempt ?? retry.attempts;
    if (pending.lastFailure) retry.error = describeFailure(pending.lastFailure);
    const next = optionalTsToDate(pending.nextAttemptScheduleTime);
    if (next) Object.assign(retry, { nextAttemptAt: next });
  }

  const status: ExecutionStatus = close?.status ?? (source.waiting ? 'waiting' : 'running');
  const steps = mapSteps(input, records, { retries, decisions, close, lastTaskStarted, now });
  return {
    execution_id: executionId,
    workflow: input.workflow.id,
    workflow_version: input.workflow.version,
    status,
    trigger: { type: input.trigger.type },
    parent: input.parent ? { execution_id: input.parent.execution_id, step: input.parent.step } : null,
    started_at: startedAt.toISOString(),
    finished_at: close ? close.at.toISOString() : null,
    duration_ms: durationMs(startedAt, close?.at, now),
    error: close?.error ?? null,
    stalled: close ? null : stalledOf(source),
    output: close?.status === 'success' ? outputOf(close, steps) : null,
    steps: [triggerStep(input, startedAt), ...steps],
  };
}

/**
 * A succeeded execution's output: what the run recorded in its result, or, for runs recorded before
 * executions had outputs, the output of the last step that ran.
 */
function outputOf(close: Close, steps: StepView[]): unknown {
  if (close.result && 'output' in close.result) return close.result.output ?? null;
  return steps.findLast((step) => step.status === 'success')?.output ?? null;
}

/** The step records a `run_steps` marker carries (none for other markers). */
function batchRecords(event: HistoryEvent): StepRecord[] {
  const attrs = event.markerRecordedEventAttributes;
  if (attrs?.markerName !== LOCAL_ACTIVITY_MARKER || attrs.failure) return [];
  const data = attrs.details?.['data']?.payloads?.[0]?.data;
  if (!data) return [];
  let marker: { activity_type?: string };
  try {
    marker = JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type?: string };
  } catch {
    return [];
  }
  if (marker.activity_type !== STEP_BATCH_ACTIVITY) return [];
  const result = firstPayload(attrs.details?.['result']) as StepBatchResult | undefined;
  return result?.records ?? [];
}

function closeOf(event: HistoryEvent): Close | undefined {
  const status = closedStatusOfEvent(event.eventType);
  if (!status) return undefined;
  const at = eventDate(event);
  if (status === 'failed') {
    const failure = event.workflowExecutionFailedEventAttributes?.failure;
    const details = firstPayload(failure?.applicationFailureInfo?.details) as ExecutionError | undefined;
    const { code, message } = describeFailure(failure);
    // The details hold the message whole (the failure's own text names only the step when encrypted).
    const detailed = typeof details?.message === 'string' ? details.message : message;
    const error = errorViewOf({
      step: details?.step ?? null,
      path: details?.path,
      code,
      message: detailed,
      details: details?.details,
    });
    return { status, at, error };
  }
  if (status === 'success') {
    const result = firstPayload(event.workflowExecutionCompletedEventAttributes?.result) as Close['result'];
    return { status, at, error: null, ...(result && { result }) };
  }
  return {
    status,
    at,
    error: closedFromOutsideError(status, event.workflowExecutionTerminatedEventAttributes?.reason),
  };
}

function triggerStep(input: ExecutionInput, at: Date): StepView {
  const validated =
    input.resume && 'original_input' in input.resume ? input.resume.original_input : input.input;
  return {
    id: 'trigger',
    name: 'Trigger',
    kind: 'trigger',
    status: 'success',
    started_at: at.toISOString(),
    finished_at: at.toISOString(),
    duration_ms: 0,
    attempts: 1,
    input: input.trigger.body !== undefined ? input.trigger.body : validated,
    output: validated,
    error: null,
  };
}

interface StepSources {
  retries: Map<string, RetryActivity & { nextAttemptAt?: Date }>;
  decisions: Map<string, ApprovalDecision>;
  close: Close | undefined;
  /** When the current workflow task started: a running batch's first step started about then. */
  lastTaskStarted: Date;
  now: Date;
}

function mapSteps(input: ExecutionInput, records: Map<string, StepRecord>, sources: StepSources): StepView[] {
  const { close } = sources;
  // The context as the worker saw it, step by step (a rules step's input is derived from it).
  const context: ExpressionContext = {
    input: input.input,
    steps: {},
    execution: { id: '', workflow: input.workflow.id, version: input.workflow.version },
  };
  const views: StepView[] = [];
  // Whether some step is still open (waiting, retrying): then the run is not inside a batch.
  let open = false;
  let reachedAll = true;
  for (const step of input.workflow.definition.steps) {
    const record = records.get(step.id);
    if (!record) {
      reachedAll = false;
      break;
    }
    const view = stepView(step, record, context, sources);
    if (view.status === 'running' || view.status === 'waiting') open = true;
    views.push(view);
    if (view.status === 'success' || view.status === 'skipped')
      context.steps[step.id] = { status: view.status, output: view.output };
  }
  if (reachedAll) return views;
  const next = input.workflow.definition.steps[views.length]!;
  if (close?.status === 'success') {
    // After a rules `stop`: every step left was skipped.
    for (const step of input.workflow.definition.steps.slice(views.length))
      views.push(emptyStep(step, 'skipped'));
  } else if (!open && !views.some((view) => view.status === 'failed')) {
    // The run is inside the batch that starts here (or was, when it closed).
    const view = emptyStep(next, close ? (close.error?.step === next.id ? 'failed' : 'canceled') : 'running');
    view.started_at = sources.lastTaskStarted.toISOString();
    if (close) {
      view.finished_at = close.at.toISOString();
      if (view.status === 'failed' && close.error)
        view.error = { code: close.error.code, message: close.error.message };
    }
    view.duration_ms = durationMs(sources.lastTaskStarted, close?.at, sources.now);
    views.push(view);
  }
  return views;
}

function emptyStep(step: Step, status: StepView['status']): StepView {
  return {
    id: step.id,
    name: step.name ?? step.id,
    kind: step.kind,
    status,
    started_at: null,
    finished_at: null,
    duration_ms: null,
    attempts: 0,
    input: null,
    output: null,
    error: null,
  };
}

function stepView(
  step: Step,
  record: StepRecord,
  context: ExpressionContext,
  sources: StepSources,
): StepView {
  const { close, now } = sources;
  const view: StepView = {
    id: step.id,
    name: step.name ?? step.id,
    kind: step.kind,
    status: record.status,
    started_at: record.started_at,
    finished_at: record.finished_at,
    duration_ms: null,
    attempts: record.attempts,
    input:
      record.input !== undefined
        ? record.input
        : step.kind === 'rules' && record.status !== 'skipped'
          ? rulesStepInput(step, context)
          : null,
    output: record.output ?? null,
    error: record.error,
  };
  if (record.status === 'skipped') view.input = null;
  if (record.status === 'waiting') approvalOutcome(step, view, sources.decisions.get(step.id), close);
  else if (record.status === 'running') retryOutcome(view, record, sources.retries.get(step.id), close);
  else if (record.status === 'failed' && close?.error?.step === step.id)
    view.error = { code: close.error.code, message: close.error.message };
  if (view.started_at)
    view.duration_ms = durationMs(
      new Date(view.started_at),
      view.finished_at ? new Date(view.finished_at) : null,
      now,
    );
  return view;
}

/**
 * An approval: waiting since its record; the decision (output, end time) comes from the `decide`
 * Update; without one it waits, or it timed out, or the run was cut short.
 */
function approvalOutcome(
  step: Step,
  view: StepView,
  decision: ApprovalDecision | undefined,
  close: Close | undefined,
): void {
  const failedHere =
    close?.error?.step === step.id ? { code: close.error.code, message: close.error.message } : null;
  if (decision) {
    view.status = decision.decision === 'approved' ? 'success' : 'failed';
    view.finished_at = decision.decided_at;
    view.output = decision;
    if (view.status === 'failed')
      view.error = failedHere ?? { code: 'approval_rejected', message: 'The approval was rejected.' };
  } else if (failedHere) {
    view.status = 'failed';
    view.finished_at = close!.at.toISOString();
    view.error = failedHere;
  } else if (close) {
    view.status = 'canceled';
    view.finished_at = close.at.toISOString();
  }
}

/** A connector or ai step whose first attempt failed: the activity with its attempts left, if any yet. */
function retryOutcome(
  view: StepView,
  record: StepRecord,
  retry: (RetryActivity & { nextAttemptAt?: Date }) | undefined,
  close: Close | undefined,
): void {
  if (record.next_attempt_at) view.next_attempt_at = record.next_attempt_at;
  if (retry) {
    view.attempts = record.attempts + retry.attempts;
    if (retry.error) view.error = retry.error;
    if (retry.nextAttemptAt) view.next_attempt_at = retry.nextAttemptAt.toISOString();
    else if (retry.attempts > 0) delete view.next_attempt_at;
    if (retry.state !== 'running') {
      view.status = retry.state;
      view.finished_at = retry.finishedAt?.toISOString() ?? null;
      delete view.next_attempt_at;
      if (retry.state === 'success') {
        view.output = retry.output;
        view.error = null;
      }
    }
  }
  if (view.status === 'running' && close) {
    // The run closed while the step was still being retried (canceled, terminated, timed out).
    view.status = close.error?.step === view.id ? 'failed' : 'canceled';
    view.finished_at = close.at.toISOString();
    delete view.next_attempt_at;
    if (view.status === 'failed' && close.error)
      view.error = { code: close.error.code, message: close.error.message };
  }
}
