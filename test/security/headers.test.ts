/**
 * OWASP API8, security misconfiguration: every response, of every operation of the OpenAPI document and
 * of every error path (400, 401, 403, 404, 405, 413, 415, 429, 500), carries the security headers
 * (X-Content-Type-Options, X-Frame-Options, Content-Security-Policy, Referrer-Policy, Cache-Control:
 * no-store, Strict-Transport-Security), JSON bodies are declared JSON, and no error body holds a stack
 * trace, a source position or a file system path (docs/api.md#errors: 500 without internal detail).
 */
import { expect } from 'chai';
import request from 'supertest';
import { startTestService, type TestService } from '../support/stack';
import { API, expectErrorOf, expectNoInternals, expectSecurityHeaders, send, sharedService } from './support';

describe('security: headers and error bodies @integration', function () {
  let service: TestService;
  let key: string;
  let readKey: string;
  before(async function () {
    this.timeout(120_000);
    service = await sharedService();
    const workspace = await service.newWorkspace(['admin']);
    key = workspace.key;
    readKey = await service.newKey(workspace.workspaceId, ['read']);
  });

  function check(res: request.Response, what: string): void {
    expectSecurityHeaders(res, what);
    expectNoInternals(res, what);
    if (res.text) expect(res.headers['content-type'], what).to.match(/^application\/json; charset=utf-8$/);
    if (res.status >= 400) {
      const code = (res.body as { error?: { code?: string } }).error?.code;
      expectErrorOf(res, res.status, [code ?? '(missing)'], what);
    }
  }

  describe('every operation', () => {
    for (const op of API.operations) {
      it(`${op.label}, called with a key`, async () => {
        check(await send(service.url, op, { key }), op.label);
      });

      if (op.scope !== 'none') {
        it(`${op.label}, called without a key (401)`, async () => {
          const res = await send(service.url, op);
          expect(res.status).to.equal(401);
          check(res, op.label);
        });
      }
    }
  });

  describe('error paths', () => {
    const api = () => request(service.url);

    it('400: malformed JSON', async () => {
      const res = await api()
        .post('/v1/workflows')
        .set('Authorization', `Bearer ${key}`)
        .set('Content-Type', 'application/json')
        .send('{"id": ');
      expectErrorOf(res, 400, ['invalid_request'], 'malformed JSON');
      check(res, 'malformed JSON');
    });

    it('400: a bad query value', async () => {
      const res = await api().get('/v1/executions?status=exploded').set('Authorization', `Bearer ${key}`);
      expectErrorOf(res, 400, ['invalid_request'], 'query');
      check(res, 'query');
    });

    it('400 or 404: malformed percent-encoding in the path', async () => {
      const res = await api().get('/v1/workflows/%E0%A4%A').set('Authorization', `Bearer ${key}`);
      expect(res.status).to.be.oneOf([400, 404]);
      check(res, 'percent-encoding');
    });

    it('401: an unknown key', async () => {
      const res = await api()
        .get('/v1/workflows')
        .set('Authorization', `Bearer sk_${'Z'.repeat(40)}`);
      expectErrorOf(res, 401, ['unauthorized'], 'unknown key');
      check(res, 'unknown key');
    });

    it('401: an inbound hook without a signature', async () => {
      const created = await service
        .api(key)
        .post('/v1/workflows', {
          id: 'hooked',
          trigger: { type: 'webhook' },
          steps: [{ id: 'a', kind: 'rules', rules: [{ when: 'true', output: 1 }] }],
        })
        .expect(201);
      const res = await api()
        .post(`/v1/hooks/${created.body.id}`)
        .set('Content-Type', 'application/json')
        .send('{}');
      expectErrorOf(res, 401, ['invalid_signature'], 'hook');
      check(res, 'hook');
    });

    it('403: a read key on a write', async () => {
      const res = await api().delete('/v1/workflows/x').set('Authorization', `Bearer ${readKey}`);
      expectErrorOf(res, 403, ['forbidden'], 'read key');
      check(res, 'read key');
    });

    it('404: an unknown route', async () => {
      const res = await api().get('/v1/nothing-here');
      expectErrorOf(res, 404, ['not_found'], 'unknown route');
      check(res, 'unknown route');
    });

    it('404: outside /v1', async () => {
      const res = await api().get('/.env');
      expectErrorOf(res, 404, ['not_found'], '/.env');
      check(res, '/.env');
    });

    it('405: a method a route does not have', async () => {
      const res = await api().patch('/v1/workflows').set('Authorization', `Bearer ${key}`).send({});
      expectErrorOf(res, 405, ['method_not_allowed'], 'PATCH');
      expect(res.headers['allow']).to.be.a('string');
      check(res, 'PATCH');
    });

    it('413: a body over the limit', async () => {
      const res = await api()
        .put('/v1/secrets/BIG')
        .set('Authorization', `Bearer ${key}`)
        .set('Content-Type', 'application/json')
        .send(JSON.stringify({ value: 'x'.repeat(service.config.bodyLimitBytes + 1) }));
      expectErrorOf(res, 413, ['payload_too_large'], '413');
      check(res, '413');
    });

    it('415: a body that is not JSON', async () => {
      const res = await api()
        .post('/v1/workflows')
        .set('Authorization', `Bearer ${key}`)
        .set('Content-Type', 'text/html')
        .send('<script>alert(1)</script>');
      expectErrorOf(res, 415, ['unsupported_media_type'], '415');
      check(res, '415');
    });

    it('429: a key over its rate limit', async function () {
      this.timeout(120_000);
      // A service of its own with a burst of 2: the shared one (like every test service) has limits
      // high enough that suites polling many executions at once never meet them.
      const limited = await startTestService({ env: { RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '2' } });
      try {
        let res: request.Response | undefined;
        for (let attempt = 0; attempt < 5 && !res; attempt++) {
          const answer = await limited.api().get('/v1/secrets');
          if (answer.status === 429) res = answer;
        }
        expectErrorOf(res!, 429, ['rate_limited'], '429');
        expect(res!.headers['retry-after']).to.match(/^\d+$/);
        check(res!, '429');
      } finally {
        await limited.stop();
      }
    });

    it('500: an unexpected error, without its message, stack or paths', async () => {
      const workflow = service.runtime.services.temporal.client.workflow;
      const original = workflow.getHandle.bind(workflow);
      workflow.getHandle = () => {
        throw new Error(`boom in ${process.cwd()}/src/executions/read.ts:42:7 with password=hunter2`);
      };
      try {
        const res = await api().get('/v1/executions/ex_abcdefabcdef').set('Authorization', `Bearer ${key}`);
        expectErrorOf(res, 500, ['internal_error'], '500');
        check(res, '500');
        expect(res.text).not.to.include('hunter2');
        expect(res.text).not.to.include('boom');
      } finally {
        workflow.getHandle = original;
      }
    });

    it('OPTIONS and HEAD', async () => {
      const options = await api().options('/v1/workflows');
      expectSecurityHeaders(options, 'OPTIONS');
      const head = await api().head('/v1/workflows').set('Authorization', `Bearer ${key}`);
      expect(head.status).to.equal(200);
      expectSecurityHeaders(head, 'HEAD');
    });
  });
});
