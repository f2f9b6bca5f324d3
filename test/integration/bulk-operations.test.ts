/**
 * Bulk operations (docs/operations.md#bulk-operations): a filter chooses executions, a dry run
 * counts them and changes nothing, an operation cancels, retries or reruns them in the background, reports
 * its progress and what it skipped, can be stopped, and acts on each execution once.
 */
import { expect } from 'chai';
import {
  createWorkflow,
  definition,
  expectError,
  rulesStep,
  stepOf,
  trigger,
  waitForExecution,
} from '../support/fixtures';
import { startTestService, type TestService } from '../support/stack';
import { waitFor } from '../support/wait';

interface Operation {
  id: string;
  action: string;
  status: string;
  matched: number;
  succeeded: number;
  failed: number;
  skipped: number;
  errors: { execution_id: string; code: string; message: string }[];
  finished_at: string | null;
}

describe('bulk operations @integration', function () {
  this.timeout(180_000);
  let service: TestService;
  before(async function () {
    service = await startTestService();
  });
  after(async () => service?.stop());

  /** A workflow whose runs fail while `input.ok` is not true, and the ids of its runs, all finished. */
  async function failingRuns(
    inputs: Record<string, unknown>[],
  ): Promise<{ workflowId: string; ids: string[] }> {
    const workflowId = await createWorkflow(
      service.api(),
      definition([
        rulesStep('gate', [{ when: '$not(input.ok = true)', action: 'fail', message: 'not ok' }], {
          default: 'ok',
        }),
      ]),
    );
    const ids: string[] = [];
    for (const input of inputs) ids.push(await trigger(service.api(), workflowId, input));
    for (const id of ids) await waitForExecution(service.api(), id);
    await waitFor(
      async () => {
        const res = await service.api().get(`/v1/executions?workflow=${workflowId}&limit=100`);
        return res.body.data.filter((e: { status: string }) => e.status !== 'running').length === ids.length;
      },
      { what: 'visibility to list every finished run' },
    );
    return { workflowId, ids };
  }

  async function finished(id: string): Promise<Operation> {
    return waitFor(
      async () => {
        const res = await service.api().get(`/v1/bulk-operations/${id}`).expect(200);
        return res.body.status !== 'running' ? (res.body as Operation) : undefined;
      },
      { timeoutMs: 60_000, what: `bulk operation ${id} to finish` },
    );
  }

  it('a dry run counts what the filter matches, names a sample, and changes nothing', async () => {
    const { workflowId, ids } = await failingRuns([{}, { ok: true }, {}]);
    const res = await service
      .api()
      .post('/v1/bulk-operations', {
        action: 'retry',
        filter: { workflow: workflowId, status: 'failed' },
        dry_run: true,
      })
      .expect(200);
    expect(res.body.matched).to.equal(2);
    expect([...res.body.sample].sort()).to.deep.equal([ids[0], ids[2]].sort());
    const list = await service.api().get('/v1/bulk-operations?limit=100').expect(200);
    expect(list.body.data.map((op: Operation) => op.action)).to.not.include('dry_run');
    for (const id of [ids[0], ids[2]])
      expect((await service.api().get(`/v1/executions/${id}`).expect(200)).body.status).to.equal('failed');
  });

  it('retries every failed execution of a workflow with a corrected input, once each', async () => {
    const { workflowId, ids } = await failingRuns([{}, {}, { ok: true }]);
    const created = await service
      .api()
      .post('/v1/bulk-operations', {
        action: 'retry',
        filter: { workflow: workflowId, error_code: 'rule_failed' },
        input: { ok: true },
      })
      .expect(202);
    expect(created.body).to.include({ status: 'running', matched: 2 });
    expect(created.body.id).to.match(/^op_/);
    const op = await finished(created.body.id as string);
    expect(op).to.include({ status: 'completed', matched: 2, succeeded: 2, failed: 0, skipped: 0 });
    for (const id of ids.slice(0, 2)) {
      const done = await waitForExecution(service.api(), id, (e) => e.status === 'success');
      expect(stepOf(done, 'gate').output).to.equal('ok');
    }
  });

  it('skips executions that do not qualify, and counts them', async () => {
    const { ids } = await failingRuns([{}, { ok: true }]);
    const created = await service
      .api()
      .post('/v1/bulk-operations', { action: 'retry', filter: { execution_ids: ids }, input: { ok: true } })
      .expect(202);
    const op = await finished(created.body.id as string);
    expect(op).to.include({ matched: 2, succeeded: 1, skipped: 1, failed: 0 });
  });

  it('cancels the open executions a filter matches', async () => {
    const workflowId = await createWorkflow(
      service.api(),
      definition([{ id: 'nap', kind: 'sleep', duration: '1h' }]),
    );
    const ids = [await trigger(service.api(), workflowId), await trigger(service.api(), workflowId)];
    for (const id of ids) await waitForExecution(service.api(), id, (e) => e.status === 'waiting');
    await waitFor(
      async () => {
        const res = await service.api().get(`/v1/executions?workflow=${workflowId}&status=waiting`);
        return res.body.data.length === 2;
      },
      { what: 'visibility to list both waiting runs' },
    );
    const created = await service
      .api()
      .post('/v1/bulk-operations', { action: 'cancel', filter: { workflow: workflowId, status: 'waiting' } })
      .expect(202);
    const op = await finished(created.body.id as string);
    expect(op).to.include({ succeeded: 2, skipped: 0 });
    for (const id of ids) expect((await waitForExecution(service.api(), id)).status).to.equal('canceled');
  });

  it('reruns executions with the same input: new executions that name the one they rerun', async () => {
    const { workflowId, ids } = await failingRuns([{ ok: true }]);
    const created = await service
      .api()
      .post('/v1/bulk-operations', { action: 'rerun', filter: { execution_ids: ids } })
      .expect(202);
    const op = await finished(created.body.id as string);
    expect(op).to.include({ succeeded: 1 });
    const rerun = await waitFor(
      async () => {
        const res = await service.api().get(`/v1/executions?workflow=${workflowId}&limit=10`);
        return res.body.data.find((e: { execution_id: string }) => e.execution_id !== ids[0]);
      },
      { what: 'the rerun listed' },
    );
    const read = await waitForExecution(service.api(), rerun.execution_id as string);
    expect(read.status).to.equal('success');
    expect((read as unknown as { rerun_of: string }).rerun_of).to.equal(ids[0]);
    expect(stepOf(read, 'trigger').output).to.deep.equal({ ok: true });
  });

  it('refuses a filter without a field, an unknown action, and options of another action', async () => {
    expectError(
      await service.api().post('/v1/bulk-operations', { action: 'cancel', filter: {} }),
      400,
      'invalid_request',
    );
    expectError(
      await service.api().post('/v1/bulk-operations', { action: 'delete', filter: { status: 'failed' } }),
      400,
      'invalid_request',
    );
    expectError(
      await service
        .api()
        .post('/v1/bulk-operations', { action: 'cancel', filter: { status: 'failed' }, input: {} }),
      400,
      'invalid_request',
    );
  });

  it('answers 404 bulk_operation_not_found for an unknown operation, and lists the workspace operations', async () => {
    expectError(await service.api().get('/v1/bulk-operations/op_unknown'), 404, 'bulk_operation_not_found');
    expectError(
      await service.api().post('/v1/bulk-operations/op_unknown/cancel'),
      404,
      'bulk_operation_not_found',
    );
    const list = await service.api().get('/v1/bulk-operations?limit=100').expect(200);
    expect(list.body.data.length).to.be.at.least(1);
    expect(list.body.data[0]).to.have.keys([
      'id',
      'action',
      'filter',
      'status',
      'matched',
      'succeeded',
      'failed',
      'skipped',
      'errors',
      'created_at',
      'finished_at',
    ]);
  });

  it('can be stopped: it stays canceled, and its counts are what it did', async () => {
    const { ids } = await failingRuns([{}, {}, {}]);
    // Stopped at once: the runner may have acted on a first batch; whatever it did, the counts say.
    const created = await service
      .api()
      .post('/v1/bulk-operations', { action: 'retry', filter: { execution_ids: ids }, input: { ok: true } })
      .expect(202);
    const canceled = await service.api().post(`/v1/bulk-operations/${created.body.id}/cancel`).expect(200);
    expect(canceled.body.status).to.equal('canceled');
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const op = (await service.api().get(`/v1/bulk-operations/${created.body.id}`).expect(200))
      .body as Operation;
    expect(op.status).to.equal('canceled');
    let retried = 0;
    for (const id of ids) {
      const res = await service.api().get(`/v1/executions/${id}`).expect(200);
      if (res.body.status !== 'failed') retried++;
    }
    expect(retried, 'executions it retried').to.equal(op.succeeded);
  });
});
