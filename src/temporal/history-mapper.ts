/**
 * Temporal history → the execution the API shows (CONTRACT §5). Pure: events in, view out.
 *
 * Each step is the activity whose activity id is the step id: its scheduled input is the step input,
 * its result the output, its last started attempt the attempt count. Steps the workflow passed over
 * (an `if` that was false, or after a rules `stop`) never appear in history; they are the definition
 * steps without an activity before the last step that ran, or every remaining one once the run has
 * succeeded. History keeps only the last attempt of an activity, so pending attempts and their last
 * failure come from describe's pending activities.
 */
import { defaultPayloadConverter } from '@temporalio/common';
import { optionalTsToDate } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import type { Step } from '../definitions/schema';
import {
  DECIDE_UPDATE,
  type ApprovalDecision,
  type ApprovalDecisionRequest,
  type ExecutionError,
  type ExecutionInput,
  type RulesActivityResult,
} from '../../workers/shared/execution-types';
import {
  durationMs,
  type ErrorView,
  type ExecutionStatus,
  type ExecutionView,
  type StepView,
} from '../executions/views';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
type Payloads = temporal.api.common.v1.IPayloads | null | undefined;
type Failure = temporal.api.failure.v1.IFailure | null | undefined;
type PendingActivity = temporal.api.workflow.v1.IPendingActivityInfo;
const EventType = temporal.api.enums.v1.EventType;

export interface HistorySource {
  events: HistoryEvent[];
  /** From describe; empty for closed runs. */
  pendingActivities?: PendingActivity[];
  /** True while an approval waits (the SwitchyardWaiting search attribute). */
  waiting?: boolean;
  now?: Date;
}

interface ActivityRecord {
  scheduledAt: Date;
  input: unknown;
  attempts: number;
  state: 'running' | 'success' | 'failed' | 'canceled';
  finishedAt: Date | null;
  output: unknown;
  error: { code: string; message: string } | null;
}

/** A decision on an approval step, from the `decide` Update's events. */
interface Decision {
  decision: ApprovalDecision;
}

interface Close {
  status: Exclude<ExecutionStatus, 'running' | 'waiting'>;
  at: Date;
  error: ErrorView | null;
}

export function firstPayload(payloads: Payloads): unknown {
  const payload = payloads?.payloads?.[0];
  return payload ? defaultPayloadConverter.fromPayload(payload) : undefined;
}

const eventDate = (event: HistoryEvent): Date => optionalTsToDate(event.eventTime) ?? new Date(0);

/** The code and message of a failure, without stack traces or Temporal internals. */
export function describeFailure(failure: Failure): { code: string; message: string } {
  if (!failure) return { code: 'step_failed', message: 'The step failed.' };
  if (failure.applicationFailureInfo) {
    return { code: failure.applicationFailureInfo.type || 'step_failed', message: failure.message ?? '' };
  }
  if (failure.timeoutFailureInfo) return { code: 'step_timed_out', message: 'The step timed out.' };
  if (failure.canceledFailureInfo) return { code: 'canceled', message: 'The step was canceled.' };
  // Activity failures wrap the real cause.
  if (failure.activityFailureInfo && failure.cause) return describeFailure(failure.cause);
  return { code: 'step_failed', message: failure.message ?? 'The step failed.' };
}

export function mapExecution(executionId: string, source: HistorySource): ExecutionView {
  const now = source.now ?? new Date();
  const [first] = source.events;
  const started = first?.workflowExecutionStartedEventAttributes;
  if (!first || !started)
    throw new Error(`History of ${executionId} does not start with WorkflowExecutionStarted`);
  const input = firstPayload(started.input) as ExecutionInput;
  const startedAt = eventDate(first);

  const activities = new Map<string, ActivityRecord>();
  const byScheduledId = new Map<string, ActivityRecord>();
  const decisionSteps = new Map<string, string>();
  const decisions = new Map<string, Decision>();
  let close: Close | undefined;

  for (const event of source.events) {
    const id = String(event.eventId);
    switch (event.eventType) {
      case EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED: {
        const attrs = event.activityTaskScheduledEventAttributes!;
        const record: ActivityRecord = {
          scheduledAt: eventDate(event),
          input: firstPayload(attrs.input),
          attempts: 0,
          state: 'running',
          finishedAt: null,
          output: null,
          error: null,
        };
        activities.set(attrs.activityId ?? '', record);
        byScheduledId.set(id, record);
        break;
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED: {
        const attrs = event.activityTaskStartedEventAttributes!;
        const record = byScheduledId.get(String(attrs.scheduledEventId));
        if (record) record.attempts = attrs.attempt ?? 1;
        break;
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED: {
        const attrs = event.activityTaskCompletedEventAttributes!;
        const record = byScheduledId.get(String(attrs.scheduledEventId));
        if (record)
          Object.assign(record, {
            state: 'success',
            finishedAt: eventDate(event),
            output: firstPayload(attrs.result) ?? null,
          });
        break;
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED: {
        const attrs = event.activityTaskFailedEventAttributes!;
        const record = byScheduledId.get(String(attrs.scheduledEventId));
        if (record)
          Object.assign(record, {
            state: 'failed',
            finishedAt: eventDate(event),
            error: describeFailure(attrs.failure),
          });
        break;
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT: {
        const attrs = event.activityTaskTimedOutEventAttributes!;
        const record = byScheduledId.get(String(attrs.scheduledEventId));
        if (record) {
          Object.assign(record, {
            state: 'failed',
            finishedAt: eventDate(event),
            error: { code: 'step_timed_out', message: 'The step timed out.' },
          });
        }
        break;
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_CANCELED: {
        const attrs = event.activityTaskCanceledEventAttributes!;
        const record = byScheduledId.get(String(attrs.scheduledEventId));
        if (record) Object.assign(record, { state: 'canceled', finishedAt: eventDate(event) });
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
        if (step && decision) decisions.set(step, { decision });
        break;
      }
      default:
        close ??= closeOf(event);
    }
  }

  for (const pending of source.pendingActivities ?? []) {
    const record = activities.get(pending.activityId ?? '');
    if (!record || record.state !== 'running') continue;
    record.attempts = pending.attempt ?? record.attempts;
    if (pending.lastFailure) record.error = describeFailure(pending.lastFailure);
  }

  const steps = mapSteps(input, activities, decisions, close, source.pendingActivities ?? [], now);
  const status: ExecutionStatus = close?.status ?? (source.waiting ? 'waiting' : 'running');
  return {
    execution_id: executionId,
    workflow: input.workflow.id,
    workflow_version: input.workflow.version,
    status,
    trigger: { type: input.trigger.type },
    started_at: startedAt.toISOString(),
    finished_at: close ? close.at.toISOString() : null,
    duration_ms: durationMs(startedAt, close?.at, now),
    error: close?.error ?? null,
    steps: [triggerStep(input, startedAt), ...steps],
  };
}

function closeOf(event: HistoryEvent): Close | undefined {
  const at = eventDate(event);
  switch (event.eventType) {
    case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
      return { status: 'success', at, error: null };
    case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED: {
      const failure = event.workflowExecutionFailedEventAttributes?.failure;
      const details = firstPayload(failure?.applicationFailureInfo?.details) as ExecutionError | undefined;
      const { code, message } = describeFailure(failure);
      return { status: 'failed', at, error: { step: details?.step ?? null, code, message } };
    }
    case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED:
      return {
        status: 'canceled',
        at,
        error: { step: null, code: 'canceled', message: 'The execution was canceled.' },
      };
    case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED: {
      const reason = event.workflowExecutionTerminatedEventAttributes?.reason;
      return {
        status: 'terminated',
        at,
        error: {
          step: null,
          code: 'terminated',
          message: reason ? `Terminated: ${reason}` : 'The execution was terminated.',
        },
      };
    }
    case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT:
      return {
        status: 'timed_out',
        at,
        error: { step: null, code: 'timed_out', message: 'The execution timed out.' },
      };
    default:
      return undefined;
  }
}

function triggerStep(input: ExecutionInput, at: Date): StepView {
  return {
    id: 'trigger',
    name: 'Trigger',
    kind: 'trigger',
    status: 'success',
    started_at: at.toISOString(),
    finished_at: at.toISOString(),
    duration_ms: 0,
    attempts: 1,
    input: input.trigger.body !== undefined ? input.trigger.body : input.input,
    output: input.input,
    error: null,
  };
}

function mapSteps(
  input: ExecutionInput,
  activities: Map<string, ActivityRecord>,
  decisions: Map<string, Decision>,
  close: Close | undefined,
  pending: PendingActivity[],
  now: Date,
): StepView[] {
  const definitionSteps = input.workflow.definition.steps;
  const failedStep = close?.error?.step ?? null;
  let reached = -1;
  definitionSteps.forEach((step, index) => {
    if (activities.has(step.id) || step.id === failedStep) reached = index;
  });
  const views: StepView[] = [];
  definitionSteps.forEach((step, index) => {
    const record = activities.get(step.id);
    if (record && step.kind === 'approval') {
      views.push(approvalStep(step, record, decisions.get(step.id), close, now));
    } else if (record) {
      views.push(stepFromRecord(step, record, close, pending, now));
    } else if (step.id === failedStep && close?.error) {
      // Failed before any activity was scheduled (an `if` or template that could not be evaluated).
      views.push({
        ...emptyStep(step, 'failed'),
        error: { code: close.error.code, message: close.error.message },
      });
    } else if (index < reached || close?.status === 'success') {
      views.push(emptyStep(step, 'skipped'));
    }
  });
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

/**
 * An approval step: its activity records the request (start time, input); the decision (output, end
 * time) comes from the `decide` Update; without one it waits, or it timed out or was cut short.
 */
function approvalStep(
  step: Step,
  record: ActivityRecord,
  decision: Decision | undefined,
  close: Close | undefined,
  now: Date,
): StepView {
  const failedHere =
    close?.error?.step === step.id ? { code: close.error.code, message: close.error.message } : null;
  let status: StepView['status'];
  let finishedAt: Date | null = null;
  if (decision) {
    status = decision.decision.decision === 'approved' ? 'success' : 'failed';
    finishedAt = new Date(decision.decision.decided_at);
  } else if (failedHere) {
    status = 'failed';
    finishedAt = close!.at;
  } else if (close) {
    status = 'canceled';
    finishedAt = close.at;
  } else {
    status = record.state === 'failed' ? 'running' : 'waiting';
  }
  return {
    id: step.id,
    name: step.name ?? step.id,
    kind: step.kind,
    status,
    started_at: record.scheduledAt.toISOString(),
    finished_at: finishedAt?.toISOString() ?? null,
    duration_ms: durationMs(record.scheduledAt, finishedAt, now),
    attempts: record.attempts || 1,
    input: record.input ?? null,
    output: decision?.decision ?? null,
    error:
      status === 'failed'
        ? (failedHere ?? { code: 'approval_rejected', message: 'The approval was rejected.' })
        : record.error,
  };
}

/** What a step produced, from its activity's result (a rules activity also reports which rule matched). */
function stepOutput(step: Step, result: unknown): unknown {
  if (step.kind === 'rules') return (result as RulesActivityResult | null)?.output ?? null;
  return result ?? null;
}

function stepFromRecord(
  step: Step,
  record: ActivityRecord,
  close: Close | undefined,
  pending: PendingActivity[],
  now: Date,
): StepView {
  let status: StepView['status'] = record.state;
  let error = record.error;
  // A rules step whose matching rule said `fail` completed as an activity but failed the execution.
  if (record.state === 'success' && close?.status === 'failed' && close.error?.step === step.id) {
    status = 'failed';
    error = { code: close.error.code, message: close.error.message };
  }
  // An activity still open when the run closed (terminated, canceled, timed out) ran no further.
  if (record.state === 'running' && close) status = 'canceled';
  const finishedAt = record.finishedAt ?? close?.at ?? null;
  const view: StepView = {
    id: step.id,
    name: step.name ?? step.id,
    kind: step.kind,
    status,
    started_at: record.scheduledAt.toISOString(),
    finished_at: finishedAt?.toISOString() ?? null,
    duration_ms: durationMs(record.scheduledAt, finishedAt, now),
    attempts: record.attempts || (record.state === 'running' ? 0 : 1),
    input: record.input ?? null,
    output: record.state === 'success' ? stepOutput(step, record.output) : null,
    error,
  };
  const next = pending.find((p) => p.activityId === step.id)?.nextAttemptScheduleTime;
  const nextAt = optionalTsToDate(next);
  if (status === 'running' && nextAt) view.next_attempt_at = nextAt.toISOString();
  return view;
}
