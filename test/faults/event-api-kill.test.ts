/**
 * Fault: the API process is killed (SIGKILL) right after it answered 202 to events whose trigger starts a
 * run, then started again: every accepted event still starts its run, once (docs/events.md#how-events-are-acted-on).
 * First with Temporal down while the events arrive, so that none can have started a run before the kill
 * (the rows are checked to be undispatched); then with everything up, killing as soon as the 202 arrives.
 * Last, events that wake waiting runs (wait_for_event), accepted while Temporal is down, so that the
 * dispatcher may claim a wait and fail to signal its run before the kill: every run is woken by its event.
 */
import { expect } from 'chai';
import { rulesStep, uniqueId } from '../support/fixtures';
import type { ApiClient } from '../support/stack';
import { sleep, waitFor } from '../support/wait';
import { reportScenario, waitAllFinal } from './harness';
import { startScenario, type Scenario } from './scenario';

const EVENT = 'user.signup';

describe('fault: API killed right after accepting events @integration @faults', function () {
  this.timeout(300_000);
  let scenario: Scenario;
  let workflowId: string;
  const client = (): ApiClient => scenario.deployment.client();

  /** The runs the events started, once each has one. */
  async function startedRuns(ids: string[]): Promise<string[]> {
    const runs = new Map<string, string[]>();
    await waitFor(
      async () => {
        for (const id of ids) {
          if (runs.get(id)?.length) continue;
          const res = await client().get(`/v1/events/${id}`).timeout(10_000);
          if (res.status === 200) runs.set(id, res.body.started as string[]);
        }
        return ids.every((id) => (runs.get(id)?.length ?? 0) > 0);
      },
      { timeoutMs: 120_000, intervalMs: 500, what: `a run for each of ${ids.length} events` },
    );
    for (const id of ids) expect(runs.get(id), `the runs of event ${id}`).to.have.length(1);
    return ids.map((id) => runs.get(id)![0]!);
  }

  /** Every execution of the workflow, once the list shows `expected` and has settled a while. */
  async function executionsOfWorkflow(expected: number): Promise<string[]> {
    const list = async () =>
      (
        (await client().get(`/v1/executions?workflow=${workflowId}&limit=100`).expect(200)).body.data as {
          execution_id: string;
        }[]
      ).map((e) => e.execution_id);
    await waitFor(async () => (await list()).length >= expected, {
      timeoutMs: 60_000,
      what: `${expected} executions listed`,
    });
    await sleep(3000);
    return list();
  }

  const undispatched = (ids: string[]) =>
    scenario.deployment.withDatabase(async (db) =>
      (
        await db.query<{ id: string }>(
          'select id from events where id = any($1) and dispatched_at is null order by id',
          [ids],
        )
      ).map((row) => row.id),
    );

  before(async () => {
    scenario = await startScenario(() => [rulesStep('noop', [{ when: 'true', output: 1 }])]);
    workflowId = uniqueId('on-signup');
    await client()
      .post('/v1/workflows', {
        id: workflowId,
        trigger: { type: 'event', event: EVENT },
        steps: [rulesStep('welcome', [{ when: 'true', output: '{{ input.user }}' }])],
      })
      .expect(201);
  });
  after(async () => {
    await scenario?.stop();
  });

  const outageIds = Array.from({ length: 5 }, (_, i) => `outage-${i}`);
  const plainId = 'plain-kill';

  it('keeps events accepted while Temporal was down through an API kill, and starts their runs after', async () => {
    await scenario.deployment.killTemporal();
    const res = await client()
      .post(
        '/v1/events',
        outageIds.map((id) => ({ name: EVENT, id, data: { user: id } })),
      )
      .timeout(20_000);
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    expect(res.body.ids).to.deep.equal(outageIds);
    // Stored, and no run could start: what the API holds when it dies.
    expect(await undispatched(outageIds)).to.deep.equal([...outageIds].sort());
    await scenario.deployment.api.kill('SIGKILL');
    await scenario.deployment.startTemporal();
    await scenario.deployment.startApi();

    const runs = await startedRuns(outageIds);
    const statuses = await waitAllFinal(client(), runs, 120_000);
    expect([...statuses.values()]).to.deep.equal(outageIds.map(() => 'success'));
    expect(await undispatched(outageIds)).to.deep.equal([]);
  });

  it('starts the run of an event whose 202 the API died right after, once', async () => {
    const res = await client().post('/v1/events', { name: EVENT, id: plainId, data: { user: plainId } });
    await scenario.deployment.api.kill('SIGKILL');
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    await scenario.deployment.startApi();
    const [run] = await startedRuns([plainId]);
    await waitAllFinal(client(), [run!], 120_000);
  });

  it('wakes the runs waiting for events accepted while Temporal was down, through an API kill', async () => {
    const waitFlow = uniqueId('awaits-payment');
    await client()
      .post('/v1/workflows', {
        id: waitFlow,
        steps: [
          {
            id: 'payment',
            kind: 'wait_for_event',
            event: 'order.paid',
            match: 'event.data.order_id = input.order_id',
            timeout: '1h',
          },
        ],
      })
      .expect(201);
    const orders = ['o-1', 'o-2', 'o-3'];
    const runs: string[] = [];
    for (const order_id of orders) {
      const res = await client().post(`/v1/workflows/${waitFlow}/trigger`, { order_id }).expect(202);
      runs.push(res.body.execution_id as string);
    }
    await waitFor(
      async () => {
        for (const id of runs) {
          const res = await client().get(`/v1/executions/${id}`).timeout(10_000);
          if (res.body.status !== 'waiting') return false;
        }
        return true;
      },
      { timeoutMs: 60_000, what: 'every run waiting for its payment' },
    );
    await scenario.deployment.killTemporal();
    const events = orders.map((order_id) => ({
      name: 'order.paid',
      id: `paid-${order_id}`,
      data: { order_id },
    }));
    const res = await client().post('/v1/events', events).timeout(20_000);
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    // The dispatcher's first try claims the waits, then cannot signal their runs with Temporal away.
    await waitFor(
      () =>
        scenario.deployment.withDatabase(async (db) => {
          const rows = await db.query<{ n: number }>(
            'select count(*)::int as n from event_waiters where execution_id = any($1) and woken_by is not null',
            [runs],
          );
          return rows[0]!.n > 0;
        }),
      { timeoutMs: 30_000, what: 'a wait claimed while Temporal is down' },
    );
    await scenario.deployment.api.kill('SIGKILL');
    await scenario.deployment.startTemporal();
    await scenario.deployment.startApi();

    const statuses = await waitAllFinal(client(), runs, 120_000);
    expect([...statuses.values()]).to.deep.equal(runs.map(() => 'success'));
    for (const [i, id] of runs.entries()) {
      const execution = (await client().get(`/v1/executions/${id}`).expect(200)).body;
      const payment = execution.steps.find((step: { id: string }) => step.id === 'payment');
      expect(payment.output.id, `the event that woke ${id}`).to.equal(`paid-${orders[i]}`);
      const event = (await client().get(`/v1/events/paid-${orders[i]}`).expect(200)).body;
      expect(event.woke, `the runs event paid-${orders[i]} woke`).to.deep.equal([id]);
    }
  });

  it('started exactly one execution per event', async () => {
    const expected = outageIds.length + 1;
    const executions = await executionsOfWorkflow(expected);
    expect(executions, JSON.stringify(executions)).to.have.length(expected);
    reportScenario('event-api-kill', { events: expected, executions: executions.length });
  });
});
