/**
 * Redeliveries are bounded (src/webhooks/redeliver.ts, docs/webhooks.md#redelivery).
 * One series of attempts per delivery at a time (a second request while one runs is 409
 * `delivery_in_progress`, not a second workflow sending the same event in parallel), a rate per workspace
 * (10 at once, then 429), and a delivery left `pending` with nothing sending it can be sent again.
 */
import { expect } from 'chai';
import { deliveryWorkflowId } from '../../core/event-types';
import { createWorkflow, definition, expectError, rulesStep, trigger } from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { startTestService, type TestService } from '../support/stack';
import { waitFor } from '../support/wait';

interface Delivery {
  id: string;
  event_id: string;
  status: string;
  attempts: unknown[];
}

describe('security (medium): redeliveries are bounded @integration', function () {
  this.timeout(120_000);
  let service: TestService;
  let receiver: Receiver;
  before(async function () {
    this.timeout(120_000);
    // A failed attempt is retried after 60 s: a failing delivery stays in progress for the whole test.
    service = await startTestService({ env: { WEBHOOK_RETRY_SCHEDULE: '60' } });
    receiver = await Receiver.start();
  });
  after(async () => {
    await receiver?.stop();
    await service?.stop();
  });

  /** A workspace with one endpoint at `path`, and `runs` completed runs: one delivery each. */
  async function deliveriesAt(path: string, runs: number, status: string) {
    const workspace = await service.newWorkspace(['admin']);
    const api = service.api(workspace.key);
    const endpoint = (
      await api
        .post('/v1/webhooks', { url: `${receiver.url}${path}`, events: ['execution.completed'] })
        .expect(201)
    ).body as { id: string };
    const workflowId = await createWorkflow(api, definition([rulesStep('a', [{ when: 'true', output: 1 }])]));
    for (let i = 0; i < runs; i++) await trigger(api, workflowId);
    const deliveries = await waitFor(
      async () => {
        const list = (await api.get(`/v1/webhooks/${endpoint.id}/deliveries?limit=100`).expect(200)).body
          .data as Delivery[];
        return list.length === runs && list.every((d) => d.status === status && d.attempts.length > 0)
          ? list
          : undefined;
      },
      { what: `${runs} deliveries ${status}`, timeoutMs: 60_000 },
    );
    const redeliver = (delivery: Delivery) =>
      api.post(`/v1/webhooks/${endpoint.id}/deliveries/${delivery.id}/retry`);
    return { api, endpoint, deliveries, redeliver };
  }

  it('refuses a second redelivery while the first is still being attempted, with 409 delivery_in_progress', async () => {
    const { deliveries, redeliver } = await deliveriesAt('/ok-then-busy', 1, 'succeeded');
    // From now on the receiver fails: the redelivery's series keeps retrying (next attempt in 60 s).
    receiver.replyOnceTo('/ok-then-busy', ...Array.from({ length: 5 }, () => ({ status: 500 })));
    const [delivery] = deliveries;
    const [first, second] = await Promise.all([redeliver(delivery!), redeliver(delivery!)]);
    expect([first.status, second.status].sort(), JSON.stringify([first.body, second.body])).to.deep.equal([
      202, 409,
    ]);
    expectError(first.status === 409 ? first : second, 409, 'delivery_in_progress');
    await waitFor(async () => receiver.requestsTo('/ok-then-busy').length >= 2, {
      what: 'the redelivery attempt',
    });
    // Its series still runs (retrying in 60 s): a third request is refused too.
    expectError(await redeliver(delivery!), 409, 'delivery_in_progress');
  });

  it("refuses a workspace's redeliveries past 10 at once with 429 rate_limited", async () => {
    const { deliveries, redeliver } = await deliveriesAt('/many', 11, 'succeeded');
    const answers = [];
    for (const delivery of deliveries) answers.push(await redeliver(delivery));
    expect(answers.slice(0, 10).map((res) => res.status)).to.deep.equal(Array(10).fill(202));
    expectError(answers[10]!, 429, 'rate_limited');
    expect(answers[10]!.headers['retry-after']).to.match(/^\d+$/);
  });

  it('sends again a delivery left pending with nothing sending it', async () => {
    const { api, endpoint, deliveries, redeliver } = await deliveriesAt('/stuck', 1, 'succeeded');
    const [delivery] = deliveries;
    // Nothing sends it any more: its series has ended (the row says succeeded a moment before the workflow closes).
    const { client } = service.runtime.services.temporal;
    await waitFor(
      async () =>
        (await client.workflow.getHandle(deliveryWorkflowId(delivery!.event_id)).describe()).status.name !==
        'RUNNING',
      { what: "the delivery's first series closed" },
    );
    // As an earlier version left a row whose redelivery never started.
    await service.runtime.services.db.query(
      "update webhook_deliveries set status = 'pending' where id = $1",
      [delivery!.id],
    );
    expect((await redeliver(delivery!)).status).to.equal(202);
    await waitFor(
      async () => {
        const [latest] = (await api.get(`/v1/webhooks/${endpoint.id}/deliveries`).expect(200)).body
          .data as Delivery[];
        return latest?.status === 'succeeded' && latest.attempts.length === 2;
      },
      { what: 'the stuck delivery sent again and succeeded' },
    );
  });
});
