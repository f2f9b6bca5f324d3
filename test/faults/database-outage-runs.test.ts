/**
 * Fault: PostgreSQL goes away while executions are in the middle of their steps. Steps that do not need
 * the database finish and the executions complete during the outage; their events are not lost: Temporal
 * holds them (the delivery workflow records its deliveries once the database is back) and each arrives
 * once after recovery.
 */
import { Client, Connection } from '@temporalio/client';
import { expect } from 'chai';
import { httpStep, rulesStep } from '../support/fixtures';
import { waitFor } from '../support/wait';
import { receivedEvents, reportScenario } from './harness';
import { EVENTS_PATH, startScenario, type Scenario } from './scenario';

const RUNS = 8;
const SLOW_PATH = '/slow-step';

describe('fault: PostgreSQL away while executions run @integration @faults', function () {
  this.timeout(300_000);
  let scenario: Scenario;
  let temporal: Client;
  let connection: Connection;
  const ids: string[] = [];
  let completedDuringOutage = 0;
  let deliveredDuringOutage = 0;

  before(async () => {
    scenario = await startScenario((receiverUrl) => [
      httpStep('call', { method: 'POST', url: `${receiverUrl}${SLOW_PATH}`, body: {} }),
      rulesStep('after', [{ when: 'true', output: '{{ steps.call.output.status }}' }]),
    ]);
    connection = await Connection.connect({ address: scenario.deployment.temporalAddress });
    temporal = new Client({ connection });
    // Every run's connector step waits for this gate, so all of them are mid-step when the database goes.
    let openGate: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    scenario.receiver.replyOnceTo(SLOW_PATH, ...Array.from({ length: RUNS }, () => ({ until: gate })));

    const client = scenario.deployment.client();
    for (let i = 0; i < RUNS; i++) {
      const res = await client.post(`/v1/workflows/${scenario.workflowId}/trigger`, {}).expect(202);
      ids.push(res.body.execution_id as string);
    }
    await waitFor(async () => scenario.receiver.requestsTo(SLOW_PATH).length === RUNS, {
      what: `${RUNS} runs in their connector step`,
    });

    await scenario.deployment.cutDatabase();
    openGate();
    await waitFor(
      async () => {
        const statuses = await Promise.all(
          ids.map(async (id) => (await temporal.workflow.getHandle(id).describe()).status.name),
        );
        completedDuringOutage = statuses.filter((s) => s === 'COMPLETED').length;
        return completedDuringOutage === RUNS;
      },
      { timeoutMs: 60_000, intervalMs: 500, what: 'every run to complete while the database is away' },
    ).catch(() => undefined);
    const events = receivedEvents(scenario.receiver, EVENTS_PATH);
    deliveredDuringOutage = ids.filter((id) => events.get(id)?.has('execution.completed')).length;
    await scenario.deployment.restoreDatabase();
  });

  after(async () => {
    reportScenario('database-outage-runs', {
      runs: RUNS,
      completed_during_outage: completedDuringOutage,
      completed_events_delivered_during_outage: deliveredDuringOutage,
    });
    await connection?.close();
    await scenario?.stop();
  });

  it('completes executions whose steps do not need the database while it is away', () => {
    expect(completedDuringOutage, 'runs completed during the outage').to.equal(RUNS);
  });

  it('keeps their events until the database is back (none delivered without their delivery record)', () => {
    expect(deliveredDuringOutage).to.equal(0);
  });

  it('delivers every event once after recovery: none lost, none twice', async () => {
    await scenario.expectEventsDelivered(ids);
  });
});
