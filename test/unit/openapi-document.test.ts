/**
 * The OpenAPI document gives tools what they need (issue 11 point 3): an example for every request body
 * and every success response, each one valid for the schema that validates or describes it, and the
 * outbound events under the OpenAPI 3.1 `webhooks` object. Built in-process, as GET /v1/openapi.json
 * serves it.
 */
import { expect } from 'chai';
import type { z } from 'zod';
import { EVENT_KINDS } from '../../core/event-types';
import { apiRoutes, openApiDocument } from '../../src/app';
import { eventPayloadExample, eventPayloadSchema } from '../../src/api/schemas';

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
      ]);
      expect(payload.required).to.have.members(Object.keys(payload.properties));
      expect(payload.properties.event.enum).to.deep.equal([...EVENT_KINDS]);
      for (const kind of EVENT_KINDS) {
        const content = doc.webhooks[kind].post.requestBody.content['application/json'];
        expect(content.schema.$ref, kind).to.equal('#/components/schemas/EventPayload');
        expect(content.example.event, kind).to.equal(kind);
        expect(eventPayloadSchema.safeParse(content.example).success, kind).to.equal(true);
      }
      expect(eventPayloadExample('execution.failed').error).to.include({ step: 'crm' });
    });

    it('documents the 2xx acknowledgement and the 410 that disables an endpoint', () => {
      for (const kind of EVENT_KINDS)
        expect(Object.keys(doc.webhooks[kind].post.responses), kind).to.deep.equal(['200', '410']);
    });
  });
});
