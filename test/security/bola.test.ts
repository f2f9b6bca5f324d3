/**
 * OWASP API1, broken object level authorization (docs/api.md#authentication-and-scopes): workspace B's admin
 * key, given workspace A's ids, gets 404 with the contract's code from every operation of the OpenAPI
 * document that takes a path id (exactly the answer an id that exists nowhere gets, so existence is never
 * revealed), never sees A's objects in a list (nor through A's cursors), and changes nothing in A.
 */
import { expect } from 'chai';
import request from 'supertest';
import { randomBase62 } from '../../platform/ids';
import { signatureHeader } from '../../src/inbound-hooks/signature';
import { readSecretValues } from '../../platform/store/secrets';
import { Receiver } from '../support/receiver';
import type { TestService } from '../support/stack';
import { waitFor } from '../support/wait';
import {
  API,
  authenticated,
  expectErrorOf,
  fillPath,
  populate,
  populationPath,
  resourceOf,
  send,
  sharedService,
  type Population,
} from './support';

/** The 404 code of each resource with ids (docs/api.md#errors). */
const NOT_FOUND_CODE: Record<string, string> = {
  'api-keys': 'api_key_not_found',
  workflows: 'workflow_not_found',
  executions: 'execution_not_found',
  webhooks: 'webhook_not_found',
  secrets: 'not_found',
  events: 'event_not_found',
  'bulk-operations': 'bulk_operation_not_found',
};

/**
 * Operations that create or replace by a caller-chosen name inside the caller's own workspace: the call
 * writes the caller's own object of that name (checked below to leave A's untouched), it cannot reach
 * A's. A third workspace C makes these calls, so B's other calls never find an object of its own.
 */
const OWN_NAMESPACE = new Set(['putSecret']);

const withPathIds = authenticated(API.operations).filter((op) => op.pathParams.length > 0);
const lists = authenticated(API.operations).filter((op) => op.method === 'get' && op.pathParams.length === 0);
/** The lists among them, which page with a cursor. */
const paged = lists.filter((op) => op.queryParams.includes('cursor'));

/** An id of the same shape that exists nowhere (step ids are not objects of a workspace: kept). */
function twinOf(values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(values).map(([name, value]) => [
      name,
      name === 'step_id' ? value : `${value.slice(0, -4)}${randomBase62(4).toLowerCase()}`,
    ]),
  );
}

/** The error with the ids replaced by their parameter names, and without the request id. */
function normalised(res: request.Response, values: Record<string, string>) {
  const error = (res.body as { error: { code: string; message: string; details: unknown } }).error;
  let text = JSON.stringify({ code: error.code, message: error.message, details: error.details });
  for (const [name, value] of Object.entries(values)) text = text.split(value).join(`{${name}}`);
  return { status: res.status, error: JSON.parse(text) as unknown };
}

describe('security: object level authorization (BOLA) @integration', function () {
  let service: TestService;
  let receiver: Receiver;
  let a: Population;
  let b: { workspaceId: string; key: string };
  let c: { workspaceId: string; key: string };
  /** A's ids and its workspace id: none may appear in anything B reads. */
  let aIds: string[];

  before(async function () {
    this.timeout(120_000);
    service = await sharedService();
    receiver = await Receiver.start();
    a = await populate(service, receiver.url);
    b = await service.newWorkspace(['admin']);
    c = await service.newWorkspace(['admin']);
    aIds = [
      a.workspaceId,
      a.apiKeyId,
      a.secretName,
      a.workflowId,
      a.approvalWorkflowId,
      a.failingWorkflowId,
      a.scheduledWorkflowId,
      a.hookWorkflowId,
      a.queuedWorkflowId,
      a.queued,
      a.succeeded,
      a.waiting,
      a.failed,
      a.webhookId,
      a.deliveryId,
      a.eventId,
      a.sentEventId,
    ];
  });
  after(async () => receiver?.stop());

  it('covers operations with path ids on every resource', () => {
    expect(new Set(withPathIds.map(resourceOf))).to.deep.equal(new Set(Object.keys(NOT_FOUND_CODE)));
  });

  describe("another workspace's ids", () => {
    for (const op of withPathIds) {
      if (OWN_NAMESPACE.has(op.operationId)) {
        it(`${op.label} writes in the caller's own workspace, never in A's`, async () => {
          const res = await send(service.url, op, { key: c.key, path: fillPath(op, populationPath(op, a)) });
          expect(res.status, JSON.stringify(res.body)).to.be.within(200, 299);
        });
        continue;
      }
      it(`${op.label} answers 404 ${NOT_FOUND_CODE[resourceOf(op)] ?? '(unknown resource)'}, as for an id that exists nowhere`, async () => {
        const code = NOT_FOUND_CODE[resourceOf(op)];
        expect(code, `${op.label}: add its resource to NOT_FOUND_CODE`).to.be.a('string');
        const values = populationPath(op, a);
        const res = await send(service.url, op, { key: b.key, path: fillPath(op, values) });
        expectErrorOf(res, 404, [code!], op.label);
        const twin = twinOf(values);
        const unknown = await send(service.url, op, { key: b.key, path: fillPath(op, twin) });
        expect(normalised(res, values), 'the same answer as for an unknown id').to.deep.equal(
          normalised(unknown, twin),
        );
      });
    }

    it("answers 404 not_found for A's delivery id under B's own webhook", async () => {
      const own = await service
        .api(b.key)
        .post('/v1/webhooks', { url: `${receiver.url}/b`, events: ['execution.completed'] })
        .expect(201);
      expectErrorOf(
        await service.api(b.key).post(`/v1/webhooks/${own.body.id}/deliveries/${a.deliveryId}/retry`),
        404,
        ['not_found'],
        'redelivery',
      );
    });
  });

  describe('lists', () => {
    for (const op of lists) {
      it(`${op.label} shows B nothing of A`, async () => {
        const res = await send(service.url, op, { key: b.key });
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        for (const id of aIds) expect(res.text, `${op.label} shows ${id}`).not.to.include(id);
      });
    }

    it("finds none of A's executions by A's workflow id", async () => {
      const res = await service.api(b.key).get(`/v1/executions?workflow=${a.workflowId}`).expect(200);
      expect(res.body.data).to.deep.equal([]);
    });

    for (const op of paged) {
      it(`${op.label} refuses A's cursor to B (400 invalid_request), showing nothing of A`, async () => {
        const first = await waitFor(
          async () => {
            const res = await send(service.url, op, { key: a.key, query: 'limit=1' });
            expect(res.status, JSON.stringify(res.body)).to.equal(200);
            return (res.body as { next_cursor: string | null }).next_cursor ?? undefined;
          },
          { what: `a second page of ${op.label} in A` },
        );
        const res = await send(service.url, op, {
          key: b.key,
          query: `limit=1&cursor=${encodeURIComponent(first)}`,
        });
        expectErrorOf(res, 400, ['invalid_request'], op.label);
        for (const id of aIds) expect(res.text).not.to.include(id);
      });
    }
  });

  describe('after all of that', () => {
    it("A's API key still works and is not revoked", async () => {
      await service.api(a.apiKey).get('/v1/workflows').expect(200);
      const keys = await service.api(a.key).get('/v1/api-keys?limit=100').expect(200);
      const key = (keys.body.data as { id: string; revoked_at: string | null }[]).find(
        (k) => k.id === a.apiKeyId,
      );
      expect(key?.revoked_at).to.equal(null);
    });

    it("A's workflows are all there, still at version 1", async () => {
      for (const id of [a.workflowId, a.approvalWorkflowId, a.failingWorkflowId, a.hookWorkflowId]) {
        const res = await service.api(a.key).get(`/v1/workflows/${id}`).expect(200);
        expect(res.body.latest_version, id).to.equal(1);
      }
    });

    it("A's hook secret was not rotated", async () => {
      const body = '{}';
      const res = await request(service.url)
        .post(`/v1/hooks/${a.hookWorkflowId}`)
        .set('Content-Type', 'application/json')
        .set('X-Service-Signature', signatureHeader(a.hookSecret, body, Math.floor(Date.now() / 1000)))
        .send(body);
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
    });

    it("A's executions kept their status (nothing canceled, decided or retried)", async () => {
      const status = async (id: string) =>
        ((await service.api(a.key).get(`/v1/executions/${id}`).expect(200)).body as { status: string })
          .status;
      expect(await status(a.waiting)).to.equal('waiting');
      expect(await status(a.failed)).to.equal('failed');
      expect(await status(a.succeeded)).to.equal('success');
    });

    it("A's webhook is there and its delivery was not sent again", async () => {
      await service.api(a.key).get(`/v1/webhooks/${a.webhookId}`).expect(200);
      const res = await service.api(a.key).get(`/v1/webhooks/${a.webhookId}/deliveries`).expect(200);
      const delivery = (res.body.data as { id: string; attempts: unknown[] }[]).find(
        (d) => d.id === a.deliveryId,
      );
      expect(delivery?.attempts).to.have.length(1);
    });

    it("A's secret kept its value; C's PUT wrote C's own secret", async () => {
      const { db, cipher } = service.runtime.services;
      expect(await readSecretValues(db, cipher, a.workspaceId, [a.secretName])).to.deep.equal({
        [a.secretName]: a.secretValue,
      });
      const mine = await service.api(c.key).get('/v1/secrets').expect(200);
      expect((mine.body.data as { name: string }[]).map((s) => s.name)).to.include(a.secretName);
    });
  });
});
