/**
 * Inbound hooks (docs/webhooks.md#inbound-hooks): the hook_secret, the signed trigger, the per-workflow
 * limit.
 */
import { expect } from 'chai';
import request from 'supertest';
import { signatureHeader } from '../../src/inbound-hooks/signature';
import {
  createWorkflow,
  definition,
  expectError,
  rulesStep,
  uniqueId,
  waitForExecution,
} from '../support/fixtures';
import { DB_KINDS, startTestService, type ApiClient, type TestService } from '../support/stack';
import { waitFor } from '../support/wait';

const inputSchema = {
  type: 'object',
  required: ['customer'],
  properties: { customer: { type: 'string' }, plan: { type: 'string', default: 'starter' } },
};

const now = () => Math.floor(Date.now() / 1000);

function webhookDefinition(id = uniqueId()): Record<string, unknown> {
  return definition([rulesStep('echo', [{ when: 'true', output: '{{ input }}' }])], {
    id,
    trigger: { type: 'webhook' },
    input_schema: inputSchema,
  });
}

/** Creates a webhook workflow and returns its id and the hook secret shown at creation. */
async function createHookWorkflow(api: ApiClient, id?: string): Promise<{ id: string; secret: string }> {
  const res = await api.post('/v1/workflows', webhookDefinition(id));
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  expect(res.body.hook_secret).to.be.a('string');
  return { id: res.body.id as string, secret: res.body.hook_secret as string };
}

/** A unique, valid input, as the exact bytes that are signed and sent. */
const payload = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ customer: 'Ada', nonce: uniqueId('n'), ...extra });

function sendHook(url: string, workflowId: string, body: string, header?: string): request.Test {
  const req = request(url).post(`/v1/hooks/${workflowId}`).set('Content-Type', 'application/json');
  return (header === undefined ? req : req.set('X-Service-Signature', header)).send(body);
}

for (const db of DB_KINDS) {
  describe(`inbound hooks (${db}) @integration`, function () {
    let service: TestService;
    let hook: { id: string; secret: string };
    const signed = (body: string, secret = hook.secret, t = now()) =>
      sendHook(service.url, hook.id, body, signatureHeader(secret, body, t));

    before(async function () {
      this.timeout(120_000);
      service = await startTestService({ db });
      hook = await createHookWorkflow(service.api());
    });
    after(async () => service?.stop());

    describe('hook_secret', () => {
      it('is returned once, on creation, and never by GET', async () => {
        expect(hook.secret).to.match(/^whsec_/);
        const res = await service.api().get(`/v1/workflows/${hook.id}`).expect(200);
        expect(res.body).not.to.have.property('hook_secret');
      });

      it('is not returned again when another webhook version is saved', async () => {
        const created = await createHookWorkflow(service.api());
        const res = await service
          .api()
          .put(`/v1/workflows/${created.id}`, webhookDefinition(created.id))
          .expect(200);
        expect(res.body.version).to.equal(2);
        expect(res.body).not.to.have.property('hook_secret');
      });
    });

    it('answers 202 to a valid signature and runs the execution with the body as input', async () => {
      const body = payload();
      const res = await signed(body).expect(202);
      expect(res.body).to.have.keys(['status', 'execution_id']);
      expect(res.body.status).to.equal('accepted');
      expect(res.headers['ratelimit-limit']).to.equal(String(service.config.rateLimit.burst));
      const execution = await waitForExecution(service.api(), res.body.execution_id as string);
      expect(execution.status).to.equal('success');
      expect(execution.trigger).to.deep.equal({ type: 'webhook' });
      expect(execution.workflow).to.equal(hook.id);
      expect(execution.steps[0]).to.include({ id: 'trigger', kind: 'trigger', status: 'success' });
      expect(execution.steps[0]!.input).to.deep.equal(JSON.parse(body));
      expect(execution.steps[0]!.output).to.deep.equal({ ...JSON.parse(body), plan: 'starter' });
    });

    it('answers 401 invalid_signature to a wrong signature', async () => {
      expectError(await signed(payload(), 'whsec_not-the-secret'), 401, 'invalid_signature');
    });

    it('answers 401 to a signature over another body', async () => {
      const header = signatureHeader(hook.secret, payload(), now());
      expectError(await sendHook(service.url, hook.id, payload(), header), 401, 'invalid_signature');
    });

    it('answers 401 to a timestamp 301 s old', async () => {
      expectError(await signed(payload(), hook.secret, now() - 301), 401, 'invalid_signature');
    });

    it('answers 401 to a timestamp 301 s ahead', async () => {
      expectError(await signed(payload(), hook.secret, now() + 301), 401, 'invalid_signature');
    });

    it('answers 401 without the header', async () => {
      expectError(await sendHook(service.url, hook.id, payload()), 401, 'invalid_signature');
    });

    it('answers 401 to a malformed header', async () => {
      const res = await sendHook(service.url, hook.id, payload(), `v1=${'ab'.repeat(32)}`);
      expectError(res, 401, 'invalid_signature');
    });

    it('answers 401, not 400, to malformed JSON with a bad signature', async () => {
      const res = await sendHook(service.url, hook.id, '{"customer": ', `t=${now()},v1=${'ab'.repeat(32)}`);
      expectError(res, 401, 'invalid_signature');
    });

    it('answers 400 invalid_request to malformed JSON with a valid signature', async () => {
      expectError(await signed('{"customer": '), 400, 'invalid_request');
    });

    it('answers 415 to a validly signed body that is not JSON', async () => {
      const body = payload();
      const res = await request(service.url)
        .post(`/v1/hooks/${hook.id}`)
        .set('Content-Type', 'text/plain')
        .set('X-Service-Signature', signatureHeader(hook.secret, body, now()))
        .send(body);
      expectError(res, 415, 'unsupported_media_type');
    });

    it('answers 400 invalid_input to a signed input that fails the input_schema', async () => {
      const res = await signed(JSON.stringify({ customer: 7 }));
      expectError(res, 400, 'invalid_input');
      expect(res.body.error.details.map((d: { path: string }) => d.path)).to.deep.equal(['/customer']);
    });

    it('answers a replayed request with the same execution id and starts one run', async () => {
      const own = await createHookWorkflow(service.api());
      const body = payload();
      const header = signatureHeader(own.secret, body, now());
      const first = await sendHook(service.url, own.id, body, header).expect(202);
      const second = await sendHook(service.url, own.id, body, header).expect(202);
      expect(second.body.execution_id).to.equal(first.body.execution_id);
      const { client } = service.runtime.services.temporal;
      const count = await waitFor(
        async () => (await client.workflow.count(`SwitchyardWorkflow = '${own.id}'`)).count || undefined,
        { what: 'the run to be visible' },
      );
      expect(count).to.equal(1);
    });

    it('accepts several v1 values when only the second is right', async () => {
      const body = payload();
      const t = now();
      const right = signatureHeader(hook.secret, body, t).split('v1=')[1]!;
      const wrong = signatureHeader('whsec_old-secret', body, t).split('v1=')[1]!;
      await sendHook(service.url, hook.id, body, `t=${t},v1=${wrong},v1=${right}`).expect(202);
    });

    it('stops accepting the old secret once it is rotated, and accepts the new one', async () => {
      const own = await createHookWorkflow(service.api());
      const res = await service.api().post(`/v1/workflows/${own.id}/hook-secret`).expect(200);
      const rotated = res.body.hook_secret as string;
      expect(rotated)
        .to.match(/^whsec_/)
        .and.not.equal(own.secret);
      const body = payload();
      const send = (secret: string) =>
        sendHook(service.url, own.id, body, signatureHeader(secret, body, now()));
      expectError(await send(own.secret), 401, 'invalid_signature');
      await send(rotated).expect(202);
    });

    it('answers 409 no_webhook_trigger to rotating the secret of a workflow without a webhook trigger', async () => {
      const id = await createWorkflow(service.api(), definition([rulesStep('r', [{ when: 'true' }])]));
      expectError(await service.api().post(`/v1/workflows/${id}/hook-secret`), 409, 'no_webhook_trigger');
    });

    it('answers 404 workflow_not_found for an unknown workflow', async () => {
      const body = payload();
      const res = await sendHook(
        service.url,
        'no-such-workflow',
        body,
        signatureHeader(hook.secret, body, now()),
      );
      expectError(res, 404, 'workflow_not_found');
    });

    it('answers 404 workflow_not_found for a workflow with an api trigger', async () => {
      const api = await service.api().post('/v1/workflows', definition([rulesStep('a', [{ when: 'true' }])]));
      expect(api.status).to.equal(201);
      expect(api.body).not.to.have.property('hook_secret');
      const body = payload();
      const res = await sendHook(service.url, api.body.id, body, signatureHeader(hook.secret, body, now()));
      expectError(res, 404, 'workflow_not_found');
    });

    it('lets the signature decide between workflows with one id in two workspaces', async () => {
      const other = await service.newWorkspace(['admin']);
      const otherApi = service.api(other.key);
      const id = uniqueId();
      const mine = await createHookWorkflow(service.api(), id);
      const theirs = await createHookWorkflow(otherApi, id);
      const start = async (secret: string) => {
        const body = payload();
        const res = await sendHook(service.url, id, body, signatureHeader(secret, body, now())).expect(202);
        return res.body.execution_id as string;
      };
      const inMine = await start(mine.secret);
      const inTheirs = await start(theirs.secret);
      const read = (api: ApiClient, executionId: string) => api.get(`/v1/executions/${executionId}`);
      expect((await waitForExecution(service.api(), inMine)).trigger.type).to.equal('webhook');
      expect((await waitForExecution(otherApi, inTheirs)).trigger.type).to.equal('webhook');
      expectError(await read(otherApi, inMine), 404, 'execution_not_found');
      expectError(await read(service.api(), inTheirs), 404, 'execution_not_found');
    });

    it('is documented in the OpenAPI document, with the signature header', async () => {
      const res = await request(service.url).get('/v1/openapi.json').expect(200);
      const operation = res.body.paths['/v1/hooks/{workflow}']?.post as {
        security: unknown[];
        description: string;
        responses: Record<string, unknown>;
      };
      expect(operation.security).to.deep.equal([]);
      expect(operation.description).to.include('X-Service-Signature').and.include('openssl');
      expect(operation.responses).to.include.keys(['202', '401', '404', '429']);
    });

    describe('rate limit', function () {
      let limited: TestService;
      before(async function () {
        this.timeout(120_000);
        limited = await startTestService({ db, env: { RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '2' } });
      });
      after(async () => limited?.stop());

      it('limits each workflow and answers 429 rate_limited with Retry-After', async () => {
        const own = await createHookWorkflow(limited.api());
        const send = (secret = own.secret) => {
          const body = payload();
          return sendHook(limited.url, own.id, body, signatureHeader(secret, body, now()));
        };
        // Requests without the secret take no token: they cannot use up the sender's budget.
        for (let i = 0; i < 3; i++) expectError(await send('whsec_wrong'), 401, 'invalid_signature');
        const ok = await send().expect(202);
        expect(ok.headers).to.include({ 'ratelimit-limit': '2', 'ratelimit-remaining': '1' });
        await send().expect(202);
        const refused = await send();
        expectError(refused, 429, 'rate_limited');
        expect(Number(refused.headers['retry-after'])).to.be.at.least(1);
        expect(refused.headers['ratelimit-remaining']).to.equal('0');
      });
    });
  });
}
