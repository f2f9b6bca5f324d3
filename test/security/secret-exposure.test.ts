/**
 * OWASP API3 and docs/api.md#secrets: the signing secrets the service hands out once (the `whsec_` of a
 * webhook endpoint, the `whsec_` hook secret of a webhook-trigger workflow) are never seen again: not in
 * later reads or lists, not in the logs, not in Temporal history (delivery workflows carry delivery ids,
 * the activity reads the secret from the database), not in what receivers get besides the signature.
 * Workspace secrets used by a connector whose destination echoes them in an error are masked too.
 */
import { expect } from 'chai';
import request from 'supertest';
import { signatureHeader } from '../../src/inbound-hooks/signature';
import {
  createWorkflow,
  definition,
  FAST_RETRY,
  httpStep,
  rulesStep,
  trigger,
  waitForExecution,
} from '../support/fixtures';
import { Receiver } from '../support/receiver';
import type { ApiClient, TestService } from '../support/stack';
import { waitFor } from '../support/wait';
import { API, deliveryWorkflowIds, historyText, send, sharedService, suiteLogs as logs } from './support';

/** The secret and its base64 body (the HMAC key): neither may appear. */
const formsOf = (secret: string): string[] => [secret, secret.replace(/^whsec_/, '')];

interface Delivery {
  id: string;
  event_id: string;
  status: string;
  attempts: { error: string | null }[];
}

describe('security: signing secrets are shown once @integration', function () {
  let service: TestService;
  let receiver: Receiver;
  let api: ApiClient;
  let key: string;

  before(async function () {
    this.timeout(120_000);
    service = await sharedService();
    receiver = await Receiver.start();
    key = (await service.newWorkspace(['admin'])).key;
    api = service.api(key);
  });
  after(async () => receiver?.stop());

  /** Every GET of the workspace (lists and reads of the given ids) as one text. */
  async function everythingReadable(ids: { webhook?: string; workflow?: string; executions?: string[] }) {
    const texts: string[] = [];
    for (const op of API.operations.filter(
      (o) => o.method === 'get' && o.scope !== 'none' && !o.pathParams.length,
    )) {
      const res = await send(service.url, op, { key, query: 'limit=100' });
      expect(res.status, op.label).to.equal(200);
      texts.push(res.text);
    }
    if (ids.webhook) {
      texts.push((await api.get(`/v1/webhooks/${ids.webhook}`).expect(200)).text);
      texts.push((await api.get(`/v1/webhooks/${ids.webhook}/deliveries?limit=100`).expect(200)).text);
    }
    if (ids.workflow) texts.push((await api.get(`/v1/workflows/${ids.workflow}`).expect(200)).text);
    for (const id of ids.executions ?? [])
      texts.push((await api.get(`/v1/executions/${id}`).expect(200)).text);
    return texts.join('\n');
  }

  describe("a webhook endpoint's secret", () => {
    let secret: string;
    let webhookId: string;
    const executions: string[] = [];
    let deliveries: Delivery[];

    before(async function () {
      this.timeout(60_000);
      // The first attempt fails, so a delivery retries; then one is sent again on request.
      const res = await api
        .post('/v1/webhooks', {
          url: `${receiver.url}/secret-ep`,
          events: [
            'execution.started',
            'execution.waiting',
            'execution.completed',
            'execution.failed',
            'execution.canceled',
          ],
        })
        .expect(201);
      ({ secret, id: webhookId } = res.body as { secret: string; id: string });
      receiver.replyOnceTo('/secret-ep', { status: 500 });
      const ok = await createWorkflow(api, definition([rulesStep('a', [{ when: 'true', output: 1 }])]));
      const failing = await createWorkflow(
        api,
        definition([rulesStep('gate', [{ when: 'true', action: 'fail', message: 'no' }])]),
      );
      executions.push(await trigger(api, ok), await trigger(api, failing));
      for (const id of executions) await waitForExecution(api, id);
      deliveries = await waitFor(
        async () => {
          const list = (await api.get(`/v1/webhooks/${webhookId}/deliveries?limit=100`).expect(200)).body
            .data as Delivery[];
          return list.length === 4 && list.every((d) => d.status === 'succeeded') ? list : undefined;
        },
        { what: 'four succeeded deliveries', timeoutMs: 30_000 },
      );
      await api.post(`/v1/webhooks/${webhookId}/deliveries/${deliveries[0]!.id}/retry`).expect(202);
      await waitFor(
        async () => {
          const list = (await api.get(`/v1/webhooks/${webhookId}/deliveries?limit=100`).expect(200)).body
            .data as Delivery[];
          return list.find((d) => d.id === deliveries[0]!.id)!.attempts.length >= 2 || undefined;
        },
        { what: 'the redelivery' },
      );
    });

    it('is a whsec_ secret, shown at creation', () => {
      expect(secret).to.match(/^whsec_[A-Za-z0-9+/=]{32,}$/);
    });

    it('is in no later read or list, delivery log included', async () => {
      const text = await everythingReadable({ webhook: webhookId, executions });
      for (const form of formsOf(secret)) expect(text).not.to.include(form);
      expect(deliveries.flatMap((d) => d.attempts).length).to.be.greaterThan(4);
    });

    it('is not in the history of any delivery workflow, redeliveries included', async () => {
      const ids = await waitFor(
        async () => {
          const found = await deliveryWorkflowIds(service);
          return found.length >= 5 ? found : undefined;
        },
        { what: 'five delivery workflows in visibility' },
      );
      for (const id of ids) {
        const text = await historyText(service, id);
        expect(text, id).to.include('delivery');
        for (const form of formsOf(secret)) expect(text, id).not.to.include(form);
      }
    });

    it("is not in the executions' history", async () => {
      for (const id of executions) {
        for (const form of formsOf(secret)) expect(await historyText(service, id)).not.to.include(form);
      }
    });

    it('reaches receivers only as a signature', () => {
      const requests = receiver.requests.filter((r) => r.path === '/secret-ep');
      expect(requests.length).to.be.greaterThan(4);
      for (const r of requests) {
        expect(r.headers['webhook-signature']).to.match(/^v1,/);
        for (const form of formsOf(secret)) expect(JSON.stringify([r.headers, r.body])).not.to.include(form);
      }
    });

    it('is not in the logs', () => {
      expect(logs.text().length).to.be.greaterThan(0);
      for (const form of formsOf(secret)) expect(logs.text()).not.to.include(form);
    });
  });

  describe("a workflow's hook secret", () => {
    let workflowId: string;
    let first: string;
    let rotated: string;
    let execution: string;

    before(async function () {
      this.timeout(60_000);
      const res = await api
        .post(
          '/v1/workflows',
          definition([rulesStep('a', [{ when: 'true', output: '{{ input }}' }])], {
            trigger: { type: 'webhook' },
          }),
        )
        .expect(201);
      workflowId = res.body.id as string;
      first = res.body.hook_secret as string;
      const saved = await api
        .put(`/v1/workflows/${workflowId}`, {
          name: 'v2',
          trigger: { type: 'webhook' },
          steps: [rulesStep('a', [{ when: 'true', output: 2 }])],
        })
        .expect(200);
      expect(saved.body).not.to.have.property('hook_secret');
      rotated = (await api.post(`/v1/workflows/${workflowId}/hook-secret`).expect(200)).body
        .hook_secret as string;
      const body = JSON.stringify({ note: 'signed' });
      const hook = await request(service.url)
        .post(`/v1/hooks/${workflowId}`)
        .set('Content-Type', 'application/json')
        .set('X-Service-Signature', signatureHeader(rotated, body, Math.floor(Date.now() / 1000)))
        .send(body)
        .expect(202);
      execution = hook.body.execution_id as string;
      await waitForExecution(api, execution);
    });

    it('is shown at creation and at rotation only, and rotation replaces it', async () => {
      expect(first).to.match(/^whsec_/);
      expect(rotated)
        .to.match(/^whsec_/)
        .and.not.equal(first);
      const body = '{}';
      const res = await request(service.url)
        .post(`/v1/hooks/${workflowId}`)
        .set('Content-Type', 'application/json')
        .set('X-Service-Signature', signatureHeader(first, body, Math.floor(Date.now() / 1000)))
        .send(body);
      expect(res.status).to.equal(401);
    });

    it('is in no later read or list', async () => {
      const text = await everythingReadable({ workflow: workflowId, executions: [execution] });
      for (const secret of [first, rotated])
        for (const form of formsOf(secret)) expect(text).not.to.include(form);
    });

    it('is not in the history of the execution the hook started', async () => {
      const text = await historyText(service, execution);
      for (const secret of [first, rotated])
        for (const form of formsOf(secret)) expect(text).not.to.include(form);
    });

    it('is not in the logs', () => {
      for (const secret of [first, rotated])
        for (const form of formsOf(secret)) expect(logs.text()).not.to.include(form);
    });
  });

  describe('a workspace secret echoed by a failing destination', () => {
    const value = 'echo-me-secret-9d2f7b1c';
    let execution: string;

    before(async function () {
      this.timeout(60_000);
      await api.put('/v1/secrets/ECHOED', { value }).expect(204);
      // The destination puts what it received into its error answer, as careless APIs do.
      receiver.replyOnceTo('/echo-error?token=' + value, (req) => ({
        status: 400,
        body: { error: `bad token in ${req.path}`, auth: req.headers['authorization'] },
      }));
      const workflowId = await createWorkflow(
        api,
        definition([
          httpStep(
            'call',
            {
              method: 'POST',
              url: `${receiver.url}/echo-error`,
              query: { token: '{{ secrets.ECHOED }}' },
              headers: { Authorization: 'Bearer {{ secrets.ECHOED }}' },
              body: { token: '{{ secrets.ECHOED }}' },
            },
            { retry: FAST_RETRY },
          ),
        ]),
      );
      execution = await trigger(api, workflowId);
      const done = await waitForExecution(api, execution);
      expect(done.status).to.equal('failed');
      expect(receiver.requests.some((r) => r.headers['authorization'] === `Bearer ${value}`)).to.equal(true);
    });

    it('is masked in the step error and output the API shows', async () => {
      const res = await api.get(`/v1/executions/${execution}`).expect(200);
      expect(res.text).to.include('answered 400');
      expect(res.text).not.to.include(value);
    });

    it('is not in Temporal history', async () => {
      expect(await historyText(service, execution)).not.to.include(value);
    });

    it('is not in the logs', () => {
      expect(logs.text()).not.to.include(value);
    });
  });
});
