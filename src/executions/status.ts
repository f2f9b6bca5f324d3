/**
 * An execution's status (docs/api.md#executions) from what Temporal says of its run: one mapping for every
 * read — a describe (GET one), visibility (the list) and the close event of its history (the steps view).
 */
import { temporal } from '@temporalio/proto';
import type { ErrorView, ExecutionStatus } from './views';

export type ClosedStatus = Exclude<ExecutionStatus, 'queued' | 'running' | 'waiting'>;

const WorkflowStatus = temporal.api.enums.v1.WorkflowExecutionStatus;
const EventType = temporal.api.enums.v1.EventType;

const CLOSED_BY_RUN_STATUS = new Map<temporal.api.enums.v1.WorkflowExecutionStatus, ClosedStatus>([
  [WorkflowStatus.WORKFLOW_EXECUTION_STATUS_COMPLETED, 'success'],
  [WorkflowStatus.WORKFLOW_EXECUTION_STATUS_FAILED, 'failed'],
  [WorkflowStatus.WORKFLOW_EXECUTION_STATUS_CANCELED, 'canceled'],
  [WorkflowStatus.WORKFLOW_EXECUTION_STATUS_TERMINATED, 'terminated'],
  [WorkflowStatus.WORKFLOW_EXECUTION_STATUS_TIMED_OUT, 'timed_out'],
]);

const CLOSED_BY_EVENT = new Map<temporal.api.enums.v1.EventType, ClosedStatus>([
  [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, 'success'],
  [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED, 'failed'],
  [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED, 'canceled'],
  [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED, 'terminated'],
  [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT, 'timed_out'],
]);

/**
 * The status of an execution from its run's Temporal status; an open run is `queued` or `waiting` while
 * the workflow says so (its search attributes), `running` otherwise.
 */
export function executionStatus(
  runStatus: temporal.api.enums.v1.WorkflowExecutionStatus | null | undefined,
  flags: { waiting: boolean; queued: boolean },
): ExecutionStatus {
  const closed = runStatus == null ? undefined : CLOSED_BY_RUN_STATUS.get(runStatus);
  return closed ?? openStatus(flags);
}

/** An open run's status from its search attributes (SwitchyardQueued, SwitchyardWaiting). */
export function openStatus(flags: { waiting?: boolean; queued?: boolean }): 'queued' | 'waiting' | 'running' {
  if (flags.queued) return 'queued';
  return flags.waiting ? 'waiting' : 'running';
}

/** The status a history event closes the run with, or undefined for any other event. */
export function closedStatusOfEvent(
  eventType: temporal.api.enums.v1.EventType | null | undefined,
): ClosedStatus | undefined {
  return eventType == null ? undefined : CLOSED_BY_EVENT.get(eventType);
}

/**
 * The error of a run that was closed from outside (canceled, terminated with an optional reason, timed
 * out); null for the others (a failed run's error is its own).
 */
export function closedFromOutsideError(status: ClosedStatus, reason?: string | null): ErrorView | null {
  switch (status) {
    case 'canceled':
      return { step: null, code: 'canceled', message: 'The execution was canceled.' };
    case 'terminated':
      return {
        step: null,
        code: 'terminated',
        message: reason ? `Terminated: ${reason}` : 'The execution was terminated.',
      };
    case 'timed_out':
      return { step: null, code: 'timed_out', message: 'The execution timed out.' };
    default:
      return null;
  }
}
