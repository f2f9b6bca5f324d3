/**
 * Retry from the failed step (docs/api.md#retry-from-the-failed-step): a Temporal reset, nothing run twice,
 * optional corrected input.
 */
import { expect } from 'chai';
import {
  createWorkflow,
  definition,
  expectError,
  FAST_RETRY,
  httpStep,
  rulesStep,
  stepOf,
  trigger,
  waitForExecution,
  type ExecutionBody,
} from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { startTestService, type TestService } from '../support/stack';
import { waitFor } from '../support/wait';

const NO_RETRY = { ...FAST_RETRY, max_attempts: 1 };

describe('retry from the failed step @integration', function () {
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

  /** before (connector, always fine) → check (connector at `path`, fails while the receiver says so) → after. */
  async function failingRun(path: string): Promise<{ workflowId: string; failed: ExecutionBody }> {
    receiver.replyOnceTo(path, { status: 500, body: 'down' });
    const workflowId = await createWorkflow(
      service.api(),
      definition(
        [
          httpStep('before', {
            method: 'POST',
            url: `${receiver.url}${path}-before`,
            body: { customer: '{{ input.customer }}' },
          }),
          httpStep(
            'check',
            { method: 'POST', url: `${receiver.url}${path}`, body: { customer: '{{ input.customer }}' } },
            { retry: NO_RETRY },
          ),
          rulesStep('after', [{ when: 'true', output: '{{ input.customer }}' }]),
        ],
        {
          input_schema: {
            type: 'object',
            required: ['customer'],
            properties: { customer: { type: 'string', minLength: 2 } },
          },
        },
      ),
    );
    const id = await trigger(service.api(), workflowId, { customer: 'Ada' });
    const failed = await waitForExecution(service.api(), id);
    expect(failed.status, JSON.stringify(failed.error)).to.equal('failed');
    return { workflowId, failed };
  }

  it('answers 202 with the same execution id and the failed step', async () => {
    const { failed } = await failingRun('/r1');
    const res = await service.api().post(`/v1/executions/${failed.execution_id}/retry`).expect(202);
    expect(res.body).to.deep.equal({
      status: 'accepted',
      execution_id: failed.execution_id,
      retried_from_step: 'check',
    });
    expect((await waitForExecution(service.api(), failed.execution_id)).status).to.equal('success');
  });

  it('does not run the steps before the failed one again, nor show them twice', async () => {
    const { failed } = await failingRun('/r2');
    const before = stepOf(failed, 'before');
    await service.api().post(`/v1/executions/${failed.execution_id}/retry`).expect(202);
    const done = await waitForExecution(service.api(), failed.execution_id);
    expect(done.steps.map((s) => s.id)).to.deep.equal(['trigger', 'before', 'check', 'after']);
    expect(receiver.requestsTo('/r2-before')).to.have.length(1);
    expect(receiver.requestsTo('/r2')).to.have.length(2);
    const kept = stepOf(done, 'before');
    expect(kept).to.deep.equal(before);
  });

  it('runs the failed step and the later ones with a corrected input', async () => {
    const { failed } = await failingRun('/r3');
    await service
      .api()
      .post(`/v1/executions/${failed.execution_id}/retry`, { input: { customer: 'Grace' } })
      .expect(202);
    const done = await waitForExecution(service.api(), failed.execution_id);
    expect(done.status).to.equal('success');
    expect((stepOf(done, 'before').input as { body: unknown }).body).to.deep.equal({ customer: 'Ada' });
    expect((stepOf(done, 'check').input as { body: unknown }).body).to.deep.equal({ customer: 'Grace' });
    expect(stepOf(done, 'after').output).to.equal('Grace');
    expect(receiver.requestsTo('/r3').map((r) => r.json)).to.deep.equal([
      { customer: 'Ada' },
      { customer: 'Grace' },
    ]);
  });

  it('answers 400 invalid_input for a corrected input that fails the input_schema', async () => {
    const { failed } = await failingRun('/r4');
    const res = await service
      .api()
      .post(`/v1/executions/${failed.execution_id}/retry`, { input: { customer: 'G' } });
    expectError(res, 400, 'invalid_input');
    expect(res.body.error.details[0].path).to.equal('/input/customer');
  });

  it('checks a corrected input against the version in the database, and answers 404 workflow_not_found once it is deleted', async () => {
    const { workflowId, failed } = await failingRun('/r4b');
    const tooShort = await service
      .api()
      .post(`/v1/executions/${failed.execution_id}/retry`, { input: { customer: 'G' } });
    expectError(tooShort, 400, 'invalid_input');
    await service.api().delete(`/v1/workflows/${workflowId}`).expect(204);
    const res = await service
      .api()
      .post(`/v1/executions/${failed.execution_id}/retry`, { input: { customer: 'Grace' } });
    expectError(res, 404, 'workflow_not_found');
    expect(res.body.error.message).to.include('Retry without "input"');
    // Without a corrected input the run needs nothing of the deleted version: it carries its definition.
    await service.api().post(`/v1/executions/${failed.execution_id}/retry`).expect(202);
    expect((await waitForExecution(service.api(), failed.execution_id)).status).to.equal('success');
  });

  it('answers 409 execution_not_failed for an execution that succeeded', async () => {
    const workflowId = await createWorkflow(
      service.api(),
      definition([rulesStep('a', [{ when: 'true', output: 1 }])]),
    );
    const id = await trigger(service.api(), workflowId);
    await waitForExecution(service.api(), id);
    expectError(await service.api().post(`/v1/executions/${id}/retry`), 409, 'execution_not_failed');
  });

  it('answers 409 execution_not_failed for an execution that is running', async () => {
    let release!: () => void;
    receiver.replyOnce({ until: new Promise<void>((resolve) => (release = resolve)) });
    const workflowId = await createWorkflow(
      service.api(),
      definition([httpStep('slow', { url: `${receiver.url}/r-slow` })]),
    );
    const id = await trigger(service.api(), workflowId);
    try {
      await waitForExecution(service.api(), id, (e) => e.steps.length > 1);
      expectError(await service.api().post(`/v1/executions/${id}/retry`), 409, 'execution_not_failed');
    } finally {
      release();
    }
  });

  it('starts one retry for concurrent requests', async () => {
    const { failed } = await failingRun('/r5');
    const responses = await Promise.all(
      Array.from({ length: 5 }, () => service.api().post(`/v1/executions/${failed.execution_id}/retry`)),
    );
    // Requests that overlap the first share its retry (202); one that comes after the reset finds the
    // execution running again (409 execution_not_failed). Either way one retry starts.
    const accepted = responses.filter((r) => r.status === 202);
    expect(accepted.length).to.be.at.least(1);
    for (const res of accepted) expect(res.body.retried_from_step).to.equal('check');
    for (const res of responses.filter((r) => r.status !== 202))
      expectError(res, 409, 'execution_not_failed');
    await waitForExecution(service.api(), failed.execution_id);
    // The original run and exactly one reset run.
    const { client } = service.runtime.services.temporal;
    const runs = await waitFor(
      async () =>
        (await client.workflow.count(`WorkflowId = '${failed.execution_id}'`)).count >= 2 &&
        (await client.workflow.count(`WorkflowId = '${failed.execution_id}'`)).count,
      {
        what: 'both runs in visibility',
      },
    );
    expect(runs).to.equal(2);
    expect(receiver.requestsTo('/r5')).to.have.length(2);
  });

  it('retries a retried run that failed again', async () => {
    const { failed } = await failingRun('/r6');
    receiver.replyOnceTo('/r6', { status: 500 }); // the first retry fails too
    await service.api().post(`/v1/executions/${failed.execution_id}/retry`).expect(202);
    const again = await waitForExecution(
      service.api(),
      failed.execution_id,
      (e) => e.status === 'failed' && receiver.requestsTo('/r6').length === 2,
    );
    expect(again.error!.step).to.equal('check');
    await service.api().post(`/v1/executions/${failed.execution_id}/retry`).expect(202);
    const done = await waitForExecution(service.api(), failed.execution_id, (e) => e.status === 'success');
    expect(done.steps.map((s) => s.id)).to.deep.equal(['trigger', 'before', 'check', 'after']);
    expect(receiver.requestsTo('/r6-before')).to.have.length(1);
  });

  it('shows a retried execution once in lists', async () => {
    const { workflowId, failed } = await failingRun('/r7');
    await service.api().post(`/v1/executions/${failed.execution_id}/retry`).expect(202);
    await waitForExecution(service.api(), failed.execution_id);
    const listed = await waitFor(
      async () => {
        const res = await service.api().get(`/v1/executions?workflow=${workflowId}`);
        return res.body.data.length > 0 &&
          res.body.data.every((e: { status: string }) => e.status === 'success')
          ? res.body.data
          : undefined;
      },
      { what: 'the retried execution to show as succeeded' },
    );
    expect(listed.map((e: { execution_id: string }) => e.execution_id)).to.deep.equal([failed.execution_id]);
  });

  it('retries from a rules step that failed the execution', async () => {
    const workflowId = await createWorkflow(
      service.api(),
      definition([
        rulesStep('gate', [{ when: 'input.blocked', action: 'fail', message: 'blocked' }], { default: 'ok' }),
      ]),
    );
    const id = await trigger(service.api(), workflowId, { blocked: true });
    expect((await waitForExecution(service.api(), id)).status).to.equal('failed');
    await service
      .api()
      .post(`/v1/executions/${id}/retry`, { input: { blocked: false } })
      .expect(202);
    const done = await waitForExecution(service.api(), id);
    expect(done.status).to.equal('success');
    expect(stepOf(done, 'gate').output).to.equal('ok');
  });

  it("answers 404 for another workspace's execution", async () => {
    const { failed } = await failingRun('/r8');
    const other = await service.newWorkspace(['write']);
    expectError(
      await service.api(other.key).post(`/v1/executions/${failed.execution_id}/retry`),
      404,
      'execution_not_found',
    );
  });
});
