/**
 * docs/api.md#requests-and-responses, #errors, #rate-limits: request ids, the error body everywhere, body
 * rules, rate limits, health, OpenAPI.
 */
import { expect } from 'chai';
import request from 'supertest';
import { expectError } from '../support/fixtures';
import { startTestService, type TestService } from '../support/stack';

describe('HTTP conventions @integration', function () {
  let service: TestService;
  before(async function () {
    this.timeout(120_000);
    service = await startTestService({ env: { BODY_LIMIT_BYTES: '4096' } });
  });
  after(async () => service?.stop());

  describe('request ids', () => {
    it('generates an X-Request-Id when none is sent', async () => {
      const res = await request(service.url).get('/healthz').expect(200);
      expect(res.headers['x-request-id']).to.match(/^req_[A-Za-z0-9]{20}$/);
    });

    it('keeps a sane incoming X-Request-Id', async () => {
      const res = await request(service.url).get('/healthz').set('X-Request-Id', 'trace-42.a:b').expect(200);
      expect(res.headers['x-request-id']).to.equal('trace-42.a:b');
    });

    it('replaces an X-Request-Id that is not sane', async () => {
      const res = await request(service.url).get('/healthz').set('X-Request-Id', 'x'.repeat(300)).expect(200);
      expect(res.headers['x-request-id']).to.match(/^req_/);
    });

    it('repeats the request id in error bodies', async () => {
      const res = await request(service.url).get('/nope').set('X-Request-Id', 'abc-1');
      expect(res.body.error.request_id).to.equal('abc-1');
    });
  });

  describe('errors', () => {
    it('answers an unknown route with 404 not_found', async () => {
      expectError(await service.api().get('/v1/nothing-here'), 404, 'not_found');
    });

    it('answers an unknown route outside /v1 with 404 not_found too', async () => {
      expectError(await request(service.url).get('/favicon.ico'), 404, 'not_found');
    });

    it('answers a wrong method on a known route with 405 method_not_allowed', async () => {
      const res = await service.api().delete('/v1/workflows');
      expectError(res, 405, 'method_not_allowed');
      expect(res.headers['allow']).to.include('GET');
    });

    it('answers malformed JSON with 400 invalid_request', async () => {
      const res = await request(service.url)
        .post('/v1/workflows')
        .set('Authorization', `Bearer ${service.adminKey}`)
        .set('Content-Type', 'application/json')
        .send('{"id": "x",');
      expectError(res, 400, 'invalid_request');
      expect(res.body.error.message).to.match(/Malformed JSON/);
    });

    it('answers a body that is not JSON with 415 unsupported_media_type', async () => {
      const res = await request(service.url)
        .post('/v1/workflows')
        .set('Authorization', `Bearer ${service.adminKey}`)
        .set('Content-Type', 'text/plain')
        .send('id=x');
      expectError(res, 415, 'unsupported_media_type');
    });

    it('answers a body over the limit with 413 payload_too_large', async () => {
      const res = await service.api().post('/v1/workflows', { id: 'big', steps: [], pad: 'x'.repeat(8000) });
      expectError(res, 413, 'payload_too_large');
    });

    it('answers an invalid query value with 400 invalid_request naming it', async () => {
      const res = await service.api().get('/v1/executions?status=sleeping');
      expectError(res, 400, 'invalid_request');
      expect(res.body.error.details[0].path).to.equal('/query/status');
    });

    it('answers a limit over 100 with 400 invalid_request', async () => {
      expectError(await service.api().get('/v1/workflows?limit=101'), 400, 'invalid_request');
    });

    it('answers an unknown query parameter with 400 invalid_request', async () => {
      expectError(await service.api().get('/v1/workflows?limmit=5'), 400, 'invalid_request');
    });

    it('answers a cursor that was not issued by the API with 400 invalid_request', async () => {
      expectError(await service.api().get('/v1/workflows?cursor=not-a-cursor'), 400, 'invalid_request');
    });

    it('puts security headers on every response, errors included', async () => {
      for (const res of [
        await request(service.url).get('/healthz'),
        await request(service.url).get('/nope'),
      ]) {
        expect(res.headers['x-content-type-options']).to.equal('nosniff');
        expect(res.headers['x-frame-options']).to.equal('DENY');
        expect(res.headers['cache-control']).to.equal('no-store');
      }
    });
  });

  describe('health', () => {
    it('answers /healthz without a key', async () => {
      expect((await request(service.url).get('/healthz').expect(200)).body).to.deep.equal({ status: 'ok' });
    });

    it('answers /readyz with the database and Temporal checked', async () => {
      const res = await request(service.url).get('/readyz').expect(200);
      expect(res.body).to.deep.equal({ status: 'ready', checks: { database: 'ok', temporal: 'ok' } });
    });
  });

  describe('OpenAPI', () => {
    it('serves an OpenAPI 3.1 document without a key', async () => {
      const res = await request(service.url).get('/v1/openapi.json').expect(200);
      expect(res.body.openapi).to.equal('3.1.0');
    });

    it('documents every endpoint of the API', async () => {
      const { paths } = (await request(service.url).get('/v1/openapi.json')).body as {
        paths: Record<string, Record<string, unknown>>;
      };
      const operations = Object.entries(paths).flatMap(([path, methods]) =>
        Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`),
      );
      expect(operations).to.include.members([
        'GET /v1/workflows',
        'POST /v1/workflows',
        'GET /v1/workflows/{id}',
        'PUT /v1/workflows/{id}',
        'DELETE /v1/workflows/{id}',
        'POST /v1/workflows/{id}/trigger',
        'GET /v1/executions',
        'GET /v1/executions/{id}',
        'POST /v1/api-keys',
        'GET /v1/api-keys',
        'DELETE /v1/api-keys/{id}',
        'PUT /v1/secrets/{name}',
        'GET /v1/secrets',
        'DELETE /v1/secrets/{name}',
        'GET /healthz',
        'GET /readyz',
      ]);
    });

    it('describes request bodies with the schemas that validate them', async () => {
      const doc = (await request(service.url).get('/v1/openapi.json')).body as Record<string, any>;
      const body = doc.paths['/v1/workflows'].post.requestBody.content['application/json'].schema;
      const resolved = body.$ref ? doc.components.schemas[body.$ref.split('/').pop()] : body;
      expect(resolved.required).to.include.members(['id', 'steps']);
      expect(resolved.additionalProperties).to.equal(false);
    });

    it('documents the error body on every operation', async () => {
      const doc = (await request(service.url).get('/v1/openapi.json')).body as Record<string, any>;
      for (const [path, methods] of Object.entries<Record<string, any>>(doc.paths)) {
        for (const [method, operation] of Object.entries<any>(methods)) {
          expect(operation.responses['500'], `${method} ${path}`).to.exist;
        }
      }
    });
  });

  describe('rate limits', () => {
    let limited: TestService;
    before(async function () {
      this.timeout(120_000);
      limited = await startTestService({ env: { RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '3' } });
    });
    after(async () => limited?.stop());

    it('puts RateLimit headers on authenticated responses', async () => {
      const res = await limited.api().get('/v1/workflows').expect(200);
      expect(res.headers['ratelimit-limit']).to.equal('3');
      expect(Number(res.headers['ratelimit-remaining'])).to.be.within(0, 2);
      expect(Number(res.headers['ratelimit-reset'])).to.be.at.least(1);
    });

    it('answers 429 rate_limited with Retry-After once the burst is spent', async () => {
      const key = await limited.newKey('default', ['read']);
      const responses: request.Response[] = [];
      for (let i = 0; i < 5; i++) responses.push(await limited.api(key).get('/v1/workflows'));
      expect(responses.slice(0, 3).map((r) => r.status)).to.deep.equal([200, 200, 200]);
      const last = responses[4]!;
      expectError(last, 429, 'rate_limited');
      expect(Number(last.headers['retry-after'])).to.be.at.least(1);
    });

    it('limits each key on its own', async () => {
      const a = await limited.newKey('default', ['read']);
      const b = await limited.newKey('default', ['read']);
      for (let i = 0; i < 4; i++) await limited.api(a).get('/v1/workflows');
      await limited.api(b).get('/v1/workflows').expect(200);
    });
  });
});
