/**
 * Whether an open execution is stuck (docs/api.md#stuck-executions): its workflow task keeps failing (a
 * non-determinism after the run was moved to a build whose code cannot replay it, an error thrown in
 * workflow code) and Temporal retries it for ever, while the run still shows as running or waiting. Pure:
 * derived from what every Temporal server records, with no server setting, so also on a dev server
 * started by hand:
 *
 * - describe's pending workflow task: its attempt is 2 or more once a task failed or timed out and is
 *   being retried (a task that completes starts the count again);
 * - the history: why the streak began. Temporal records the first failure of a task and none of its
 *   retries (our workers' SDK also stops reporting failures after the first attempt and lets the retries
 *   time out), so the workflow task failures and timeouts after the last completed task are the streak;
 * - describe's versioning info: the build the run's tasks go to.
 */
import { optionalTsToDate } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { failureMessage } from './failure-message';
import type { StalledView } from './views';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const EventType = temporal.api.enums.v1.EventType;
const Cause = temporal.api.enums.v1.WorkflowTaskFailedCause;
const TimeoutType = temporal.api.enums.v1.TimeoutType;

/** From this attempt on, the pending workflow task is a retry: an earlier attempt failed or timed out. */
const FIRST_RETRY_ATTEMPT = 2;

/**
 * Characters of the failure's message kept: enough for a non-determinism error (it names the event and
 * the command that disagree), short of whatever an error thrown in workflow code may quote.
 */
export const STALLED_MESSAGE_MAX_CHARS = 500;

const TIMED_OUT_MESSAGE =
  'The workflow task timed out: the worker did not answer in time (it stopped, or the task hung).';

/** A retry whose failure the history does not hold (not seen so far; kept rather than hiding the stall). */
const UNRECORDED_FAILURE: Pick<StalledView, 'reason' | 'message'> = {
  reason: 'workflow_task_failed',
  message: 'The workflow task failed.',
};

export interface StalledSource {
  events: HistoryEvent[];
  /** From describe; absent while no workflow task is pending (and for closed runs). */
  pendingWorkflowTask?: temporal.api.workflow.v1.IPendingWorkflowTaskInfo | null;
  /** From describe; absent for runs of unversioned workers. */
  versioningInfo?: temporal.api.workflow.v1.IWorkflowExecutionVersioningInfo | null;
}

/** Why the run is stuck and since when, or null when its workflow task is not being retried. */
export function stalledOf(source: StalledSource): StalledView | null {
  const attempts = source.pendingWorkflowTask?.attempt ?? 0;
  if (attempts < FIRST_RETRY_ATTEMPT) return null;
  const streak = taskProblemsSinceLastCompleted(source.events);
  const last = streak.at(-1);
  const since =
    optionalTsToDate(streak[0]?.eventTime) ??
    optionalTsToDate(source.pendingWorkflowTask?.originalScheduledTime) ??
    optionalTsToDate(source.pendingWorkflowTask?.scheduledTime);
  return {
    ...(last ? problemOf(last) : UNRECORDED_FAILURE),
    attempts,
    build_id: buildOf(source.versioningInfo),
    since: (since ?? new Date(0)).toISOString(),
  };
}

/** The workflow task failures and (start-to-close) timeouts after the last completed workflow task, in order. */
function taskProblemsSinceLastCompleted(events: HistoryEvent[]): HistoryEvent[] {
  const problems: HistoryEvent[] = [];
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!;
    if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) break;
    if (isTaskProblem(event)) problems.unshift(event);
  }
  return problems;
}

function isTaskProblem(event: HistoryEvent): boolean {
  if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED) return true;
  // A schedule-to-start timeout is a sticky worker gone away: the task goes to the task queue, no retry.
  return (
    event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT &&
    event.workflowTaskTimedOutEventAttributes?.timeoutType === TimeoutType.TIMEOUT_TYPE_START_TO_CLOSE
  );
}

function problemOf(event: HistoryEvent): Pick<StalledView, 'reason' | 'message'> {
  const failed = event.workflowTaskFailedEventAttributes;
  if (!failed) return { reason: 'workflow_task_timed_out', message: TIMED_OUT_MESSAGE };
  // Only the failure's own message: its stack trace and causes may quote what workflow code held.
  const message = truncate((failed.failure ? failureMessage(failed.failure) : undefined)?.trim() ?? '');
  switch (failed.cause) {
    case Cause.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR:
      return { reason: 'nondeterminism', message: message || 'Non-determinism error.' };
    case Cause.WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_WORKER_UNHANDLED_FAILURE:
      return { reason: 'workflow_code_error', message: message || 'The workflow code threw an error.' };
    default: {
      // Temporal refused what the task asked for (a limit, bad attributes): the cause says which.
      const cause = causeName(failed.cause);
      return { reason: 'workflow_task_failed', message: message ? `${cause}: ${message}` : cause };
    }
  }
}

/** `pending_activities_limit_exceeded` for WORKFLOW_TASK_FAILED_CAUSE_PENDING_ACTIVITIES_LIMIT_EXCEEDED. */
function causeName(cause: temporal.api.enums.v1.WorkflowTaskFailedCause | null | undefined): string {
  const name = cause == null ? undefined : (Cause[cause] as string | undefined);
  return (name ?? 'WORKFLOW_TASK_FAILED_CAUSE_UNSPECIFIED')
    .replace(/^WORKFLOW_TASK_FAILED_CAUSE_/, '')
    .toLowerCase();
}

function truncate(message: string): string {
  return message.length <= STALLED_MESSAGE_MAX_CHARS
    ? message
    : `${message.slice(0, STALLED_MESSAGE_MAX_CHARS - 1)}…`;
}

/**
 * The build the run's workflow tasks go to: the build an override pins it to (a move), else the one a
 * transition takes it to, else the one that completed its last task; null for unversioned workers.
 */
function buildOf(
  info: temporal.api.workflow.v1.IWorkflowExecutionVersioningInfo | null | undefined,
): string | null {
  return (
    info?.versioningOverride?.pinned?.version?.buildId ||
    info?.versionTransition?.deploymentVersion?.buildId ||
    info?.deploymentVersion?.buildId ||
    null
  );
}
