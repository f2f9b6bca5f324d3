/**
 * Fault: the API process that runs a bulk operation (docs/operations.md#bulk-operations) is killed (SIGKILL)
 * half-way, then started again. The operation goes on where it stopped once its lease runs out, completes,
 * and counts every execution retried once: those retried before the kill (one may have been under way) are
 * not retried again, and none is left out.
 */
import { expect } from 'chai';
import { rulesStep } from '../support/fixtures';
import type { ApiClient } from '../support/stack';
import { waitFor } from '../support/wait';
import { reportScenario, waitAllFinal } from './harness';
import { startScenario, type Scenario } from './scenario';

const RUNS = 30;

describe('fault: API killed in the middle of a bulk retry @integration @faults', function () {
  this.timeout(300_000);
  let scenario: Scenario;
  const client = (): ApiClient => scenario.deployment.client();
  const runs: string[] = [];

  before(async () => {
    // Three actions a second: the kill comes while most executions are still to do.
    scenario = await startScenario(
      () => [
        rulesStep('gate', [{ when: '$not(input.ok = true)', action: 'fail', message: 'not ok' }], {
          default: 'ok',
        }),
      ],
      { env: { BULK_ACTIONS_PER_SECOND: '3' } },
    );
    for (let i = 0; i < RUNS; i++) {
      const res = await client().post(`/v1/workflows/${scenario.workflowId}/trigger`, {}).expect(202);
      runs.push(res.body.execution_id as string);
    }
    await waitAllFinal(client(), runs, 120_000);
    await waitFor(
      async () => {
        const res = await client().get(
          `/v1/executions?workflow=${scenario.workflowId}&status=failed&limit=100`,
        );
        return res.body.data.length === RUNS;
      },
      { timeoutMs: 60_000, what: `${RUNS} failed runs listed` },
    );
  });
  after(async () => scenario?.stop());

  it('resumes after the kill, completes, and retries every execution once', async () => {
    const created = await client()
      .post('/v1/bulk-operations', {
        action: 'retry',
        filter: { workflow: scenario.workflowId, status: 'failed' },
        input: { ok: true },
      })
      .expect(202);
    const id = created.body.id as string;
    expect(created.body.matched).to.equal(RUNS);
    await waitFor(
      async () => {
        const op = (await client().get(`/v1/bulk-operations/${id}`).expect(200)).body;
        return op.succeeded >= 5;
      },
      { timeoutMs: 60_000, what: 'the operation under way' },
    );
    await scenario.deployment.api.kill('SIGKILL');
    await scenario.deployment.startApi();

    const op = await waitFor(
      async () => {
        const res = await client().get(`/v1/bulk-operations/${id}`).timeout(10_000);
        return res.status === 200 && res.body.status === 'completed' ? res.body : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 1000, what: 'the operation completed after the restart' },
    );
    expect(op).to.include({ matched: RUNS, succeeded: RUNS, failed: 0, skipped: 0 });
    const statuses = await waitAllFinal(client(), runs, 120_000);
    expect([...statuses.values()].filter((status) => status !== 'success')).to.deep.equal([]);
    // One retry record per execution: each was retried (none skipped or left), and by one retry.
    const counts = await scenario.deployment.withDatabase(async (db) =>
      db.query<{ execution_id: string; n: number }>(
        'select execution_id, count(*)::int as n from execution_retries where execution_id = any($1) group by execution_id',
        [runs],
      ),
    );
    expect(
      counts.filter((row) => row.n !== 1),
      'executions with more than one retry',
    ).to.deep.equal([]);
    expect(counts).to.have.length(RUNS);
    reportScenario('bulk-api-kill', { executions: RUNS, retried: counts.length });
  });
});
