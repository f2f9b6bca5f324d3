/**
 * @switchyard/client (clients/typescript) against the real service: typed calls, errors as
 * SwitchyardError, idempotent triggers, waiting for a run, cursor pages, retries of 429, verification of
 * a real webhook delivery, and a signed inbound hook.
 */
import { expect } from 'chai';
import {
  SwitchyardClient,
  SwitchyardError,
  WebhookVerificationError,
  verifyWebhook,
  type WorkflowDefinition,
} from '@switchyard/client';
import { uniqueId } from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { startTestService, type TestService } from '../support/stack';
import { waitFor } from '../support/wait';

/** One rules step: a run succeeds within a second. */
function quickWorkflow(extra: Partial<WorkflowDefinition> = {}): WorkflowDefinition {
  const definition: WorkflowDefinition = {
    id: uniqueId('client'),
    name: 'Client test',
    input_schema: { type: 'object', required: ['plan'], properties: { plan: { type: 'string' } } },
    steps: [
      { id: 'route', kind: 'rules', rules: [{ when: "input.plan = 'pro'", output: { tier: 'high' } }] },
    ],
  };
  return { ...definition, ...extra };
}

/** Runs `call` and returns the SwitchyardError it must throw. */
async function errorOf(call: () => Promise<unknown>): Promise<SwitchyardError> {
  try {
    await call();
  } catch (error) {
    expect(error).to.be.instanceOf(SwitchyardError);
    return error as SwitchyardError;
  }
  expect.fail('expected a SwitchyardError');
}

describe('TypeScript client @integration', function () {
  this.timeout(120_000);
  let service: TestService;
  let client: SwitchyardClient;

  before(async () => {
    service = await startTestService();
    // A workspace of its own, so lists hold only what these tests create.
    const { key } = await service.newWorkspace(['admin']);
    client = new SwitchyardClient({ baseUrl: service.url, apiKey: key });
  });
  after(async () => {
    await service?.stop();
  });

  it('creates a workflow, triggers it twice with one Idempotency-Key (one run), and waits for success', async () => {
    const created = await client.workflows.create(quickWorkflow());
    expect(created.version).to.equal(1);
    const first = await client.workflows.trigger(created.id, { plan: 'pro' }, { idempotencyKey: 'order-42' });
    const second = await client.workflows.trigger(
      created.id,
      { plan: 'pro' },
      { idempotencyKey: 'order-42' },
    );
    expect(first.status).to.equal('accepted');
    expect(second.execution_id).to.equal(first.execution_id);

    const execution = await client.waitForExecution(first.execution_id, {
      timeoutMs: 30_000,
      intervalMs: 100,
    });
    expect(execution.status).to.equal('success');
    expect(execution.steps.map((step) => [step.id, step.status])).to.deep.equal([
      ['trigger', 'success'],
      ['route', 'success'],
    ]);
    expect(execution.steps[1]?.output).to.deep.equal({ tier: 'high' });

    // Without a key of the caller's, every trigger is a run of its own.
    const third = await client.workflows.trigger(created.id, { plan: 'pro' });
    expect(third.execution_id).to.not.equal(first.execution_id);
    await client.executions.wait(third.execution_id, { timeoutMs: 30_000 });
  });

  it('sends events with an id of its own, once however often, and reads what they started', async () => {
    const name = `client.event.${uniqueId('n')}`;
    const workflow = await client.workflows.create(
      quickWorkflow({ trigger: { type: 'event', event: name } }),
    );
    const accepted = await client.events.send({ name, data: { plan: 'pro' } });
    const [id] = accepted.ids;
    expect(id, 'an id the client made up, so that its retries act once').to.match(/^evt_[0-9a-f]{32}$/);
    await client.events.send({ name, data: { plan: 'pro' }, id: id! });
    const event = await waitFor(async () => {
      const read = await client.events.get(id!);
      return read.started.length > 0 && read;
    });
    expect(event.started).to.have.length(1);
    const execution = await client.waitForExecution(event.started[0]!);
    expect(execution.workflow).to.equal(workflow.id);
    const batch = await client.events.send([
      { name: `${name}.other` },
      { name: `${name}.other`, id: 'mine-1' },
    ]);
    expect(batch.ids[1]).to.equal('mine-1');
    const listed = await client.events.list({ name: `${name}.other` }).toArray();
    expect(listed.map((e) => e.id)).to.deep.equal([...batch.ids].reverse());
  });

  it('iterates cursor pages: every item once, one request per page', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 4; i++) ids.add((await client.workflows.create(quickWorkflow())).id);
    const pages = [];
    for await (const page of client.workflows.list({ limit: 2 }).pages()) pages.push(page.data.length);
    const listed: string[] = [];
    for await (const workflow of client.workflows.list({ limit: 2 })) listed.push(workflow.id);
    expect(new Set(listed).size, 'no item twice').to.equal(listed.length);
    for (const id of ids) expect(listed).to.include(id);
    expect(pages.length, `pages of ${pages.join(', ')}`).to.be.greaterThan(2);

    // Executions: lists are eventually consistent, so wait until both runs of one workflow are listed.
    const workflow = await client.workflows.create(quickWorkflow());
    const runs = [
      (await client.workflows.trigger(workflow.id, { plan: 'pro' })).execution_id,
      (await client.workflows.trigger(workflow.id, { plan: 'basic' })).execution_id,
    ];
    const seen = await waitFor(
      async () => {
        const found = await client.executions.list({ workflow: workflow.id, limit: 1 }).toArray();
        return found.length === 2 ? found : undefined;
      },
      { what: 'both executions in the list' },
    );
    expect(seen.map((e) => e.execution_id).sort()).to.deep.equal([...runs].sort());
  });

  it('throws SwitchyardError with code, message, request_id, details and status', async () => {
    const notFound = await errorOf(() => client.executions.get('ex_doesnotexist'));
    expect(notFound.status).to.equal(404);
    expect(notFound.code).to.equal('execution_not_found');
    expect(notFound.requestId).to.match(/\S/);
    expect(notFound.message).to.be.a('string').and.not.equal('');

    const workflow = await client.workflows.create(quickWorkflow());
    const invalid = await errorOf(() => client.workflows.trigger(workflow.id, { plan: 42 }));
    expect([invalid.status, invalid.code]).to.deep.equal([400, 'invalid_input']);
    expect(invalid.details.map((d) => d.path)).to.include('/plan');
    expect(invalid.request_id).to.equal(invalid.requestId);
  });

  it('drives a schedule: get, pause with a note, resume, run now, backfill a past window', async () => {
    const workflow = await client.workflows.create(
      quickWorkflow({ trigger: { type: 'schedule', every: '1h', input: { plan: 'pro' } } }),
    );
    const schedule = client.workflows.schedule;
    try {
      expect(await schedule.get(workflow.id)).to.deep.include({ spec: { every: '1h' }, paused: false });
      expect(await schedule.pause(workflow.id, { note: 'maintenance' })).to.include({
        paused: true,
        note: 'maintenance',
      });
      expect((await schedule.resume(workflow.id)).paused).to.equal(false);
      const run = await schedule.run(workflow.id);
      expect((await client.executions.wait(run.execution_id)).status).to.equal('success');
      // Whole hours: a window of three hours that ended an hour ago holds three runs.
      const end = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3_600_000);
      const start = new Date(end.getTime() - 3 * 3_600_000);
      expect(await schedule.backfill(workflow.id, { start, end })).to.deep.equal({
        status: 'accepted',
        count: 3,
      });
      // Its runs end before the next test subscribes to execution events.
      await waitFor(
        async () => {
          const runs = await client.executions.list({ workflow: workflow.id }).toArray(10);
          return runs.length === 4 && runs.every((run) => run.status === 'success');
        },
        { timeoutMs: 30_000, what: 'the run and the 3 backfilled runs to succeed' },
      );
      const noSchedule = await client.workflows.create(quickWorkflow());
      expect((await errorOf(() => schedule.get(noSchedule.id))).code).to.equal('schedule_not_found');
    } finally {
      await client.workflows.delete(workflow.id);
    }
  });

  it('verifies a real webhook delivery with the endpoint secret (standardwebhooks)', async () => {
    const receiver = await Receiver.start();
    try {
      const endpoint = await client.webhooks.create({
        url: `${receiver.url}/client-hook`,
        events: ['execution.completed'],
      });
      expect(endpoint.secret).to.match(/^whsec_/);
      const workflow = await client.workflows.create(quickWorkflow());
      const { execution_id } = await client.workflows.trigger(workflow.id, { plan: 'pro' });
      const delivery = await waitFor(async () => receiver.requestsTo('/client-hook')[0], {
        timeoutMs: 60_000,
        what: 'the execution.completed delivery',
      });
      const event = verifyWebhook(delivery.body, delivery.headers, endpoint.secret);
      expect([event.event, event.execution_id, event.status]).to.deep.equal([
        'execution.completed',
        execution_id,
        'success',
      ]);
      expect(() =>
        verifyWebhook(delivery.body.replace('success', 'failed'), delivery.headers, endpoint.secret),
      ).to.throw(WebhookVerificationError);
      const deliveries = await client.webhooks.deliveries(endpoint.id).toArray();
      expect(deliveries.map((d) => d.event_id)).to.include(event.id);
    } finally {
      await receiver.stop();
    }
  });

  it('signs an inbound hook that the service accepts, once per signed request', async () => {
    const workflow = await client.workflows.create(quickWorkflow({ trigger: { type: 'webhook' } }));
    expect(workflow.hook_secret).to.match(/^whsec_/);
    const secret = workflow.hook_secret!;
    // No API key: the signature is the credential.
    const hooks = new SwitchyardClient({ baseUrl: service.url });
    const timestamp = Math.floor(Date.now() / 1000);
    const first = await hooks.hooks.trigger(workflow.id, { plan: 'pro' }, { secret, timestamp });
    const again = await hooks.hooks.trigger(workflow.id, { plan: 'pro' }, { secret, timestamp });
    expect(again.execution_id, 'the same signed request starts nothing new').to.equal(first.execution_id);
    expect((await client.waitForExecution(first.execution_id, { timeoutMs: 30_000 })).trigger.type).to.equal(
      'webhook',
    );

    const wrong = await errorOf(() =>
      hooks.hooks.trigger(workflow.id, { plan: 'pro' }, { secret: 'whsec_wrong' }),
    );
    expect([wrong.status, wrong.code]).to.deep.equal([401, 'invalid_signature']);
  });

  describe('with a tiny rate limit', () => {
    let limited: TestService;
    before(async () => {
      limited = await startTestService({
        worker: false,
        env: { RATE_LIMIT_PER_SECOND: '2', RATE_LIMIT_BURST: '2' },
      });
    });
    after(async () => {
      await limited?.stop();
    });

    it('retries 429 after Retry-After, and without retries throws rate_limited', async () => {
      const statuses: number[] = [];
      const retrying = new SwitchyardClient({
        baseUrl: limited.url,
        apiKey: limited.adminKey,
        retry: { maxRetries: 5 },
        fetch: async (request) => {
          const response = await fetch(request);
          statuses.push(response.status);
          return response;
        },
      });
      for (let i = 0; i < 5; i++) await retrying.workflows.list().toArray();
      expect(statuses, 'some requests were limited, then retried').to.include(429);
      expect(statuses.filter((s) => s === 200)).to.have.length(5);

      const once = new SwitchyardClient({
        baseUrl: limited.url,
        apiKey: limited.adminKey,
        retry: { maxRetries: 0 },
      });
      const limitedError = await waitFor(async () => {
        try {
          await once.workflows.list().toArray();
          return undefined;
        } catch (error) {
          return error as SwitchyardError;
        }
      });
      expect(limitedError).to.be.instanceOf(SwitchyardError);
      expect([limitedError.status, limitedError.code]).to.deep.equal([429, 'rate_limited']);
      expect(limitedError.retryAfterSeconds).to.be.a('number').and.greaterThan(0);
    });
  });
});
