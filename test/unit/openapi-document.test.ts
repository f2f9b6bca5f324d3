/**
 * The OpenAPI document gives tools what they need (code generators, Schemathesis): an example for every request body
 * and every success response, each one valid for the schema that validates or describes it, and the
 * outbound events under the OpenAPI 3.1 `webhooks` object. Built in-process, as GET /v1/openapi.json
 * serves it.
 */
import { expect } from 'chai';
import type { z } from 'zod';
import { EVENT_KINDS } from '../../core/event-types';
import { apiRoutes, openApiDocument } from '../../src/app';
import { eventPayloadExample, eventPayloadSchema } from '../../src/api/schemas';
import { ERROR_CODES } from '../../platform/errors';

/** The document, walked as plain JSON. */
type Json = any;

const doc: Json = openApiDocument();
const operations = (): [string, Json][] =>
  Object.entries<Json>(doc.paths).flatMap(([path, methods]) =>
    Object.entries<Json>(methods).map(([method, op]): [string, Json] => [`${method} ${path}`, op]),
  );

describe('OpenAPI document examples and webhooks', () => {
  describe('examples', () => {
    it('gives every request body an example', () => {
      const withBody = operations().filter(([, op]) => op.requestBody);
      expect(withBody.length).to.be.at.least(10);
      for (const [name, op] of withBody)
        expect(op.requestBody.content['application/json'].example, name).to.exist;
    });

    it('gives every 2xx response with content an example', () => {
      let count = 0;
      for (const [name, op] of operations()) {
        for (const [status, response] of Object.entries<Json>(op.responses)) {
          if (!status.startsWith('2') || !response.content) continue;
          count++;
          expect(response.content['application/json'].example, `${name} ${status}`).to.exist;
        }
      }
      expect(count).to.be.greaterThan(20);
    });

    it('uses examples that the schemas accept', () => {
      for (const route of apiRoutes(openApiDocument)) {
        const name = `${route.method} ${route.path}`;
        const op = doc.paths[route.path][route.method];
        const body = op.requestBody?.content['application/json'];
        if (route.body) {
          const parsed = (route.body as z.ZodType).safeParse(body.example);
          expect(parsed.success, `${name} request: ${parsed.error?.message}`).to.equal(true);
        }
        for (const [status, spec] of Object.entries(route.responses)) {
          if (!spec.schema) continue;
          const parsed = spec.schema.safeParse(spec.example);
          expect(parsed.success, `${name} ${status}: ${parsed.error?.message}`).to.equal(true);
        }
      }
    });
  });

  describe('webhooks', () => {
    it('describes one outbound POST per event kind', () => {
      expect(Object.keys(doc.webhooks)).to.deep.equal([...EVENT_KINDS]);
      for (const kind of EVENT_KINDS) expect(doc.webhooks[kind].post.operationId, kind).to.be.a('string');
    });

    it('documents the Standard Webhooks headers as required on every event', () => {
      for (const kind of EVENT_KINDS) {
        const headers = (doc.webhooks[kind].post.parameters as Json[]).filter((p) => p.in === 'header');
        expect(
          headers.map((p) => [p.name, p.required]),
          kind,
        ).to.deep.equal([
          ['webhook-id', true],
          ['webhook-timestamp', true],
          ['webhook-signature', true],
        ]);
      }
    });

    it('describes the payload with the event fields and an example of the kind', () => {
      const payload = doc.components.schemas.EventPayload;
      expect(Object.keys(payload.properties)).to.deep.equal([
        'id',
        'event',
        'created_at',
        'execution_id',
        'workflow',
        'workflow_version',
        'status',
        'error',
        'output',
      ]);
      // `output` is in execution.completed only.
      expect(payload.required).to.have.members(
        Object.keys(payload.properties).filter((key) => key !== 'output'),
      );
      expect(payload.properties.event.enum).to.deep.equal([...EVENT_KINDS]);
      for (const kind of EVENT_KINDS) {
        const content = doc.webhooks[kind].post.requestBody.content['application/json'];
        expect(content.schema.$ref, kind).to.equal('#/components/schemas/EventPayload');
        expect(content.example.event, kind).to.equal(kind);
        expect(eventPayloadSchema.safeParse(content.example).success, kind).to.equal(true);
      }
      expect(eventPayloadExample('execution.failed').error).to.include({ step: 'crm' });
      expect(eventPayloadExample('execution.completed')).to.have.property('output');
    });

    it('documents the 2xx acknowledgement and the 410 that disables an endpoint', () => {
      for (const kind of EVENT_KINDS)
        expect(Object.keys(doc.webhooks[kind].post.responses), kind).to.deep.equal(['200', '410']);
    });
  });

  describe('semantic 400s (x-semantic-errors)', () => {
    const semantic = (op: Json): Json[] => op.responses?.['400']?.['x-semantic-errors'] ?? [];

    it('gives no cursor parameter an example: no fixed cursor is valid for every caller', () => {
      for (const [name, op] of operations())
        for (const param of op.parameters ?? [])
          if (param.name === 'cursor')
            expect(param.example ?? param.schema?.example, `${name} ?cursor`).to.equal(undefined);
    });

    it('lists the refused cursor among the 400s of every list', () => {
      const lists = operations().filter(([, op]) =>
        (op.parameters ?? []).some((p: Json) => p.name === 'cursor'),
      );
      expect(lists.length).to.be.at.least(7);
      for (const [name, op] of lists) {
        const cursor = semantic(op).find((e) => e.path === '/cursor');
        expect(cursor, name).to.include({ code: 'invalid_request' });
        expect(op.responses['400'].description, name).to.include(cursor.description);
      }
    });

    it('lists the definition checks on createWorkflow and saveWorkflowVersion', () => {
      for (const id of ['createWorkflow', 'saveWorkflowVersion']) {
        const [, op] = operations().find(([, o]) => o.operationId === id)!;
        const messages = semantic(op).map((e) => e.message as string);
        expect(
          messages.some((m) => m.includes('does not parse')),
          id,
        ).to.equal(true);
        expect(
          messages.some((m) => m.includes('duplicate (step|branch|case) id')),
          id,
        ).to.equal(true);
      }
    });

    it('lists an unresolvable webhook host on createWebhook', () => {
      const [, op] = operations().find(([, o]) => o.operationId === 'createWebhook')!;
      expect(semantic(op).map((e) => e.code)).to.include('invalid_webhook_url');
    });

    it('gives each one an error code, patterns that compile, and a description', () => {
      let count = 0;
      for (const [name, op] of operations())
        for (const error of semantic(op)) {
          count++;
          expect(ERROR_CODES, name).to.include(error.code);
          expect(() => new RegExp(`^(?:${error.path})$`), name).not.to.throw();
          expect(() => new RegExp(`^(?:${error.message})$`, 's'), name).not.to.throw();
          expect(error.description, name).to.be.a('string').and.not.equal('');
        }
      expect(count).to.be.at.least(20);
    });
  });
});
