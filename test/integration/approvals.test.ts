/** Approvals (docs/api.md#approvals): waiting, approve/reject through a Temporal Update, timeouts. */
import { expect } from 'chai';
import {
  createWorkflow,
  definition,
  expectError,
  rulesStep,
  stepOf,
  trigger,
  waitForExecution,
  type ExecutionBody,
} from '../support/fixtures';
import { startTestService, type TestService } from '../support/stack';
import { waitFor } from '../support/wait';

describe('approvals @integration', function () {
  let service: TestService;
  let workflowId: string;
  before(async function () {
    this.timeout(120_000);
    service = await startTestService();
    workflowId = await createWorkflow(
      service.api(),
      definition([
        rulesStep('prepare', [{ when: 'true', output: { amount: '{{ input.amount }}' } }]),
        {
          id: 'review',
          kind: 'approval',
          name: 'Manager review',
          message: 'Approve {{ input.amount }} EUR?',
        },
        rulesStep('after', [{ when: 'true', output: '{{ steps.review.output.decision }}' }]),
      ]),
    );
  });
  after(async () => service?.stop());

  async function waitingExecution(): Promise<ExecutionBody> {
    const id = await trigger(service.api(), workflowId, { amount: 120 });
    return waitForExecution(service.api(), id, (e) => e.status === 'waiting');
  }

  it('puts the execution and the step in status waiting', async () => {
    const execution = await waitingExecution();
    const review = stepOf(execution, 'review');
    expect(review).to.include({
      status: 'waiting',
      kind: 'approval',
      name: 'Manager review',
      finished_at: null,
      output: null,
    });
    expect(review.input).to.deep.equal({ message: 'Approve 120 EUR?', timeout: null });
    expect(execution.steps.map((s) => s.id)).to.deep.equal(['trigger', 'prepare', 'review']);
  });

  it('lists waiting executions with status=waiting, not with status=running', async () => {
    const { execution_id: id } = await waitingExecution();
    const listed = await waitFor(
      async () => {
        const res = await service.api().get(`/v1/executions?workflow=${workflowId}&status=waiting&limit=100`);
        return res.body.data.find((e: { execution_id: string }) => e.execution_id === id);
      },
      { what: 'the waiting execution in the list' },
    );
    expect(listed.status).to.equal('waiting');
    const running = await service
      .api()
      .get(`/v1/executions?workflow=${workflowId}&status=running&limit=100`)
      .expect(200);
    expect(running.body.data.map((e: { execution_id: string }) => e.execution_id)).not.to.include(id);
  });

  it('approves: 200 with the step, the deciding key and the comment in its output, and the run goes on', async () => {
    const key = await service
      .api()
      .post('/v1/api-keys', { name: 'approver', scopes: ['write'] })
      .expect(201);
    const { execution_id: id } = await waitingExecution();
    const res = await service
      .api(key.body.key)
      .post(`/v1/executions/${id}/steps/review/approve`, { comment: 'looks fine' })
      .expect(200);
    expect(res.body).to.include({ id: 'review', status: 'success' });
    expect(res.body.output).to.include({
      decision: 'approved',
      decided_by: key.body.id,
      comment: 'looks fine',
    });
    expect(res.body.output.decided_at).to.be.a('string');
    const done = await waitForExecution(service.api(), id);
    expect(done.status).to.equal('success');
    expect(stepOf(done, 'after').output).to.equal('approved');
    expect(stepOf(done, 'review').finished_at).to.equal(res.body.output.decided_at);
  });

  it('answers a second decision with 409 step_not_waiting', async () => {
    const { execution_id: id } = await waitingExecution();
    await service.api().post(`/v1/executions/${id}/steps/review/approve`).expect(200);
    expectError(
      await service.api().post(`/v1/executions/${id}/steps/review/reject`),
      409,
      'step_not_waiting',
    );
  });

  it('lets only one of two concurrent decisions through', async () => {
    const { execution_id: id } = await waitingExecution();
    const [a, b] = await Promise.all([
      service.api().post(`/v1/executions/${id}/steps/review/approve`),
      service.api().post(`/v1/executions/${id}/steps/review/reject`),
    ]);
    expect([a.status, b.status].sort()).to.deep.equal([200, 409]);
  });

  it('answers 409 step_not_waiting for a step that is not an approval', async () => {
    const { execution_id: id } = await waitingExecution();
    expectError(
      await service.api().post(`/v1/executions/${id}/steps/prepare/approve`),
      409,
      'step_not_waiting',
    );
  });

  it('answers 404 step_not_found for a step the workflow does not have', async () => {
    const { execution_id: id } = await waitingExecution();
    expectError(await service.api().post(`/v1/executions/${id}/steps/nope/approve`), 404, 'step_not_found');
  });

  it('answers 409 step_not_waiting once the execution has finished', async () => {
    const { execution_id: id } = await waitingExecution();
    await service.api().post(`/v1/executions/${id}/steps/review/approve`).expect(200);
    await waitForExecution(service.api(), id);
    expectError(
      await service.api().post(`/v1/executions/${id}/steps/review/approve`),
      409,
      'step_not_waiting',
    );
  });

  it('refuses a decision with a read key (403)', async () => {
    const { execution_id: id } = await waitingExecution();
    const readKey = await service.newKey('default', ['read']);
    expectError(
      await service.api(readKey).post(`/v1/executions/${id}/steps/review/approve`),
      403,
      'forbidden',
    );
  });

  it("answers 404 for another workspace's execution", async () => {
    const { execution_id: id } = await waitingExecution();
    const other = await service.newWorkspace(['write']);
    expectError(
      await service.api(other.key).post(`/v1/executions/${id}/steps/review/approve`),
      404,
      'execution_not_found',
    );
  });

  it('rejects: the execution fails with approval_rejected, the decision in the step output', async () => {
    const { execution_id: id } = await waitingExecution();
    const res = await service
      .api()
      .post(`/v1/executions/${id}/steps/review/reject`, { comment: 'too much' })
      .expect(200);
    expect(res.body).to.include({ status: 'failed' });
    expect(res.body.output).to.include({ decision: 'rejected', comment: 'too much' });
    const done = await waitForExecution(service.api(), id);
    expect(done.status).to.equal('failed');
    expect(done.error).to.include({ step: 'review', code: 'approval_rejected' });
    expect(done.error!.message).to.include('too much');
  });

  it('fails the step with approval_timed_out when nobody decides in time', async () => {
    const timed = await createWorkflow(
      service.api(),
      definition([{ id: 'review', kind: 'approval', timeout: '2s' }]),
    );
    const id = await trigger(service.api(), timed);
    const done = await waitForExecution(service.api(), id);
    expect(done.status).to.equal('failed');
    expect(done.error).to.deep.include({ step: 'review', code: 'approval_timed_out' });
    expect(stepOf(done, 'review')).to.deep.include({
      status: 'failed',
      error: { code: 'approval_timed_out', message: done.error!.message },
    });
  });

  it('cancels a waiting execution', async () => {
    const { execution_id: id } = await waitingExecution();
    await service.api().post(`/v1/executions/${id}/cancel`).expect(202);
    const done = await waitForExecution(service.api(), id);
    expect(done.status).to.equal('canceled');
    expect(stepOf(done, 'review').status).to.equal('canceled');
  });
});
