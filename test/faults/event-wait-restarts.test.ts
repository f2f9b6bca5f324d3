/**
 * Fault: wait_for_event steps (docs/events.md#waiting-for-an-event) are durable. 100 executions wait, each
 * for the payment of its own order; the worker is killed (SIGKILL). Half the payments arrive while it is
 * down (the API files and dispatches them; Temporal keeps the signals for the runs), then the worker starts
 * again and the other half arrive. Every run is woken by its own event, once.
 */
import { expect } from 'chai';
import { rulesStep } from '../support/fixtures';
import type { ApiClient } from '../support/stack';
import { waitFor } from '../support/wait';
import { reportScenario, waitAllFinal } from './harness';
import { startScenario, type Scenario } from './scenario';

const RUNS = 100;

describe('fault: worker killed while 100 executions wait for events @integration @faults', function () {
  this.timeout(300_000);
  let scenario: Scenario;
  const client = (): ApiClient => scenario.deployment.client();
  const orders = Array.from({ length: RUNS }, (_, i) => `order-${i}`);
  const runs: string[] = [];

  const openWaits = () =>
    scenario.deployment.withDatabase(async (db) => {
      const rows = await db.query<{ n: number }>(
        'select count(*)::int as n from event_waiters where execution_id = any($1) and ended_at is null',
        [runs],
      );
      return rows[0]!.n;
    });

  const pay = async (batch: string[]) => {
    const events = batch.map((order_id) => ({
      name: 'order.paid',
      id: `paid-${order_id}`,
      data: { order_id },
    }));
    for (let i = 0; i < events.length; i += 50) {
      const res = await client()
        .post('/v1/events', events.slice(i, i + 50))
        .timeout(20_000);
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
    }
  };

  before(async () => {
    scenario = await startScenario(() => [
      {
        id: 'payment',
        kind: 'wait_for_event',
        event: 'order.paid',
        match: 'event.data.order_id = input.order_id',
        timeout: '1h',
      },
      rulesStep('ship', [{ when: 'true', output: '{{ steps.payment.output.data.order_id }}' }]),
    ]);
    for (const order_id of orders) {
      const res = await client()
        .post(`/v1/workflows/${scenario.workflowId}/trigger`, { order_id })
        .expect(202);
      runs.push(res.body.execution_id as string);
    }
    await waitFor(async () => (await openWaits()) === RUNS, {
      timeoutMs: 120_000,
      intervalMs: 500,
      what: `${RUNS} runs waiting for their payment`,
    });
  });
  after(async () => scenario?.stop());

  it('wakes every run with its own event, those paid while the worker was down included', async () => {
    await scenario.deployment.worker.kill('SIGKILL');
    await pay(orders.slice(0, RUNS / 2));
    await scenario.deployment.startWorker();
    await pay(orders.slice(RUNS / 2));

    const statuses = await waitAllFinal(client(), runs, 180_000);
    expect(
      [...statuses.values()].filter((status) => status !== 'success'),
      'runs not successful',
    ).to.deep.equal([]);
    for (const [i, id] of runs.entries()) {
      const execution = (await client().get(`/v1/executions/${id}`).expect(200)).body;
      const ship = execution.steps.find((step: { id: string }) => step.id === 'ship');
      expect(ship.output, `the order run ${id} shipped`).to.equal(orders[i]);
    }
    expect(await openWaits(), 'waits left open').to.equal(0);
    reportScenario('event-wait-restarts', { runs: RUNS, woken: runs.length });
  });
});
