/**
 * One leaf step (rules, connector, ai, approval, sleep) as the API shows it (docs/api.md#executions), from its
 * `run_steps` record and what completed it later: the activity that retried it, the decision on an approval,
 * a sleep's timer, the end of the run. Steps are found by their key: the run path of the containers around them and the
 * step id, joined by "/" (`notify_all/3/send`); a top-level step's key is its id. That is also the activity
 * id of a nested step's retry (workers/workflows/interpreter.ts).
 */
import type { Step } from '../../core/definitions/schema';
import type {
  ApprovalDecision,
  ExpressionContext,
  RunPath,
  SleepOutput,
  StepRecord,
  WaitingFor,
} from '../../core/execution-types';
import type { ClosedStatus } from './status';
import { durationMs, type ErrorView, type StepView } from './views';
import { rulesStepInput } from './rules-input';
import type { SleepTimer } from './sleep-timers';

/** The activity that takes over a connector or ai step after its first attempt. */
export interface RetryActivity {
  attempts: number;
  state: 'running' | 'success' | 'failed' | 'canceled';
  finishedAt: Date | null;
  output: unknown;
  error: { code: string; message: string } | null;
  nextAttemptAt?: Date;
}

export interface Close {
  status: ClosedStatus;
  at: Date;
  error: ErrorView | null;
  /** A completed run's result (ExecutionResult): its `output`, when the run recorded one. */
  result?: { output?: unknown };
}

/** What leaf steps are read from, by step key. */
export interface LeafSources {
  records: Map<string, StepRecord>;
  retries: Map<string, RetryActivity>;
  decisions: Map<string, ApprovalDecision>;
  /** Sleep steps' timers. */
  timers: Map<string, SleepTimer>;
  close: Close | undefined;
  /** When the current workflow task started: a running batch's first step started about then. */
  lastTaskStarted: Date;
  now: Date;
}

/** A step's key: its run path and its id, joined by "/"; a top-level step's id. */
export function stepKey(path: RunPath, stepId: string): string {
  return [...path, stepId].join('/');
}

/** The run's error when it failed at the step of this key (its error's path names it), else null. */
export function failureAt(close: Close | undefined, key: string): { code: string; message: string } | null {
  const error = close?.error;
  if (!error || error.step === null) return null;
  return (error.path ?? [error.step]).join('/') === key ? { code: error.code, message: error.message } : null;
}

export function emptyStep(step: Step, status: StepView['status']): StepView {
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

/** Sets `duration_ms` from the view's start and end (to now while it runs). */
export function withDuration(view: StepView, now: Date): StepView {
  if (view.started_at)
    view.duration_ms = durationMs(
      new Date(view.started_at),
      view.finished_at ? new Date(view.finished_at) : null,
      now,
    );
  return view;
}

export function stepView(
  step: Step,
  key: string,
  record: StepRecord,
  context: ExpressionContext,
  sources: LeafSources,
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
  const failedHere = failureAt(close, key);
  if (record.status === 'skipped') view.input = null;
  if (record.status === 'waiting' && record.waiting_for?.type === 'timer')
    sleepOutcome(view, record.waiting_for, sources.timers.get(key), close);
  else if (record.status === 'waiting' && record.waiting_for?.type === 'event')
    eventWaitOutcome(view, record.waiting_for, close);
  else if (record.status === 'waiting') approvalOutcome(view, sources.decisions.get(key), failedHere, close);
  else if (record.status === 'running')
    retryOutcome(view, record, sources.retries.get(key), failedHere, close);
  else if (record.status === 'failed' && failedHere) view.error = failedHere;
  return withDuration(view, now);
}

/**
 * An approval: waiting since its record; the decision (output, end time) comes from the `decide`
 * Update; without one it waits, or it timed out, or the run was cut short.
 */
function approvalOutcome(
  view: StepView,
  decision: ApprovalDecision | undefined,
  failedHere: { code: string; message: string } | null,
  close: Close | undefined,
): void {
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

/**
 * A sleep: waiting (with what for) since its record until its timer fires; canceled when the run closed
 * first, or its container halted it.
 */
function sleepOutcome(
  view: StepView,
  waitingFor: Extract<WaitingFor, { type: 'timer' }>,
  timer: SleepTimer | undefined,
  close: Close | undefined,
): void {
  if (timer?.firedAt) {
    const output: SleepOutput = { slept_until: waitingFor.until };
    Object.assign(view, { status: 'success', finished_at: timer.firedAt.toISOString(), output });
  } else if (close || timer?.canceledAt) {
    view.status = 'canceled';
    view.finished_at = (timer?.canceledAt ?? close!.at).toISOString();
  } else {
    view.waiting_for = waitingFor;
  }
}

/**
 * A wait_for_event: waiting (with what for) since its record until its `end_event_wait` record replaces
 * this one; canceled when the run closed first (a cancel, or a termination).
 */
function eventWaitOutcome(view: StepView, waitingFor: WaitingFor, close: Close | undefined): void {
  if (close) {
    view.status = 'canceled';
    view.finished_at = close.at.toISOString();
  } else {
    view.waiting_for = waitingFor;
  }
}

/** A connector or ai step whose first attempt failed: the activity with its attempts left, if any yet. */
function retryOutcome(
  view: StepView,
  record: StepRecord,
  retry: RetryActivity | undefined,
  failedHere: { code: string; message: string } | null,
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
    view.status = failedHere ? 'failed' : 'canceled';
    view.finished_at = close.at.toISOString();
    delete view.next_attempt_at;
    if (failedHere) view.error = failedHere;
  }
}
