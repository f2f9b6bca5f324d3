/** Fault: the Temporal server is killed (SIGKILL) under load, then restarted on the same database file. */
import { expect } from 'chai';
import { httpStep, rulesStep } from '../support/fixtures';
import { receivedEvents, reportScenario, ResponseLog, triggerUnderFault, waitAllFinal } from './harness';
import { EVENTS_PATH, startScenario, type Scenario } from './scenario';

describe('fault: Temporal killed under load @integration @faults', function () {
  this.timeout(300_000);
  let scenario: Scenario;
  const log = new ResponseLog();
  let accepted: string[] = [];

  before(async () => {
    scenario = await startScenario((url) => [
      rulesStep('prepare', [{ when: 'true', output: 1 }]),
      httpStep('call', { url: `${url}/work` }),
      rulesStep('finish', [{ when: 'true', output: 2 }]),
    ]);
    scenario.receiver.replyAlways({ status: 200, body: { ok: true } });
    let stop = false;
    const load = triggerUnderFault(() => scenario.deployment.client(), scenario.workflowId, {
      concurrency: 6,
      until: () => stop,
      log,
      // While Temporal is down a trigger answers 503 temporal_unavailable (it did nothing).
      allowed: [202, 503],
    });
    await new Promise((resolve) => setTimeout(resolve, 4000));
    await scenario.deployment.killTemporal();
    // Longer than the API's Temporal deadline (5 s): shorter outages are absorbed by the client's retries.
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    await scenario.deployment.startTemporal();
    await new Promise((resolve) => setTimeout(resolve, 4000));
    stop = true;
    accepted = await load;
  });
  after(async () => {
    if (scenario) {
      const events = receivedEvents(scenario.receiver, EVENTS_PATH);
      const delivered = accepted.reduce((n, id) => n + (events.get(id)?.size ?? 0), 0);
      reportScenario('temporal-kill', {
        accepted: accepted.length,
        events_expected: accepted.length * 2,
        events_delivered: delivered,
        responses: log.summary(),
        no_answer: log.networkErrors,
      });
    }
    await scenario?.stop();
  });

  it('answered only contract responses: 202, 503 temporal_unavailable, or 429 while behind', () => {
    log.expectOnlyContractResponses();
    expect(log.statuses.get(202) ?? 0).to.be.greaterThan(10);
    expect(log.statuses.get(503) ?? 0, 'Temporal was down for a while').to.be.greaterThan(0);
  });

  it('brings every accepted execution to success', async () => {
    const statuses = await waitAllFinal(scenario.deployment.client(), accepted, 180_000);
    const notSuccess = [...statuses].filter(([, status]) => status !== 'success');
    expect(notSuccess).to.deep.equal([]);
  });

  it('delivered every event at least once, each under one webhook-id', async () => {
    await scenario.expectEventsDelivered(accepted, 180_000);
  });
});
