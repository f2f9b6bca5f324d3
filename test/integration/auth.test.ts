/** docs/api.md#authentication-and-scopes: API keys, scopes and workspace isolation. */
import { expect } from 'chai';
import request from 'supertest';
import { createWorkflow, definition, expectError, rulesStep, trigger } from '../support/fixtures';
import { DB_KINDS, startTestService, type TestService } from '../support/stack';

for (const db of DB_KINDS) {
  describe(`authentication and API keys (${db}) @integration`, function () {
    let service: TestService;
    before(async function () {
      this.timeout(120_000);
      service = await startTestService({ db });
    });
    after(async () => service?.stop());

    describe('401 unauthorized', () => {
      it('answers a request without a key', async () => {
        const res = await request(service.url).get('/v1/workflows');
        expectError(res, 401, 'unauthorized');
        expect(res.headers['www-authenticate']).to.equal('Bearer');
      });

      it('answers a malformed Authorization header', async () => {
        expectError(
          await request(service.url).get('/v1/workflows').set('Authorization', 'Basic abc'),
          401,
          'unauthorized',
        );
      });

      it('answers a well-formed key that does not exist', async () => {
        expectError(await service.api(`sk_${'A'.repeat(40)}`).get('/v1/workflows'), 401, 'unauthorized');
      });

      it('answers a revoked key at once', async () => {
        const created = await service
          .api()
          .post('/v1/api-keys', { name: 'short-lived', scopes: ['read'] })
          .expect(201);
        await service.api(created.body.key).get('/v1/workflows').expect(200);
        await service.api().delete(`/v1/api-keys/${created.body.id}`).expect(204);
        expectError(await service.api(created.body.key).get('/v1/workflows'), 401, 'unauthorized');
      });

      it('refuses a key passed in the query string', async () => {
        expectError(
          await service.api().get(`/v1/workflows?api_key=${service.adminKey}`),
          401,
          'unauthorized',
        );
      });
    });

    describe('403 forbidden', () => {
      it('refuses a write with a read key', async () => {
        const key = await service.newKey('default', ['read']);
        await service.api(key).get('/v1/workflows').expect(200);
        expectError(
          await service.api(key).post('/v1/workflows', definition([rulesStep('a', [{ when: 'true' }])])),
          403,
          'forbidden',
        );
      });

      it('refuses a trigger with a read key', async () => {
        const key = await service.newKey('default', ['read']);
        expectError(
          await service
            .api(key)
            .post('/v1/workflows/customer-onboarding/trigger', { customer: 'a', plan: 'b' }),
          403,
          'forbidden',
        );
      });

      it('refuses API key management with a write key', async () => {
        const key = await service.newKey('default', ['write']);
        await service.api(key).get('/v1/workflows').expect(200);
        expectError(await service.api(key).get('/v1/api-keys'), 403, 'forbidden');
      });
    });

    describe('API keys', () => {
      it('shows a new key once, at creation', async () => {
        const res = await service
          .api()
          .post('/v1/api-keys', { name: 'ci', scopes: ['read', 'write'] })
          .expect(201);
        expect(res.body.key).to.match(/^sk_[A-Za-z0-9]{40}$/);
        expect(res.body).to.include({ name: 'ci', revoked_at: null, last_used_at: null });
        expect(res.body.scopes).to.deep.equal(['read', 'write']);
        expect(res.body.key.startsWith(res.body.prefix)).to.equal(true);
        const list = await service.api().get('/v1/api-keys?limit=100').expect(200);
        const listed = list.body.data.find((k: { id: string }) => k.id === res.body.id);
        expect(listed).to.not.have.property('key');
        expect(JSON.stringify(list.body)).not.to.include(res.body.key);
      });

      it('records when a key was last used', async () => {
        const created = await service
          .api()
          .post('/v1/api-keys', { name: 'used', scopes: ['read'] })
          .expect(201);
        await service.api(created.body.key).get('/v1/workflows').expect(200);
        const list = await service.api().get('/v1/api-keys?limit=100').expect(200);
        expect(list.body.data.find((k: { id: string }) => k.id === created.body.id).last_used_at).to.be.a(
          'string',
        );
      });

      it('pages through keys with a cursor', async () => {
        for (let i = 0; i < 3; i++)
          await service
            .api()
            .post('/v1/api-keys', { name: `page-${i}`, scopes: ['read'] })
            .expect(201);
        const first = await service.api().get('/v1/api-keys?limit=2').expect(200);
        expect(first.body.data).to.have.length(2);
        expect(first.body.next_cursor).to.be.a('string');
        const second = await service
          .api()
          .get(`/v1/api-keys?limit=2&cursor=${first.body.next_cursor}`)
          .expect(200);
        const ids = [...first.body.data, ...second.body.data].map((k: { id: string }) => k.id);
        expect(new Set(ids).size).to.equal(ids.length);
      });

      it('rejects an unknown scope with 400 invalid_request', async () => {
        expectError(
          await service.api().post('/v1/api-keys', { name: 'x', scopes: ['root'] }),
          400,
          'invalid_request',
        );
      });

      it('refuses a blank name, and keeps a name as sent up to 200 characters before trimming it', async () => {
        for (const name of ['\r', ' \u00a0\u3000 '])
          expectError(
            await service.api().post('/v1/api-keys', { name, scopes: ['read'] }),
            400,
            'invalid_request',
          );
        expectError(
          await service.api().post('/v1/api-keys', { name: `${'n'.repeat(200)} `, scopes: ['read'] }),
          400,
          'invalid_request',
        );
        const created = await service
          .api()
          .post('/v1/api-keys', { name: '  ci deploys\t', scopes: ['read'] });
        expect(created.status, JSON.stringify(created.body)).to.equal(201);
        expect(created.body.name).to.equal('ci deploys');
      });

      it('answers 404 api_key_not_found for an unknown key id', async () => {
        expectError(await service.api().delete('/v1/api-keys/key_nope'), 404, 'api_key_not_found');
      });
    });

    describe('workspace isolation', () => {
      let other: { workspaceId: string; key: string };
      before(async () => {
        other = await service.newWorkspace(['admin']);
      });

      it("does not list another workspace's workflows", async () => {
        const res = await service.api(other.key).get('/v1/workflows').expect(200);
        expect(res.body.data.map((w: { id: string }) => w.id)).not.to.include('customer-onboarding');
      });

      it("answers 404 for another workspace's workflow", async () => {
        expectError(
          await service.api(other.key).get('/v1/workflows/customer-onboarding'),
          404,
          'workflow_not_found',
        );
        expectError(
          await service.api(other.key).post('/v1/workflows/customer-onboarding/trigger', {}),
          404,
          'workflow_not_found',
        );
        expectError(
          await service.api(other.key).delete('/v1/workflows/customer-onboarding'),
          404,
          'workflow_not_found',
        );
      });

      it("answers 404 for another workspace's execution", async () => {
        const id = await trigger(service.api(), 'customer-onboarding', { customer: 'Ada', plan: 'pro' });
        expectError(await service.api(other.key).get(`/v1/executions/${id}`), 404, 'execution_not_found');
      });

      it("does not list another workspace's executions", async () => {
        const workflowId = await createWorkflow(
          service.api(),
          definition([rulesStep('a', [{ when: 'true', output: 1 }])]),
        );
        await trigger(service.api(), workflowId);
        const res = await service.api(other.key).get(`/v1/executions?workflow=${workflowId}`).expect(200);
        expect(res.body.data).to.deep.equal([]);
      });

      it("answers 404 for another workspace's API key", async () => {
        const created = await service
          .api()
          .post('/v1/api-keys', { name: 'mine', scopes: ['read'] })
          .expect(201);
        expectError(
          await service.api(other.key).delete(`/v1/api-keys/${created.body.id}`),
          404,
          'api_key_not_found',
        );
        await service.api(created.body.key).get('/v1/workflows').expect(200);
      });

      it('lets two workspaces use the same workflow id', async () => {
        const body = definition([rulesStep('a', [{ when: 'true', output: 1 }])]);
        await createWorkflow(service.api(), body);
        await createWorkflow(service.api(other.key), body);
      });
    });
  });
}
