/**
 * Fault: PostgreSQL is unreachable for a while under load. The API answers 503 database_unavailable
 * (the contract body) and recovers without a restart; executions and their events go on afterwards.
 */
import { expect } from 'chai';
import request from 'supertest';
import { rulesStep } from '../support/fixtures';
import { waitFor } from '../support/wait';
import { receivedEvents, reportScenario, ResponseLog, triggerUnderFault, waitAllFinal } from './harness';
import { EVENTS_PATH, startScenario, type Scenario } from './scenario';

describe('fault: PostgreSQL unavailable @integration @faults', function () {
  this.timeout(300_000);
  let scenario: Scenario;
  const log = new ResponseLog();
  let accepted: string[] = [];
  let readyDuringOutage = 0;

  before(async () => {
    scenario = await startScenario(() => [
      rulesStep('a', [{ when: 'true', output: 1 }]),
      rulesStep('b', [{ when: 'true', output: 2 }]),
    ]);
    let stop = false;
    const load = triggerUnderFault(() => scenario.deployment.client(), scenario.workflowId, {
      concurrency: 6,
      until: () => stop,
      log,
      allowed: [202, 503],
    });
    await new Promise((resolve) => setTimeout(resolve, 3000));
    await scenario.deployment.cutDatabase();
    await new Promise((resolve) => setTimeout(resolve, 3000));
    readyDuringOutage = (await request(scenario.deployment.url).get('/readyz')).status;
    await new Promise((resolve) => setTimeout(resolve, 3000));
    await scenario.deployment.restoreDatabase();
    await waitFor(async () => (await request(scenario.deployment.url).get('/readyz')).status === 200, {
      what: 'the API to be ready again',
    });
    await new Promise((resolve) => setTimeout(resolve, 3000));
    stop = true;
    accepted = await load;
  });
  after(async () => {
    if (scenario) {
      const events = receivedEvents(scenario.receiver, EVENTS_PATH);
      reportScenario('database-outage', {
        accepted: accepted.length,
        events_expected: accepted.length * 2,
        events_delivered: accepted.reduce((n, id) => n + (events.get(id)?.size ?? 0), 0),
        responses: log.summary(),
      });
    }
    await scenario?.stop();
  });

  it('answered 503 database_unavailable while the database was away, and only contract responses', () => {
    log.expectOnlyContractResponses();
    expect(log.statuses.get(503) ?? 0).to.be.greaterThan(0);
    expect(readyDuringOutage).to.equal(503);
  });

  it('accepted triggers again once the database was back, without a restart', () => {
    expect(log.statuses.get(202) ?? 0).to.be.greaterThan(10);
    expect(scenario.deployment.api.running).to.equal(true);
  });

  it('brings every accepted execution to success', async () => {
    const statuses = await waitAllFinal(scenario.deployment.client(), accepted);
    expect([...statuses.values()].every((s) => s === 'success')).to.equal(true);
  });

  it('delivered every event at least once, each under one webhook-id', async () => {
    await scenario.expectEventsDelivered(accepted);
  });
});
