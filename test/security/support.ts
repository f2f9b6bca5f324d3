/**
 * Shared by the security suites (OWASP API Top 10): the operations of the served OpenAPI document (so a
 * new endpoint is covered without touching the suites), sample request bodies, a workspace holding one
 * of every resource, and checks for headers, stack traces and undocumented response fields.
 */
import net from 'node:net';
import { expect } from 'chai';
import request from 'supertest';
import { openApiDocument } from '../../src/app';
import { listeningPort } from '../../platform/net/listening-port';
import type { Scope } from '../../platform/store/api-keys';
import { definition, rulesStep, uniqueId, waitForExecution } from '../support/fixtures';
import { capturingLogger } from '../support/log-capture';
import { startTestService, type TestService } from '../support/stack';
import { waitFor } from '../support/wait';

export type Method = 'get' | 'post' | 'put' | 'delete';

/**
 * Everything the shared service logged, at trace level: the suites search it for keys and secrets. (The
 * Temporal SDK's own logs go to the logger of the process's first service: this one when the security
 * suites run on their own.)
 */
export const suiteLogs = capturingLogger();

let shared: Promise<TestService> | undefined;

/**
 * The service the suites share (each start costs seconds): API and worker with private destinations
 * allowed (the test receivers listen on 127.0.0.1), logging everything at trace level into suiteLogs,
 * retrying webhook deliveries after 1 s. Each suite works in workspaces of its own.
 */
export function sharedService(): Promise<TestService> {
  shared ??= startTestService({
    logger: suiteLogs.logger,
    env: { LOG_LEVEL: 'trace', WEBHOOK_RETRY_SCHEDULE: '1' },
  });
  return shared;
}

/**
 * Stops the shared service, if one started (root-hooks.ts, after all the suites of a run, or of a file
 * when files run in parallel processes: the next file of the process then starts its own).
 */
export async function stopSharedService(): Promise<void> {
  const service = shared;
  shared = undefined;
  await service?.then(
    (started) => started.stop(),
    () => undefined,
  );
}

/** A JSON Schema as the OpenAPI document holds it (loosely typed: only what the checks read). */
export interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
  propertyNames?: JsonSchema;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  required?: string[];
}

export interface Operation {
  method: Method;
  /** The OpenAPI path, e.g. /v1/workflows/{id}. */
  path: string;
  operationId: string;
  /** x-required-scope, or 'none' for the operations without authentication. */
  scope: Scope | 'none';
  pathParams: string[];
  /** Its query parameters' names (a list's `cursor` among them). */
  queryParams: string[];
  /** The request body, when the operation takes one. */
  body?: { required: boolean; schema: JsonSchema };
  /** Response schemas by status. */
  responses: Record<string, JsonSchema | undefined>;
  /** "GET /v1/workflows/{id} (getWorkflow)", for messages. */
  label: string;
}

export interface ApiDocument {
  document: {
    paths: Record<string, Record<string, unknown>>;
    components?: { schemas?: Record<string, JsonSchema> };
  };
  operations: Operation[];
}

interface RawOperation {
  operationId: string;
  'x-required-scope'?: Scope;
  security?: unknown[];
  parameters?: { in: string; name: string }[];
  requestBody?: { required?: boolean; content: { 'application/json': { schema: JsonSchema } } };
  responses: Record<string, { content?: { 'application/json'?: { schema: JsonSchema } } }>;
}

/** The operations of an OpenAPI document. */
export function parseOperations(document: ApiDocument['document']): ApiDocument {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, raw] of Object.entries(item as Record<string, RawOperation>)) {
      if (!['get', 'post', 'put', 'delete'].includes(method)) {
        throw new Error(
          `${method.toUpperCase()} ${path}: the security suites know get, post, put, delete only`,
        );
      }
      const unauthenticated = Array.isArray(raw.security) && raw.security.length === 0;
      const scope = raw['x-required-scope'];
      if (!unauthenticated && !scope)
        throw new Error(`${method} ${path} has neither security: [] nor x-required-scope`);
      const body = raw.requestBody?.content['application/json'].schema;
      operations.push({
        method: method as Method,
        path,
        operationId: raw.operationId,
        scope: unauthenticated ? 'none' : scope!,
        pathParams: (raw.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name),
        queryParams: (raw.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
        ...(body ? { body: { required: raw.requestBody?.required ?? false, schema: body } } : {}),
        responses: Object.fromEntries(
          Object.entries(raw.responses).map(([status, r]) => [
            status,
            r.content?.['application/json']?.schema,
          ]),
        ),
        label: `${method.toUpperCase()} ${path} (${raw.operationId})`,
      });
    }
  }
  return { document, operations };
}

/**
 * The document of this build, read in-process so the suites can declare one test per operation; the
 * scopes suite checks that the service serves exactly this document at GET /v1/openapi.json.
 */
export const API: ApiDocument = parseOperations(openApiDocument() as ApiDocument['document']);

export const authenticated = (operations: Operation[]): Operation[] =>
  operations.filter((op) => op.scope !== 'none');

/** The resource an operation acts on: the path segment after /v1 ("workflows", "api-keys", ...). */
export const resourceOf = (op: Operation): string => op.path.split('/')[2] ?? '';

/** /v1/workflows/{id} with the given values (every path parameter must have one). */
export function fillPath(op: Operation, values: Record<string, string>): string {
  return op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`${op.label}: no value for the path parameter {${name}}`);
    return encodeURIComponent(value);
  });
}

/** The same placeholder in every path parameter: the operation answers whatever it answers for an unknown id. */
export function placeholderPath(op: Operation, placeholder = 'x'): string {
  return fillPath(op, Object.fromEntries(op.pathParams.map((name) => [name, placeholder])));
}

/**
 * A valid body per operation that takes one, so an answer is never a body error by accident. A new
 * operation with a body fails the suites here until it gets a sample.
 */
const SAMPLE_BODIES: Record<string, () => unknown> = {
  createApiKey: () => ({ name: 'security-suite', scopes: ['read'] }),
  createWorkflow: () => definition([rulesStep('a', [{ when: 'true', output: 1 }])]),
  saveWorkflowVersion: () => ({
    name: 'Next version',
    steps: [rulesStep('a', [{ when: 'true', output: 2 }])],
  }),
  triggerWorkflow: () => ({}),
  pauseSchedule: () => ({ note: 'security suite' }),
  backfillSchedule: () => ({
    start: new Date(Date.now() - 3_600_000).toISOString(),
    end: new Date().toISOString(),
  }),
  retryExecution: () => ({}),
  approveStep: () => ({ comment: 'security suite' }),
  rejectStep: () => ({ comment: 'security suite' }),
  putSecret: () => ({ value: 'security-suite-value' }),
  createWebhook: () => ({ url: 'https://example.com/hook', events: ['execution.completed'] }),
  triggerHook: () => ({}),
  sendEvents: () => ({ name: 'security.suite', data: { n: 1 } }),
  // A dry run: counts and changes nothing, so the suites may send it as often as they like.
  createBulkOperation: () => ({
    action: 'cancel',
    filter: { execution_ids: ['ex_securitysuite'] },
    dry_run: true,
  }),
};

export function sampleBody(op: Operation): Record<string, unknown> | undefined {
  if (!op.body) return undefined;
  const make = SAMPLE_BODIES[op.operationId];
  if (!make)
    throw new Error(`${op.label}: no sample body; add one to SAMPLE_BODIES in test/security/support.ts`);
  return make() as Record<string, unknown>;
}

export interface SendOptions {
  path?: string;
  key?: string;
  /** A body to send; by default the operation's sample body (none without a request body). */
  body?: unknown;
  query?: string;
  headers?: Record<string, string>;
}

/** Calls an operation. */
export function send(url: string, op: Operation, options: SendOptions = {}): request.Test {
  const path = options.path ?? placeholderPath(op);
  let test = request(url)[op.method](`${path}${options.query ? `?${options.query}` : ''}`);
  if (options.key) test = test.set('Authorization', `Bearer ${options.key}`);
  for (const [name, value] of Object.entries(options.headers ?? {})) test = test.set(name, value);
  const body = 'body' in options ? options.body : sampleBody(op);
  return body === undefined ? test : test.send(body as object);
}

/** Every string in a structure (decoding byte arrays: Temporal payload data), as one text to search. */
export function textOf(value: unknown): string {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(textOf).join('\n');
  if (typeof value === 'object' && value !== null) return Object.values(value).map(textOf).join('\n');
  return String(value);
}

/** The whole Temporal history of a workflow (an execution or a delivery) as text. */
export async function historyText(service: TestService, workflowId: string): Promise<string> {
  const history = await service.runtime.services.temporal.client.workflow
    .getHandle(workflowId)
    .fetchHistory();
  return textOf(history.events);
}

/** The ids of the delivery workflows (and redeliveries) this service's worker ran. */
export async function deliveryWorkflowIds(service: TestService): Promise<string[]> {
  const ids: string[] = [];
  const query = `WorkflowType = 'delivery' AND TaskQueue = '${service.config.temporal.taskQueue}'`;
  for await (const workflow of service.runtime.services.temporal.client.workflow.list({ query })) {
    ids.push(workflow.workflowId);
  }
  return ids;
}

export const SECURITY_HEADERS: Record<string, RegExp> = {
  'x-content-type-options': /^nosniff$/,
  'x-frame-options': /^DENY$/,
  'content-security-policy': /default-src 'none'/,
  'referrer-policy': /^no-referrer$/,
  'cache-control': /\bno-store\b/,
  'strict-transport-security': /max-age=\d{8,}/,
};

export function expectSecurityHeaders(res: request.Response, what: string): void {
  for (const [name, pattern] of Object.entries(SECURITY_HEADERS)) {
    expect(res.headers[name], `${what} (${res.status}): header ${name}`).to.match(pattern);
  }
}

/** Stack frames, source positions and file system paths: none may reach a response body. */
const INTERNALS = [
  /\n\s*at\s/,
  /\bat \S+ \(/,
  /[\w/\\.-]+\.(?:ts|js):\d+(?::\d+)?/,
  /node_modules/,
  /\bstack\b["']?\s*:/,
];

export function expectNoInternals(res: request.Response, what: string): void {
  const text = res.text ?? '';
  for (const pattern of INTERNALS)
    expect(text, `${what} (${res.status}) matches ${pattern}`).not.to.match(pattern);
  expect(text, `${what}: the project's path`).not.to.include(process.cwd());
}

/** Contract error body of this status (any of the codes). */
export function expectErrorOf(res: request.Response, status: number, codes: string[], what: string): void {
  const body = res.body as {
    error?: { code?: string; message?: string; request_id?: string; details?: unknown };
  };
  expect(res.status, `${what}: ${JSON.stringify(res.body)}`).to.equal(status);
  expect(codes, `${what}: ${JSON.stringify(res.body)}`).to.include(body.error?.code);
  expect(body.error?.message, what).to.be.a('string').and.not.equal('');
  expect(body.error?.request_id, what).to.be.a('string').and.not.equal('');
  expect(body.error?.details, what).to.be.an('array');
}

function resolve(doc: ApiDocument['document'], schema: JsonSchema): JsonSchema {
  let current = schema;
  for (let depth = 0; current.$ref && depth < 20; depth++) {
    const name = current.$ref.replace('#/components/schemas/', '');
    const target = doc.components?.schemas?.[name];
    if (!target) throw new Error(`Unresolvable $ref ${current.$ref}`);
    current = target;
  }
  return current;
}

/** The resolved schema of an operation's request body, with $refs followed at the top. */
export function resolvedSchema(api: ApiDocument, schema: JsonSchema): JsonSchema {
  return resolve(api.document, schema);
}

/**
 * JSON pointers of fields in `value` that its documented schema does not declare (excessive data
 * exposure): objects with declared `properties` and no `additionalProperties` may hold those only.
 */
export function undocumentedFields(
  api: ApiDocument,
  schema: JsonSchema | undefined,
  value: unknown,
  at = '',
): string[] {
  if (!schema) return [];
  const s = resolve(api.document, schema);
  const alternatives = s.anyOf ?? s.oneOf;
  if (alternatives) {
    const results = alternatives.map((alt) => undocumentedFields(api, alt, value, at));
    return results.reduce((best, r) => (r.length < best.length ? r : best));
  }
  if (s.allOf) {
    const merged: JsonSchema = { properties: {} };
    for (const part of s.allOf.map((p) => resolve(api.document, p)))
      Object.assign(merged.properties!, part.properties);
    return undocumentedFields(api, merged, value, at);
  }
  if (Array.isArray(value)) {
    return value.flatMap((item, i) => undocumentedFields(api, s.items, item, `${at}/${i}`));
  }
  if (typeof value !== 'object' || value === null) return [];
  const problems: string[] = [];
  for (const [key, child] of Object.entries(value)) {
    const declared = s.properties?.[key];
    if (declared) problems.push(...undocumentedFields(api, declared, child, `${at}/${key}`));
    else if (typeof s.additionalProperties === 'object')
      problems.push(...undocumentedFields(api, s.additionalProperties, child, `${at}/${key}`));
    else if (s.properties && s.additionalProperties !== true) problems.push(`${at}/${key}`);
  }
  return problems;
}

/** Field names that would mean an internal value leaked into a response. */
export const INTERNAL_FIELD_NAMES = [
  'sealed',
  'sealed_secret',
  'key_hash',
  'hash',
  'workspace_id',
  'password',
];

export function fieldNamesOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(fieldNamesOf);
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, child]) => [key, ...fieldNamesOf(child)]);
}

/** A workspace holding one of every resource, in every interesting state. */
export interface Population {
  workspaceId: string;
  /** The workspace's admin key. */
  key: string;
  /** A read key created through the API (its id is an API key resource). */
  apiKeyId: string;
  apiKey: string;
  secretName: string;
  secretValue: string;
  workflowId: string;
  approvalWorkflowId: string;
  failingWorkflowId: string;
  /** A workflow with a schedule trigger, for the schedule endpoints. */
  scheduledWorkflowId: string;
  hookWorkflowId: string;
  hookSecret: string;
  /** A workflow with `concurrency` (limit 1): one run waiting for approval holds its place, one is queued. */
  queuedWorkflowId: string;
  /** The run queued behind it. */
  queued: string;
  succeeded: string;
  waiting: string;
  failed: string;
  /** A succeeded execution of a workflow whose step MAP_STEP is a map (its runs are a resource). */
  mapped: string;
  webhookId: string;
  webhookSecret: string;
  deliveryId: string;
  eventId: string;
  /** An event the workspace sent (POST /v1/events), with another after it (a second page). */
  sentEventId: string;
  /** A bulk operation (a cancel of the succeeded execution: it skips it), with another (a second page). */
  bulkOperationId: string;
}

/** The approval step id of `approvalWorkflowId`. */
export const APPROVAL_STEP = 'review';
/** The map step of the population's `mapped` execution. */
export const MAP_STEP = 'each';

/**
 * Creates the population in a new workspace: an API key, two secrets, four workflows (one with a webhook
 * trigger), a succeeded, a waiting (approval) and a failed execution, two webhook endpoints (at
 * `receiverUrl`, which must answer 2xx), the first with a succeeded delivery, and two events; and a workflow
 * with `concurrency` whose one place a run waiting for approval holds, with a run queued behind it.
 */
export async function populate(service: TestService, receiverUrl: string): Promise<Population> {
  const { workspaceId, key } = await service.newWorkspace(['admin']);
  const api = service.api(key);
  const created = async (path: string, body: unknown, status = 201) => {
    const res = await api.post(path, body);
    expect(res.status, `${path}: ${JSON.stringify(res.body)}`).to.equal(status);
    return res.body as Record<string, string>;
  };
  const apiKey = await created('/v1/api-keys', { name: 'fixture', scopes: ['read'] });
  const secretName = 'FIXTURE_SECRET';
  const secretValue = `fixture-${uniqueId('value')}`;
  await api.put(`/v1/secrets/${secretName}`, { value: secretValue }).expect(204);
  // Two of every listed resource, so each list has a second page (a cursor) to try in another workspace.
  await api.put(`/v1/secrets/${secretName}_2`, { value: secretValue }).expect(204);
  await created('/v1/webhooks', {
    url: `${receiverUrl}/population-2/${uniqueId('ep')}`,
    events: ['execution.canceled'],
  });
  const webhook = await created('/v1/webhooks', {
    url: `${receiverUrl}/population/${uniqueId('ep')}`,
    events: ['execution.completed', 'execution.failed'],
  });
  const workflowId = (
    await created('/v1/workflows', definition([rulesStep('a', [{ when: 'true', output: 1 }])]))
  ).id!;
  const approvalWorkflowId = (
    await created('/v1/workflows', definition([{ id: APPROVAL_STEP, kind: 'approval' }]))
  ).id!;
  const failingWorkflowId = (
    await created(
      '/v1/workflows',
      definition([rulesStep('gate', [{ when: 'true', action: 'fail', message: 'no' }])]),
    )
  ).id!;
  // Weekdays at 09:00 in Paris: its schedule's endpoints have a schedule to act on.
  const scheduledWorkflowId = (
    await created(
      '/v1/workflows',
      definition([rulesStep('a', [{ when: 'true', output: 1 }])], {
        trigger: { type: 'schedule', cron: '0 9 * * 1-5', timezone: 'Europe/Paris' },
      }),
    )
  ).id!;
  const hook = await created(
    '/v1/workflows',
    definition([rulesStep('a', [{ when: 'true', output: 1 }])], {
      trigger: { type: 'webhook' },
    }),
  );
  const mapWorkflowId = (
    await created(
      '/v1/workflows',
      definition([
        {
          id: MAP_STEP,
          kind: 'map',
          items: '[1, 2]',
          steps: [rulesStep('m', [{ when: 'true', output: 1 }])],
        },
      ] as never),
    )
  ).id!;
  const queuedWorkflowId = (
    await created(
      '/v1/workflows',
      definition([{ id: APPROVAL_STEP, kind: 'approval' }], { concurrency: { limit: 1 } }),
    )
  ).id!;
  const start = async (id: string) => (await created(`/v1/workflows/${id}/trigger`, {}, 202)).execution_id!;
  // One after the other: the first takes the place, the second queues behind it.
  const placeHolder = await start(queuedWorkflowId);
  await waitForExecution(api, placeHolder, (e) => e.status === 'waiting');
  const queued = await start(queuedWorkflowId);
  await waitForExecution(api, queued, (e) => e.status === 'queued');
  const [succeeded, waiting, failed, mapped] = await Promise.all([
    start(workflowId),
    start(approvalWorkflowId),
    start(failingWorkflowId),
    start(mapWorkflowId),
  ]);
  await Promise.all([
    waitForExecution(api, succeeded, (e) => e.status === 'success'),
    waitForExecution(api, waiting, (e) => e.status === 'waiting'),
    waitForExecution(api, failed, (e) => e.status === 'failed'),
    waitForExecution(api, mapped, (e) => e.status === 'success'),
  ]);
  const [sentEventId] = (
    await created(
      '/v1/events',
      [
        { name: 'population.event', data: { n: 1 }, id: uniqueId('evt') },
        { name: 'population.event', data: { n: 2 }, id: uniqueId('evt') },
      ],
      202,
    )
  ).ids as unknown as string[];
  // Two bulk operations that act on nothing (a finished execution does not qualify for a cancel).
  const operations: string[] = [];
  for (let i = 0; i < 2; i++)
    operations.push(
      (
        await created(
          '/v1/bulk-operations',
          { action: 'cancel', filter: { execution_ids: [succeeded] } },
          202,
        )
      ).id!,
    );
  const delivery = await waitFor(
    async () => {
      const res = await api.get(`/v1/webhooks/${webhook.id}/deliveries`).expect(200);
      const list = res.body.data as { id: string; event_id: string; status: string }[];
      return list.find((d) => d.status === 'succeeded');
    },
    { what: 'a succeeded delivery of the population webhook' },
  );
  return {
    workspaceId,
    key,
    apiKeyId: apiKey.id!,
    apiKey: apiKey.key!,
    secretName,
    secretValue,
    workflowId,
    approvalWorkflowId,
    failingWorkflowId,
    scheduledWorkflowId,
    hookWorkflowId: hook.id!,
    hookSecret: hook.hook_secret!,
    queuedWorkflowId,
    queued,
    succeeded,
    waiting,
    failed,
    mapped,
    webhookId: webhook.id!,
    webhookSecret: webhook.secret!,
    deliveryId: delivery.id,
    eventId: delivery.event_id,
    sentEventId: sentEventId!,
    bulkOperationId: operations[0]!,
  };
}

/**
 * The population's id for each path parameter of an operation: the most telling one (retry gets the
 * failed execution, approve the waiting one, ...). A new resource or parameter fails here until mapped.
 */
export function populationPath(op: Operation, p: Population): Record<string, string> {
  const byResource: Record<string, Record<string, string>> = {
    'api-keys': { id: p.apiKeyId },
    workflows: {
      id:
        op.operationId === 'rotateHookSecret'
          ? p.hookWorkflowId
          : op.operationId === 'getWorkflowQueue'
            ? p.queuedWorkflowId
            : op.path.includes('/schedule')
              ? p.scheduledWorkflowId
              : p.workflowId,
    },
    executions: {
      id:
        op.operationId === 'retryExecution'
          ? p.failed
          : op.operationId === 'getExecution'
            ? p.succeeded
            : op.operationId === 'listStepRuns'
              ? p.mapped
              : p.waiting,
      step_id: op.operationId === 'listStepRuns' ? MAP_STEP : APPROVAL_STEP,
    },
    secrets: { name: p.secretName },
    webhooks: { id: p.webhookId, delivery_id: p.deliveryId },
    hooks: { workflow: p.hookWorkflowId },
    events: { id: p.sentEventId },
    'bulk-operations': { id: p.bulkOperationId },
    // The caller's own workspace: no id in the path.
    workspace: {},
  };
  const known = byResource[resourceOf(op)];
  if (!known)
    throw new Error(`${op.label}: unknown resource; map it in populationPath (test/security/support.ts)`);
  const values: Record<string, string> = {};
  for (const name of op.pathParams) {
    const value = known[name];
    if (value === undefined)
      throw new Error(`${op.label}: no population id for {${name}}; map it in populationPath`);
    values[name] = value;
  }
  return values;
}

/** A TCP listener that only counts connections: proof that nothing reached a local address. */
export class ConnectionTrap {
  connections = 0;
  private readonly server = net.createServer((socket) => {
    this.connections += 1;
    socket.destroy();
  });

  /** Listens on every address (IPv4 and IPv6 loopback included), or every IPv4 one without IPv6. */
  static async start(): Promise<ConnectionTrap> {
    const trap = new ConnectionTrap();
    const listen = (host: string) =>
      new Promise<void>((resolve, reject) => {
        trap.server.once('error', reject);
        trap.server.listen(0, host, () => {
          trap.server.off('error', reject);
          resolve();
        });
      });
    await listen('::').catch(() => listen('0.0.0.0'));
    return trap;
  }

  get port(): number {
    return listeningPort(this.server);
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
