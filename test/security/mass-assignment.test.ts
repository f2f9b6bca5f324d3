/**
 * OWASP API3, broken object property level authorization: mass assignment (a write endpoint refuses
 * fields it does not take, the server-owned ones above all: ids, keys, secrets, status, versions) and
 * excessive data exposure (responses hold only the fields the OpenAPI document declares, never sealed
 * values, hashes or workspace ids). Driven by the document: a new operation is covered automatically.
 */
import { expect } from 'chai';
import { waitForExecution } from '../support/fixtures';
import { Receiver } from '../support/receiver';
import type { TestService } from '../support/stack';
import {
  API,
  authenticated,
  expectErrorOf,
  fieldNamesOf,
  fillPath,
  INTERNAL_FIELD_NAMES,
  populate,
  populationPath,
  resolvedSchema,
  sampleBody,
  send,
  sharedService,
  undocumentedFields,
  type JsonSchema,
  type Operation,
  type Population,
} from './support';

/** Bodies that are the caller's own data (the input of an execution), checked against the workflow's input_schema. */
const FREE_FORM_BODIES = new Set(['triggerWorkflow', 'triggerHook']);

/** Server-owned fields a client might try to set, per operation. */
const SERVER_OWNED: Record<string, string[]> = {
  createApiKey: [
    'key',
    'id',
    'prefix',
    'workspace_id',
    'created_at',
    'last_used_at',
    'revoked_at',
    'key_hash',
  ],
  createWebhook: ['secret', 'id', 'status', 'workspace_id', 'created_at', 'sealed_secret'],
  createWorkflow: [
    'version',
    'latest_version',
    'created_at',
    'updated_at',
    'versions',
    'hook_secret',
    'workspace_id',
  ],
  saveWorkflowVersion: ['version', 'latest_version', 'created_at', 'versions', 'hook_secret', 'workspace_id'],
  retryExecution: ['execution_id', 'retried_from_step', 'status', 'workspace_id'],
  approveStep: ['decided_by', 'decision', 'status'],
  rejectStep: ['decided_by', 'decision', 'status'],
  putSecret: ['name', 'workspace_id', 'sealed', 'created_at'],
};

/** The objects a body may be: itself, each of its alternatives (one event or an array of them), an array's items. */
function objectSchemas(schema: JsonSchema): JsonSchema[] {
  const resolved = resolvedSchema(API, schema);
  const alternatives = resolved.anyOf ?? resolved.oneOf;
  if (alternatives) return alternatives.flatMap(objectSchemas);
  if (resolved.type === 'array' && resolved.items) return objectSchemas(resolved.items);
  return [resolved];
}

const BODY_ERRORS = ['invalid_request', 'invalid_definition'];
const writes = authenticated(API.operations).filter((op) => op.method === 'post' || op.method === 'put');

describe('security: mass assignment and data exposure @integration', function () {
  let service: TestService;
  let receiver: Receiver;
  let p: Population;
  before(async function () {
    this.timeout(120_000);
    service = await sharedService();
    receiver = await Receiver.start();
    p = await populate(service, receiver.url);
  });
  after(async () => receiver?.stop());

  /** A well-formed path whose ids exist nowhere: the body is all that can be wrong. */
  const path = (op: Operation) => fillPath(op, Object.fromEntries(op.pathParams.map((n) => [n, `${n}x`])));

  describe('the OpenAPI document', () => {
    for (const op of API.operations.filter((o) => o.body)) {
      const freeForm = FREE_FORM_BODIES.has(op.operationId);
      it(`${op.label} declares ${freeForm ? 'a free-form input object' : 'a body without additional properties'}`, () => {
        const schema = resolvedSchema(API, op.body!.schema);
        if (freeForm) expect(schema.properties, op.label).to.equal(undefined);
        else
          for (const object of objectSchemas(op.body!.schema))
            expect(object.additionalProperties, op.label).to.equal(false);
      });
    }
  });

  describe('unknown fields in request bodies', () => {
    for (const op of writes.filter((o) => o.body && !FREE_FORM_BODIES.has(o.operationId))) {
      it(`${op.label} refuses an unknown field with 400`, async () => {
        const body = { ...sampleBody(op), unexpected_field: true };
        const res = await send(service.url, op, { key: p.key, path: path(op), body });
        expectErrorOf(res, 400, BODY_ERRORS, op.label);
        expect(JSON.stringify(res.body.error.details)).to.include('unexpected_field');
      });

      for (const field of SERVER_OWNED[op.operationId] ?? []) {
        it(`${op.label} refuses the server-owned field "${field}"`, async () => {
          const body = { ...sampleBody(op), [field]: field === 'key' ? `sk_${'A'.repeat(40)}` : 'mine' };
          const res = await send(service.url, op, { key: p.key, path: path(op), body });
          expectErrorOf(res, 400, BODY_ERRORS, `${op.label} with ${field}`);
        });
      }
    }

    for (const op of writes.filter((o) => !o.body)) {
      it(`${op.label}, which takes no body, refuses one with fields (400)`, async () => {
        const res = await send(service.url, op, {
          key: p.key,
          path: path(op),
          body: { unexpected_field: true },
        });
        expectErrorOf(res, 400, ['invalid_request'], op.label);
        expect(JSON.stringify(res.body.error.details)).to.include('unexpected_field');
      });

      it(`${op.label} still accepts an empty object`, async () => {
        const res = await send(service.url, op, { key: p.key, path: path(op), body: {} });
        expect(res.status, JSON.stringify(res.body)).to.equal(404);
      });
    }

    it('refuses unknown fields deep inside a workflow definition', async () => {
      const op = API.operations.find((o) => o.operationId === 'createWorkflow')!;
      const body = sampleBody(op) as { steps: Record<string, unknown>[] };
      body.steps[0]!['run_as'] = 'admin';
      const res = await send(service.url, op, { key: p.key, body });
      expectErrorOf(res, 400, ['invalid_definition'], 'nested');
      expect(res.body.error.details[0].path).to.equal('/steps/0');
    });
  });

  describe('responses', () => {
    /**
     * Everything that must never be in a response body: the workspace's id included, but in the answer
     * that is about the workspace itself (GET /v1/workspace).
     */
    const forbidden = (op: Operation) => [
      ...(op.operationId === 'getWorkspace' ? [] : [p.workspaceId]),
      p.webhookSecret,
      p.hookSecret,
      p.apiKey,
      p.key,
      p.secretValue,
    ];

    function expectExposesNothing(op: Operation, status: string, body: unknown, text: string): void {
      expect(
        undocumentedFields(API, op.responses[status], body),
        `${op.label}: fields the document does not declare`,
      ).to.deep.equal([]);
      const names = fieldNamesOf(body);
      for (const name of INTERNAL_FIELD_NAMES)
        expect(names, `${op.label}: field ${name}`).not.to.include(name);
      for (const value of forbidden(op)) expect(text, op.label).not.to.include(value);
    }

    for (const op of authenticated(API.operations).filter((o) => o.method === 'get')) {
      it(`${op.label} answers only documented fields, nothing internal`, async () => {
        const res = await send(service.url, op, { key: p.key, path: fillPath(op, populationPath(op, p)) });
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        expect(JSON.stringify(res.body)).not.to.equal('{"data":[],"next_cursor":null}');
        expectExposesNothing(op, '200', res.body, res.text);
      });
    }

    /** A new execution waiting for approval: approve, reject and cancel each use one up. */
    async function freshWaiting(): Promise<string> {
      const res = await service
        .api(p.key)
        .post(`/v1/workflows/${p.approvalWorkflowId}/trigger`, {})
        .expect(202);
      const id = res.body.execution_id as string;
      await waitForExecution(service.api(p.key), id, (e) => e.status === 'waiting');
      return id;
    }

    for (const op of writes) {
      const documented = Object.entries(op.responses).find(
        ([status, schema]) => status.startsWith('2') && schema,
      );
      if (!documented) continue;
      const [status] = documented;
      it(`${op.label} answers ${status} with only documented fields, nothing internal`, async () => {
        const values = populationPath(op, p);
        if (['approveStep', 'rejectStep', 'cancelExecution'].includes(op.operationId))
          values['id'] = await freshWaiting();
        const res = await send(service.url, op, { key: p.key, path: fillPath(op, values) });
        expect(res.status, JSON.stringify(res.body)).to.equal(Number(status));
        expectExposesNothing(op, status, res.body, res.text);
      });
    }
  });
});
