/**
 * Fault: the webhook receiver flaps (errors, dropped connections, then fine, again and again). Every
 * event still arrives, under one webhook-id, and the delivery log keeps every attempt.
 */
import { expect } from 'chai';
import { rulesStep } from '../support/fixtures';
import { receivedEvents, reportScenario, ResponseLog, triggerUnderFault, waitAllFinal } from './harness';
import { EVENTS_PATH, startScenario, type Scenario } from './scenario';

describe('fault: webhook receiver flaps @integration @faults', function () {
  this.timeout(300_000);
  let scenario: Scenario;
  const log = new ResponseLog();
  let accepted: string[] = [];
  let started = 0;

  before(async () => {
    scenario = await startScenario(() => [rulesStep('a', [{ when: 'true', output: 1 }])], {
      env: { WEBHOOK_RETRY_SCHEDULE: '1,1,2,2,3,3,5,5' },
    });
    // Down (503, then 500) for 4 s out of every 6 s, for the first 30 s of the scenario.
    started = Date.now();
    scenario.receiver.replyAlways(() => {
      const phase = (Date.now() - started) % 6000;
      if (Date.now() - started < 30_000 && phase < 4000)
        return phase < 2000 ? { status: 503 } : { status: 500, body: 'flapping' };
      return { status: 204 };
    });
    accepted = await triggerUnderFault(() => scenario.deployment.client(), scenario.workflowId, {
      concurrency: 2,
      count: 40,
      log,
      allowed: [202],
    });
  });
  after(async () => {
    if (scenario) {
      const events = receivedEvents(scenario.receiver, EVENTS_PATH);
      reportScenario('receiver-flaps', {
        accepted: accepted.length,
        events_expected: accepted.length * 2,
        events_delivered: accepted.reduce((n, id) => n + (events.get(id)?.size ?? 0), 0),
        receiver_requests: scenario.receiver.requestsTo(EVENTS_PATH).length,
        responses: log.summary(),
      });
    }
    await scenario?.stop();
  });

  it('accepted every trigger and finished every execution', async () => {
    expect(accepted).to.have.length(40);
    log.expectOnlyContractResponses();
    const statuses = await waitAllFinal(scenario.deployment.client(), accepted);
    expect([...statuses.values()].every((s) => s === 'success')).to.equal(true);
  });

  it('delivered every event at least once, each under one webhook-id', async () => {
    await scenario.expectEventsDelivered(accepted, 150_000);
  });

  it('kept every attempt in the delivery log, each delivery succeeded', async () => {
    const client = scenario.deployment.client();
    const [endpoint] = (await client.get('/v1/webhooks').expect(200)).body.data as { id: string }[];
    let attempts = 0;
    let cursor: string | null = null;
    do {
      const res = await client
        .get(`/v1/webhooks/${endpoint!.id}/deliveries?limit=100${cursor ? `&cursor=${cursor}` : ''}`)
        .expect(200);
      for (const delivery of res.body.data as { status: string; attempts: unknown[] }[]) {
        expect(delivery.status).to.equal('succeeded');
        attempts += delivery.attempts.length;
      }
      cursor = res.body.next_cursor as string | null;
    } while (cursor);
    expect(attempts).to.equal(scenario.receiver.requestsTo(EVENTS_PATH).length);
    expect(attempts).to.be.greaterThan(accepted.length * 2);
  });
});
