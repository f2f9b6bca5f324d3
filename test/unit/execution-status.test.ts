import { expect } from 'chai';
import { temporal } from '@temporalio/proto';
import { closedFromOutsideError, closedStatusOfEvent, executionStatus } from '../../src/executions/status';

const RunStatus = temporal.api.enums.v1.WorkflowExecutionStatus;
const EventType = temporal.api.enums.v1.EventType;

const OPEN = { waiting: false, queued: false };
const WAITING = { waiting: true, queued: false };

describe('execution status (one mapping for describe, list and history)', () => {
  it('maps every closed Temporal status to the contract status', () => {
    expect(executionStatus(RunStatus.WORKFLOW_EXECUTION_STATUS_COMPLETED, OPEN)).to.equal('success');
    expect(executionStatus(RunStatus.WORKFLOW_EXECUTION_STATUS_FAILED, OPEN)).to.equal('failed');
    expect(executionStatus(RunStatus.WORKFLOW_EXECUTION_STATUS_CANCELED, OPEN)).to.equal('canceled');
    expect(executionStatus(RunStatus.WORKFLOW_EXECUTION_STATUS_TERMINATED, OPEN)).to.equal('terminated');
    expect(executionStatus(RunStatus.WORKFLOW_EXECUTION_STATUS_TIMED_OUT, OPEN)).to.equal('timed_out');
  });

  it('reads an open run as waiting when the workflow says so, running otherwise', () => {
    expect(executionStatus(RunStatus.WORKFLOW_EXECUTION_STATUS_RUNNING, WAITING)).to.equal('waiting');
    expect(executionStatus(RunStatus.WORKFLOW_EXECUTION_STATUS_RUNNING, OPEN)).to.equal('running');
    expect(executionStatus(undefined, OPEN)).to.equal('running');
  });

  it('reads an open run as queued while flow control holds it back, whatever else it says', () => {
    expect(
      executionStatus(RunStatus.WORKFLOW_EXECUTION_STATUS_RUNNING, { waiting: false, queued: true }),
    ).to.equal('queued');
    expect(
      executionStatus(RunStatus.WORKFLOW_EXECUTION_STATUS_CANCELED, { waiting: false, queued: true }),
    ).to.equal('canceled');
  });

  it('gives the same status from the close event of the history', () => {
    expect(closedStatusOfEvent(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED)).to.equal('success');
    expect(closedStatusOfEvent(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED)).to.equal('failed');
    expect(closedStatusOfEvent(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED)).to.equal('canceled');
    expect(closedStatusOfEvent(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED)).to.equal('terminated');
    expect(closedStatusOfEvent(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT)).to.equal('timed_out');
    expect(closedStatusOfEvent(EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED)).to.equal(undefined);
  });

  it('explains a run closed from outside, with the termination reason when there is one', () => {
    expect(closedFromOutsideError('terminated', 'stuck')).to.deep.equal({
      step: null,
      code: 'terminated',
      message: 'Terminated: stuck',
    });
    expect(closedFromOutsideError('canceled')?.code).to.equal('canceled');
    expect(closedFromOutsideError('timed_out')?.code).to.equal('timed_out');
    expect(closedFromOutsideError('success')).to.equal(null);
  });
});
