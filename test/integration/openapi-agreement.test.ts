/**
 * Where the OpenAPI document and the service must say the same (docs/api.md): the header-size
 * limit answers the error body, cursors and webhook URLs are described as the service accepts them,
 * a rules step may be a constant, and JSONata's semantic check is stated in the schema.
 */
import http from 'node:http';
import { expect } from 'chai';
import request from 'supertest';
import { ERROR_CODES } from '../../platform/errors';
import { createWorkflow, expectError, trigger, uniqueId, waitForExecution } from '../support/fixtures';
import { startTestService, type TestService } from '../support/stack';

/** The document, walked as plain JSON. */
type Json = any;

/** A raw GET, so that nothing on the client side refuses the oversized request first. */
function rawGet(
  url: string,
  path: string,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(new URL(path, url), (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
  });
}

describe('OpenAPI document and service agree @integration', function () {
  let service: TestService;
  let doc: Json;
  before(async function () {
    this.timeout(120_000);
    service = await startTestService();
    doc = (await request(service.url).get('/v1/openapi.json').expect(200)).body;
  });
  after(async () => service?.stop());

  describe('requests past the header size limit', () => {
    it('answers a query string over 16 KiB with 431 and the error body', async () => {
      const res = await rawGet(service.url, `/v1/workflows?cursor=${'a'.repeat(20_000)}`);
      expect(res.status).to.equal(431);
      expect(res.headers['content-type']).to.match(/^application\/json/);
      const body: Json = JSON.parse(res.body);
      expectError({ status: res.status, body }, 431, 'invalid_request');
      expect(body.error.request_id).to.equal(res.headers['x-request-id']);
    });

    it('documents 431 with the error body on every operation', () => {
      for (const [path, methods] of Object.entries<Json>(doc.paths)) {
        for (const [method, operation] of Object.entries<Json>(methods)) {
          const schema = operation.responses['431']?.content?.['application/json']?.schema;
          expect(schema?.$ref, `${method} ${path}`).to.equal('#/components/schemas/Error');
        }
      }
    });
  });

  describe('cursors', () => {
    const cursorPattern = () =>
      new RegExp(
        (doc.paths['/v1/workflows'].get.parameters as Json[]).find((p) => p.name === 'cursor').schema.pattern,
      );

    it('documents a cursor pattern that every issued next_cursor matches', async () => {
      await createWorkflow(service.api(), {
        id: uniqueId('page'),
        steps: [{ id: 'a', kind: 'rules', rules: [], default: 1 }],
      });
      const res = await service.api().get('/v1/workflows?limit=1').expect(200);
      expect(res.body.next_cursor).to.be.a('string').and.match(cursorPattern());
    });

    it('refuses a cursor outside the documented pattern with 400 invalid_request on /query/cursor', async () => {
      expect('0').not.to.match(cursorPattern());
      const res = await service.api().get('/v1/workflows?cursor=0');
      expectError(res, 400, 'invalid_request');
      expect(res.body.error.details[0].path).to.equal('/query/cursor');
    });
  });

  describe('webhook urls', () => {
    it('documents the url as a URI whose pattern refuses "0", which the service refuses too', async () => {
      const url =
        doc.paths['/v1/webhooks'].post.requestBody.content['application/json'].schema.properties.url;
      expect(url.format).to.equal('uri');
      const pattern = new RegExp(url.pattern);
      expect('0').not.to.match(pattern);
      expect('https://hooks.example.com/in?x=1').to.match(pattern);
      expectError(
        await service.api().post('/v1/webhooks', { url: '0', events: ['execution.completed'] }),
        400,
        'invalid_webhook_url',
      );
    });
  });

  describe('rules steps without rules', () => {
    it('accepts "rules": [] with a default', async () => {
      await service
        .api()
        .post('/v1/workflows', {
          id: uniqueId('constant'),
          steps: [{ id: 'constant', kind: 'rules', rules: [], default: { tier: 'standard' } }],
        })
        .expect(201);
    });

    it('refuses "rules": [] without a default with 400 invalid_definition on /steps/0/rules', async () => {
      const res = await service.api().post('/v1/workflows', {
        id: uniqueId('constant'),
        steps: [{ id: 'constant', kind: 'rules', rules: [] }],
      });
      expectError(res, 400, 'invalid_definition');
      expect(res.body.error.details[0].path).to.equal('/steps/0/rules');
    });

    it('runs a constant rules step to success with the default as its output', async () => {
      const workflowId = await createWorkflow(service.api(), {
        id: uniqueId('constant'),
        steps: [
          { id: 'constant', kind: 'rules', rules: [], default: { tier: '{{ input.plan }}' } },
          { id: 'after', kind: 'rules', rules: [], default: '{{ steps.constant.output.tier }}' },
        ],
      });
      const execution = await waitForExecution(
        service.api(),
        await trigger(service.api(), workflowId, { plan: 'gold' }),
      );
      expect(execution.status).to.equal('success');
      expect(execution.steps.map((s) => [s.id, s.status, s.output])).to.deep.equal([
        ['trigger', 'success', { plan: 'gold' }],
        ['constant', 'success', { tier: 'gold' }],
        ['after', 'success', 'gold'],
      ]);
    });

    it('documents that "rules" may be empty only with a default', () => {
      const rules = doc.components.schemas.RulesStep;
      expect(rules.properties.rules.minItems).to.equal(undefined);
      expect(rules.anyOf).to.deep.equal([
        { properties: { rules: { minItems: 1 } } },
        { required: ['default'] },
      ]);
    });
  });

  describe('JSONata expressions', () => {
    it('says in the schema that expressions are checked for JSONata syntax beyond their type', () => {
      const rule = doc.components.schemas.RulesStep.properties.rules.items;
      expect(rule.properties.when.description).to.match(/JSONata syntax.*400 invalid_definition/);
      expect(doc.components.schemas.RulesStep.properties.if.description).to.match(/JSONata syntax/);
    });
  });

  describe('what tools need from the document', () => {
    const operations = (): [string, Json][] =>
      Object.entries<Json>(doc.paths).flatMap(([path, methods]) =>
        Object.entries<Json>(methods).map(([method, op]): [string, Json] => [`${method} ${path}`, op]),
      );

    it('lists the error codes as an enum', () => {
      expect(doc.components.schemas.Error.properties.error.properties.code.enum).to.deep.equal([
        ...ERROR_CODES,
      ]);
    });

    it('documents X-Request-Id on every response and Retry-After on every 429 and 503', () => {
      for (const [name, op] of operations()) {
        for (const [status, response] of Object.entries<Json>(op.responses)) {
          expect(response.headers?.['X-Request-Id'], `${name} ${status}`).to.exist;
          if (status === '429' || status === '503')
            expect(response.headers['Retry-After'], `${name} ${status}`).to.exist;
        }
      }
    });

    it('gives every error response an example whose code is in the enum', () => {
      for (const [name, op] of operations()) {
        for (const [status, response] of Object.entries<Json>(op.responses)) {
          if (Number(status) < 400) continue;
          const example = response.content['application/json'].example;
          expect(ERROR_CODES, `${name} ${status}`).to.include(example.error.code);
        }
      }
    });

    it('links create operations to the operations on what they created', () => {
      const ids = new Set(operations().map(([, op]) => op.operationId as string));
      const links = doc.paths['/v1/workflows'].post.responses['201'].links;
      expect(links.getWorkflow).to.deep.equal({
        operationId: 'getWorkflow',
        parameters: { id: '$response.body#/id' },
      });
      for (const [name, op] of operations()) {
        for (const response of Object.values<Json>(op.responses))
          for (const link of Object.values<Json>(response.links ?? {}))
            expect(ids, `${name} → ${link.operationId}`).to.include(link.operationId);
      }
      for (const path of ['/v1/webhooks', '/v1/api-keys', '/v1/workflows/{id}/trigger'])
        expect(Object.values<Json>(doc.paths[path].post.responses)[0].links, path).to.exist;
    });
  });
});
