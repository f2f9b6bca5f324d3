/**
 * An execution stuck on a failing workflow task (src/executions/stalled.ts): from describe's pending
 * workflow task and versioning info and the history's workflow task failures, what the API's `stalled`
 * says. The real thing, against a dev server and two worker builds: test/integration/deploys-stuck.test.ts.
 */
import { expect } from 'chai';
import { defaultPayloadConverter } from '@temporalio/common';
import { msNumberToTs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { STALLED_MESSAGE_MAX_CHARS, stalledOf } from '../../src/executions/stalled';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const EventType = temporal.api.enums.v1.EventType;
const Cause = temporal.api.enums.v1.WorkflowTaskFailedCause;
const TimeoutType = temporal.api.enums.v1.TimeoutType;

const at = (iso: string) => msNumberToTs(Date.parse(iso));

const event = (type: temporal.api.enums.v1.EventType, time: string, extra: HistoryEvent = {}) => ({
  eventType: type,
  eventTime: at(time),
  ...extra,
});
const completed = (time: string) => event(EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, time);
const failed = (time: string, cause: temporal.api.enums.v1.WorkflowTaskFailedCause, message: string) =>
  event(EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED, time, {
    workflowTaskFailedEventAttributes: {
      cause,
      failure: { message, stackTrace: 'at execution (workflow.js:1)' },
    },
  });
const timedOut = (time: string, timeoutType = TimeoutType.TIMEOUT_TYPE_START_TO_CLOSE) =>
  event(EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT, time, {
    workflowTaskTimedOutEventAttributes: { timeoutType },
  });
const signaled = (time: string) => event(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED, time);

const NONDETERMINISM = '[TMPRL1100] Nondeterminism error: No command scheduled for event TimerStarted';
const pinnedTo = (buildId: string) => ({ deploymentVersion: { deploymentName: 'switchyard', buildId } });

describe('stalled: an execution whose workflow task keeps failing', () => {
  const history = [
    completed('2026-11-26T06:00:00.000Z'),
    signaled('2026-11-26T06:05:00.000Z'),
    failed(
      '2026-11-26T06:05:00.100Z',
      Cause.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR,
      NONDETERMINISM,
    ),
  ];

  it('is null while the workflow task is at its first attempt, or none is pending', () => {
    expect(stalledOf({ events: history, pendingWorkflowTask: { attempt: 1 } })).to.equal(null);
    expect(stalledOf({ events: history })).to.equal(null);
  });

  it('names a non-determinism, its message, the attempt, the build and when the streak began', () => {
    expect(
      stalledOf({
        events: history,
        pendingWorkflowTask: { attempt: 4 },
        versioningInfo: pinnedTo('build-a'),
      }),
    ).to.deep.equal({
      reason: 'nondeterminism',
      message: NONDETERMINISM,
      attempts: 4,
      build_id: 'build-a',
      since: '2026-11-26T06:05:00.100Z',
    });
  });

  it('names the build a move pinned the run to, not the one that completed its last task', () => {
    const stalled = stalledOf({
      events: history,
      pendingWorkflowTask: { attempt: 2 },
      versioningInfo: {
        ...pinnedTo('build-a'),
        versioningOverride: {
          pinned: { version: { deploymentName: 'switchyard', buildId: 'build-b' } },
        },
      },
    });
    expect(stalled?.build_id).to.equal('build-b');
  });

  it('has no build for runs of unversioned workers', () => {
    expect(stalledOf({ events: history, pendingWorkflowTask: { attempt: 2 } })?.build_id).to.equal(null);
  });

  it('tells an error thrown in workflow code, with its message and never its stack trace', () => {
    const stalled = stalledOf({
      events: [
        completed('2026-11-26T06:00:00.000Z'),
        failed(
          '2026-11-26T06:01:00.000Z',
          Cause.WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_WORKER_UNHANDLED_FAILURE,
          'boom',
        ),
      ],
      pendingWorkflowTask: { attempt: 3 },
    });
    expect(stalled).to.include({ reason: 'workflow_code_error', message: 'boom' });
    expect(JSON.stringify(stalled)).not.to.contain('workflow.js');
  });

  it('reads the message a failure converter moved into encoded attributes (decoded by then), never the stack trace', () => {
    const encoded = event(EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED, '2026-11-26T06:01:00.000Z', {
      workflowTaskFailedEventAttributes: {
        cause: Cause.WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_WORKER_UNHANDLED_FAILURE,
        failure: {
          message: 'Encoded failure',
          encodedAttributes: defaultPayloadConverter.toPayload({
            message: 'boom',
            stack_trace: 'at workflow.js:1',
          }),
        },
      },
    });
    const stalled = stalledOf({ events: [encoded], pendingWorkflowTask: { attempt: 2 } });
    expect(stalled).to.include({ reason: 'workflow_code_error', message: 'boom' });
    expect(JSON.stringify(stalled)).not.to.contain('workflow.js');
  });

  it('names the cause of a task Temporal refused', () => {
    const stalled = stalledOf({
      events: [
        failed(
          '2026-11-26T06:01:00.000Z',
          Cause.WORKFLOW_TASK_FAILED_CAUSE_PENDING_ACTIVITIES_LIMIT_EXCEEDED,
          'too many',
        ),
      ],
      pendingWorkflowTask: { attempt: 2 },
    });
    expect(stalled).to.include({
      reason: 'workflow_task_failed',
      message: 'pending_activities_limit_exceeded: too many',
    });
  });

  it('tells a workflow task that keeps timing out (a worker that dies or hangs)', () => {
    const stalled = stalledOf({
      events: [
        completed('2026-11-26T06:00:00.000Z'),
        timedOut('2026-11-26T06:00:09.000Z', TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_START),
        timedOut('2026-11-26T06:00:20.000Z'),
      ],
      pendingWorkflowTask: { attempt: 5 },
    });
    expect(stalled?.reason).to.equal('workflow_task_timed_out');
    // A sticky worker gone (schedule-to-start) is no failure of the task: the streak starts later.
    expect(stalled?.since).to.equal('2026-11-26T06:00:20.000Z');
  });

  it('counts the streak from the first failure after the last completed task', () => {
    const stalled = stalledOf({
      events: [
        failed(
          '2026-11-26T05:00:00.000Z',
          Cause.WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_WORKER_UNHANDLED_FAILURE,
          'old',
        ),
        completed('2026-11-26T05:01:00.000Z'),
        failed(
          '2026-11-26T06:00:00.000Z',
          Cause.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR,
          NONDETERMINISM,
        ),
        failed('2026-11-26T06:00:01.000Z', Cause.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR, 'again'),
      ],
      pendingWorkflowTask: { attempt: 2 },
    });
    expect(stalled).to.include({
      reason: 'nondeterminism',
      message: 'again',
      since: '2026-11-26T06:00:00.000Z',
    });
  });

  it('keeps long messages short', () => {
    const stalled = stalledOf({
      events: [
        failed(
          '2026-11-26T06:00:00.000Z',
          Cause.WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_WORKER_UNHANDLED_FAILURE,
          'x'.repeat(10_000),
        ),
      ],
      pendingWorkflowTask: { attempt: 2 },
    });
    expect(stalled?.message).to.have.length(STALLED_MESSAGE_MAX_CHARS);
    expect(stalled?.message.endsWith('…')).to.equal(true);
  });
});
