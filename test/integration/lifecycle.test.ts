/**
 * Execution statuses (docs/api.md#executions): cancel, terminate (from Temporal's CLI) and time out, as the
 * API shows them.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import {
  createWorkflow,
  definition,
  expectError,
  httpStep,
  rulesStep,
  stepOf,
  trigger,
  waitForExecution,
} from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { sharedTemporal, startTestService, type TestService } from '../support/stack';
import { waitFor } from '../support/wait';

const run = promisify(execFile);

describe('cancel, terminate, time out @integration', function () {
  let service: TestService;
  let receiver: Receiver;
  before(async function () {
    this.timeout(120_000);
    service = await startTestService();
    receiver = await Receiver.start();
  });
  after(async () => {
    await receiver?.stop();
    await service?.stop();
  });

  /** An execution whose connector step is held open by the receiver until `release()`. */
  async function heldExecution(path: string) {
    let release!: () => void;
    receiver.replyOnceTo(path, { status: 200, until: new Promise<void>((resolve) => (release = resolve)) });
    const workflowId = await createWorkflow(
      service.api(),
      definition([
        httpStep('call', { url: `${receiver.url}${path}` }),
        rulesStep('after', [{ when: 'true', output: 1 }]),
      ]),
    );
    const id = await trigger(service.api(), workflowId);
    await waitForExecution(service.api(), id, (e) => e.steps.some((s) => s.id === 'call'));
    await waitFor(async () => receiver.requestsTo(path).length > 0, {
      what: 'the request to reach the receiver',
    });
    return { id, release };
  }

  it('cancels a running execution: 202, status canceled, the running step canceled', async () => {
    const { id, release } = await heldExecution('/cancel-me');
    try {
      const res = await service.api().post(`/v1/executions/${id}/cancel`).expect(202);
      expect(res.body).to.deep.equal({ status: 'accepted', execution_id: id });
      const done = await waitForExecution(service.api(), id);
      expect(done.status).to.equal('canceled');
      expect(done.error).to.include({ code: 'canceled' });
      expect(stepOf(done, 'call').status).to.equal('canceled');
      expect(done.steps.map((s) => s.id)).to.deep.equal(['trigger', 'call']);
    } finally {
      release();
    }
  });

  it("aborts the canceled step's HTTP request", async () => {
    const { id, release } = await heldExecution('/abort-me');
    try {
      const [request] = receiver.requestsTo('/abort-me');
      await service.api().post(`/v1/executions/${id}/cancel`).expect(202);
      await waitForExecution(service.api(), id);
      expect(request).to.exist;
      // The receiver's socket for the held request was closed by the activity, not answered.
      await waitFor(async () => receiver.abortedPaths.includes('/abort-me'), {
        what: 'the request to be aborted',
        timeoutMs: 15_000,
      });
    } finally {
      release();
    }
  });

  it('answers 409 execution_not_running to cancel a finished execution', async () => {
    const workflowId = await createWorkflow(
      service.api(),
      definition([rulesStep('a', [{ when: 'true', output: 1 }])]),
    );
    const id = await trigger(service.api(), workflowId);
    await waitForExecution(service.api(), id);
    expectError(await service.api().post(`/v1/executions/${id}/cancel`), 409, 'execution_not_running');
  });

  it('answers 404 to cancel an unknown execution', async () => {
    expectError(
      await service.api().post('/v1/executions/ex_unknownunknownunknown00/cancel'),
      404,
      'execution_not_found',
    );
  });

  it('shows an execution terminated with the Temporal CLI as terminated, with the reason', async () => {
    const { id, release } = await heldExecution('/terminate-me');
    try {
      const { cliPath, address } = await sharedTemporal();
      await run(cliPath, [
        'workflow',
        'terminate',
        '--address',
        address,
        '--workflow-id',
        id,
        '--reason',
        'operator stop',
      ]);
      const done = await waitForExecution(service.api(), id);
      expect(done.status).to.equal('terminated');
      expect(done.error).to.deep.equal({
        step: null,
        code: 'terminated',
        message: 'Terminated: operator stop',
      });
      expect(stepOf(done, 'call').status).to.equal('canceled');
    } finally {
      release();
    }
  });

  it('times out an execution that runs past the definition timeout', async () => {
    let release!: () => void;
    receiver.replyOnceTo('/slow', { until: new Promise<void>((resolve) => (release = resolve)) });
    const workflowId = await createWorkflow(
      service.api(),
      definition([httpStep('call', { url: `${receiver.url}/slow` })], { timeout: '2s' }),
    );
    try {
      const id = await trigger(service.api(), workflowId);
      const done = await waitForExecution(service.api(), id);
      expect(done.status).to.equal('timed_out');
      expect(done.error).to.include({ code: 'timed_out' });
      const listed = await waitFor(
        async () => {
          const res = await service.api().get(`/v1/executions?workflow=${workflowId}&status=timed_out`);
          return res.body.data[0];
        },
        { what: 'the timed-out execution in the list' },
      );
      expect(listed.execution_id).to.equal(id);
    } finally {
      release();
    }
  });

  it('fails a step that runs past its own timeout with step_timed_out', async () => {
    let release!: () => void;
    receiver.replyOnceTo('/slow-step', { until: new Promise<void>((resolve) => (release = resolve)) });
    const retry = { max_attempts: 1 };
    const workflowId = await createWorkflow(
      service.api(),
      definition([httpStep('call', { url: `${receiver.url}/slow-step` }, { timeout: '1s', retry })]),
    );
    try {
      const done = await waitForExecution(service.api(), await trigger(service.api(), workflowId));
      expect(done.status).to.equal('failed');
      expect(done.error).to.include({ step: 'call', code: 'step_timed_out' });
      expect(stepOf(done, 'call').error).to.include({ code: 'step_timed_out' });
    } finally {
      release();
    }
  });
});
