/**
 * OWASP API2, broken authentication (docs/api.md#authentication-and-scopes): revoked keys answer 401 on every
 * operation, keys are taken from the Authorization header only (a key in the URL is refused, whatever the
 * parameter is called), malformed headers answer 401, and a key is never seen again after the response that
 * created it: not in responses, logs, Temporal history or the database, where it is looked up by its hash
 * only.
 */
import { expect } from 'chai';
import request from 'supertest';
import { newApiKey, newApiKeyId, sha256Hex } from '../../platform/ids';
import { definition, rulesStep, trigger, waitForExecution, createWorkflow } from '../support/fixtures';
import type { TestService } from '../support/stack';
import {
  API,
  APPROVAL_STEP,
  authenticated,
  expectErrorOf,
  historyText,
  send,
  sharedService,
  suiteLogs as logs,
} from './support';

/** Names under which clients put credentials in URLs; some are refused by name, all by value. */
const QUERY_NAMES = [
  'api_key',
  'apikey',
  'key',
  'token',
  'access_token',
  'API_KEY',
  'apiKey',
  'Api-Key',
  'x-api-key',
  'authorization',
  'Authorization',
  'auth',
  'bearer',
  'sk',
];

describe('security: API keys @integration', function () {
  let service: TestService;
  let workspaceId: string;
  let admin: string;

  before(async function () {
    this.timeout(120_000);
    service = await sharedService();
    ({ workspaceId, key: admin } = await service.newWorkspace(['admin']));
  });

  describe('a revoked key', () => {
    let revoked: string;
    before(async () => {
      const created = await service
        .api(admin)
        .post('/v1/api-keys', { name: 'revoked', scopes: ['admin'] })
        .expect(201);
      revoked = created.body.key as string;
      await service.api(revoked).get('/v1/workflows').expect(200);
      await service.api(admin).delete(`/v1/api-keys/${created.body.id}`).expect(204);
    });

    for (const op of authenticated(API.operations)) {
      it(`answers 401 on ${op.label}`, async () => {
        expectErrorOf(await send(service.url, op, { key: revoked }), 401, ['unauthorized'], op.label);
      });
    }
  });

  describe('a key in the query string', () => {
    for (const op of authenticated(API.operations)) {
      it(`is refused (401) on ${op.label}, even with a valid Authorization header`, async () => {
        const res = await send(service.url, op, { key: admin, query: `api_key=${admin}` });
        expectErrorOf(res, 401, ['unauthorized'], op.label);
        expect(res.body.error.message).to.match(/Authorization header/);
      });
    }

    for (const name of QUERY_NAMES) {
      it(`is refused (401) as ?${name}=, with or without a header`, async () => {
        for (const path of ['/v1/workflows', '/v1/webhooks/wh_x', '/v1/executions/ex_x']) {
          const url = `${path}?${encodeURIComponent(name)}=${admin}`;
          expectErrorOf(await request(service.url).get(url), 401, ['unauthorized'], url);
          expectErrorOf(await service.api(admin).get(url), 401, ['unauthorized'], `${url} with a header`);
        }
        expectErrorOf(
          await service.api(admin).delete(`/v1/api-keys/key_x?${encodeURIComponent(name)}=${admin}`),
          401,
          ['unauthorized'],
          'DELETE',
        );
      });
    }

    it('is refused as "Bearer <key>" in a query value', async () => {
      const res = await service
        .api(admin)
        .get(`/v1/webhooks/wh_x?access=${encodeURIComponent(`Bearer ${admin}`)}`);
      expectErrorOf(res, 401, ['unauthorized'], 'query');
    });
  });

  describe('a malformed Authorization header', () => {
    const cases: [string, () => string][] = [
      ['another scheme', () => `Basic ${Buffer.from(`user:${admin}`).toString('base64')}`],
      ['a token scheme', () => `Token ${admin}`],
      ['the key without a scheme', () => admin],
      ['the scheme without a key', () => 'Bearer'],
      ['the scheme and a space', () => 'Bearer '],
      ['a key with trailing data', () => `Bearer ${admin} extra`],
      ['two keys', () => `Bearer ${admin}, Bearer ${admin}`],
      ['a key too short', () => `Bearer sk_${'a'.repeat(31)}`],
      ['a key too long', () => `Bearer sk_${'a'.repeat(129)}`],
      ['a key of other characters', () => `Bearer sk_${'-'.repeat(40)}`],
      ['a key without its prefix', () => `Bearer ${admin.slice(3)}`],
      ['a key one character short', () => `Bearer ${admin.slice(0, -1)}`],
      ['a key with one more character', () => `Bearer ${admin}A`],
      ['a key in other case', () => `Bearer ${admin.toUpperCase()}`],
      ['a key in a quoted string', () => `Bearer "${admin}"`],
    ];
    for (const [what, header] of cases) {
      it(`answers 401 to ${what}`, async () => {
        const res = await request(service.url).get('/v1/workflows').set('Authorization', header());
        expectErrorOf(res, 401, ['unauthorized'], what);
      });
    }

    it('accepts the scheme in any case and several spaces (RFC 9110)', async () => {
      for (const header of [`bearer ${admin}`, `BEARER ${admin}`, `Bearer   ${admin}`]) {
        await request(service.url).get('/v1/workflows').set('Authorization', header).expect(200);
      }
    });
  });

  describe('the key itself', () => {
    let key: string;
    let keyId: string;
    const executions: string[] = [];
    before(async function () {
      this.timeout(60_000);
      const created = await service
        .api(admin)
        .post('/v1/api-keys', { name: 'shown once', scopes: ['write'] })
        .expect(201);
      ({ key, id: keyId } = created.body as { key: string; id: string });
      // Use it everywhere: a trigger, an approval, a cancel, a retry, failures of every kind.
      const api = service.api(key);
      const ok = await createWorkflow(api, definition([rulesStep('a', [{ when: 'true', output: 1 }])]));
      const approval = await createWorkflow(api, definition([{ id: APPROVAL_STEP, kind: 'approval' }]));
      const failing = await createWorkflow(
        api,
        definition([rulesStep('gate', [{ when: 'true', action: 'fail', message: 'no' }])]),
      );
      executions.push(await trigger(api, ok));
      const approved = await trigger(api, approval);
      const canceled = await trigger(api, approval);
      const failed = await trigger(api, failing);
      executions.push(approved, canceled, failed);
      await waitForExecution(api, approved, (e) => e.status === 'waiting');
      await waitForExecution(api, canceled, (e) => e.status === 'waiting');
      await api
        .post(`/v1/executions/${approved}/steps/${APPROVAL_STEP}/approve`, { comment: 'ok' })
        .expect(200);
      await api.post(`/v1/executions/${canceled}/cancel`).expect(202);
      await waitForExecution(api, failed, (e) => e.status === 'failed');
      await api.post(`/v1/executions/${failed}/retry`).expect(202);
      for (const id of executions) await waitForExecution(api, id);
      await api.get('/v1/api-keys').expect(403);
      await api.get(`/v1/workflows?api_key=${key}`).expect(401);
      await api.get('/v1/executions/ex_doesnotexist').expect(404);
      await request(service.url).get('/v1/workflows').set('Authorization', `Bearer ${key}x`).expect(401);
    });

    it('is not in any list or read of the workspace', async () => {
      for (const op of authenticated(API.operations).filter(
        (o) => o.method === 'get' && o.pathParams.length === 0,
      )) {
        const res = await send(service.url, op, { key: admin, query: 'limit=100' });
        expect(res.status, op.label).to.equal(200);
        expect(res.text, op.label).not.to.include(key);
        expect(res.text, op.label).not.to.include(sha256Hex(key));
      }
      for (const id of executions) {
        const res = await service.api(admin).get(`/v1/executions/${id}`).expect(200);
        expect(res.text).not.to.include(key);
      }
    });

    it('is listed by id, name, scopes and a short prefix only', async () => {
      const res = await service.api(admin).get('/v1/api-keys?limit=100').expect(200);
      const listed = (res.body.data as Record<string, unknown>[]).find((k) => k['id'] === keyId)!;
      expect(Object.keys(listed).sort()).to.deep.equal(
        ['created_at', 'id', 'last_used_at', 'name', 'prefix', 'revoked_at', 'scopes'].sort(),
      );
      expect((listed['prefix'] as string).length).to.be.at.most(12);
    });

    it('is not in the logs, nor its hash', () => {
      expect(logs.text().length).to.be.greaterThan(0);
      expect(logs.text()).not.to.include(key);
      expect(logs.text()).not.to.include(key.slice(3));
      expect(logs.text()).not.to.include(sha256Hex(key));
    });

    it('is not in the Temporal history of the executions it triggered, approved, canceled and retried', async () => {
      for (const id of executions) {
        const text = await historyText(service, id);
        expect(text, id).not.to.include(key);
        expect(text, id).not.to.include(sha256Hex(key));
      }
      // What is recorded is who decided: the key's id.
      expect(await historyText(service, executions[1]!)).to.include(keyId);
    });

    it('is stored only as its SHA-256: no column of its row holds it', async () => {
      const rows = await service.runtime.services.db.query<Record<string, unknown>>(
        'select * from api_keys where id = $1',
        [keyId],
      );
      expect(rows).to.have.length(1);
      expect(rows[0]!['key_hash']).to.equal(sha256Hex(key));
      expect(JSON.stringify(rows[0])).not.to.include(key);
      expect(JSON.stringify(rows[0])).not.to.include(key.slice(3));
    });
  });

  describe('lookup by hash only', () => {
    it('never matches a key against a stored value as text', async () => {
      // A row whose hash column holds a key verbatim: a lookup comparing the presented key itself (not
      // its hash) with stored values would let it in.
      const planted = newApiKey();
      await service.runtime.services.db.query(
        `insert into api_keys (id, workspace_id, name, scopes, prefix, key_hash) values ($1, $2, 'planted', $3, $4, $5)`,
        [newApiKeyId(), workspaceId, ['admin'], planted.slice(0, 9), planted],
      );
      expectErrorOf(await service.api(planted).get('/v1/workflows'), 401, ['unauthorized'], 'planted');
    });

    it("never matches a key's hash presented as the key", async () => {
      const res = await request(service.url)
        .get('/v1/workflows')
        .set('Authorization', `Bearer sk_${sha256Hex(admin).slice(0, 40)}`);
      expectErrorOf(res, 401, ['unauthorized'], 'hash as key');
    });
  });
});
