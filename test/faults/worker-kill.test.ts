/** Fault: the worker is killed (SIGKILL) in the middle of connector steps, then started again. */
import { expect } from 'chai';
import { httpStep, rulesStep } from '../support/fixtures';
import { waitFor } from '../support/wait';
import { receivedEvents, reportScenario, ResponseLog, triggerUnderFault, waitAllFinal } from './harness';
import { EVENTS_PATH, startScenario, type Scenario } from './scenario';

describe('fault: worker killed mid-step @integration @faults', function () {
  this.timeout(240_000);
  let scenario: Scenario;
  const log = new ResponseLog();
  let accepted: string[] = [];

  before(async () => {
    scenario = await startScenario((url) => [
      rulesStep('prepare', [{ when: 'true', output: 1 }]),
      httpStep('call', { url: `${url}/slow` }, { retry: { max_attempts: 5, initial_interval: '500ms' } }),
      rulesStep('finish', [{ when: 'true', output: 2 }]),
    ]);
    // Every connector request is held 3 s: the kill lands while they are in flight.
    scenario.receiver.replyAlways((request) =>
      request.path === '/slow' ? { status: 200, body: { ok: true }, delayMs: 3000 } : { status: 204 },
    );
    accepted = await triggerUnderFault(() => scenario.deployment.client(), scenario.workflowId, {
      concurrency: 4,
      count: 20,
      log,
      allowed: [202],
    });
    await waitFor(async () => scenario.receiver.requestsTo('/slow').length >= 8, {
      what: 'connector steps in flight',
    });
    await scenario.deployment.worker.kill('SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 2000));
    await scenario.deployment.startWorker();
  });
  after(async () => {
    if (scenario) {
      const events = receivedEvents(scenario.receiver, EVENTS_PATH);
      const delivered = accepted.reduce((n, id) => n + (events.get(id)?.size ?? 0), 0);
      reportScenario('worker-kill', {
        accepted: accepted.length,
        events_expected: accepted.length * 2,
        events_delivered: delivered,
        responses: log.summary(),
        no_answer: log.networkErrors,
      });
    }
    await scenario?.stop();
  });

  it('accepted every trigger with 202', () => {
    expect(accepted).to.have.length(20);
    log.expectOnlyContractResponses();
  });

  it('brings every accepted execution to success', async () => {
    const statuses = await waitAllFinal(scenario.deployment.client(), accepted);
    expect(
      [...statuses.values()].every((s) => s === 'success'),
      JSON.stringify([...statuses]),
    ).to.equal(true);
  });

  it('ran again the steps the kill interrupted', async () => {
    const reruns = scenario.receiver.requestsTo('/slow').length - accepted.length;
    expect(reruns).to.be.greaterThan(0);
  });

  it('delivered every event at least once, each under one webhook-id', async () => {
    await scenario.expectEventsDelivered(accepted);
  });
});
