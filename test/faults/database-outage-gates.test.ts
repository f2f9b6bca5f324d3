/**
 * Fault: PostgreSQL goes away while runs of a workflow with `concurrency` are in their step. Their gates
 * were passed in their batch of steps (workers/workflows/admission.ts), which also gives the places back
 * when it ends the run; with the database away it cannot, and must not fail for it (a retry of the batch
 * would call the receiver again): the run gives them back itself once the database is back. Every run
 * completes, each call is made once, and no place is left behind.
 */
import { expect } from 'chai';
import { definition, httpStep } from '../support/fixtures';
import { waitFor } from '../support/wait';
import { reportScenario } from './harness';
import { startScenario, type Scenario } from './scenario';

const RUNS = 3;
const SLOW_PATH = '/gated-step';
/** Longer than the batch waits for the database to give the places back (DATABASE_WAIT_MS, 2 s). */
const OUTAGE_MS = 6_000;

describe('fault: PostgreSQL away when runs under a concurrency key end @integration @faults', function () {
  this.timeout(300_000);
  let scenario: Scenario;
  let workflowId: string;
  const ids: string[] = [];
  const statuses = new Map<string, string>();

  before(async () => {
    // Nobody subscribes to execution.started: each run's first act is its batch, which passes its gates.
    scenario = await startScenario(
      (receiverUrl) => [httpStep('noop', { method: 'POST', url: `${receiverUrl}/noop`, body: {} })],
      { events: ['execution.completed'] },
    );
    const client = scenario.deployment.client();
    const base = definition([
      httpStep('call', { method: 'POST', url: `${scenario.receiver.url}${SLOW_PATH}`, body: {} }),
    ]);
    await client.post('/v1/workflows', { ...base, concurrency: { limit: RUNS } }).expect(201);
    workflowId = base['id'] as string;
    let openGate: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    scenario.receiver.replyOnceTo(SLOW_PATH, ...Array.from({ length: RUNS }, () => ({ until: gate })));
    for (let i = 0; i < RUNS; i++) {
      const res = await client.post(`/v1/workflows/${workflowId}/trigger`, {}).expect(202);
      ids.push(res.body.execution_id as string);
    }
    await waitFor(async () => scenario.receiver.requestsTo(SLOW_PATH).length === RUNS, {
      what: `${RUNS} runs in their connector step`,
    });

    await scenario.deployment.cutDatabase();
    openGate();
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
    await scenario.deployment.restoreDatabase();
    for (const id of ids) {
      await waitFor(
        async () => {
          const res = await client.get(`/v1/executions/${id}`);
          const status = (res.body as { status?: string }).status;
          if (res.status === 200 && status && !['running', 'queued', 'waiting'].includes(status))
            statuses.set(id, status);
          return statuses.has(id);
        },
        { timeoutMs: 120_000, intervalMs: 500, what: `run ${id} to end` },
      );
    }
  });

  after(async () => {
    reportScenario('database-outage-gates', {
      runs: RUNS,
      calls: scenario?.receiver.requestsTo(SLOW_PATH).length,
    });
    await scenario?.stop();
  });

  it('completes every run', () => {
    expect([...statuses.values()]).to.deep.equal(Array<string>(RUNS).fill('success'));
  });

  it('calls the receiver once per run: the batch was not run again', () => {
    expect(scenario.receiver.requestsTo(SLOW_PATH)).to.have.length(RUNS);
  });

  it('leaves no place behind: the runs gave them back once the database was back', async () => {
    const rows = await scenario.deployment.withDatabase((db) =>
      db.query('select execution_id from admissions where execution_id = any($1)', [ids]),
    );
    expect(rows).to.deep.equal([]);
  });
});
