/**
 * Hostile input against the public API, driven by its own OpenAPI document: for every operation of
 * GET /v1/openapi.json, fast-check sends random path parameters (random strings and real ids), query
 * strings, headers (odd content types and charsets, large values) and bodies (random JSON, unicode,
 * wrong types, schema-shaped values, bytes that are not JSON), with a valid admin key. Every answer must
 * be below 500 and match the document: a documented status, and a body that validates against that
 * status's schema (errors against the Error schema). Then bodies that are deeply nested, hold huge
 * arrays, are larger than the limit, or arrive too slowly.
 *
 * Reproducible: a fixed seed and a bounded number of runs per operation.
 */
import crypto from 'node:crypto';
import net from 'node:net';
import { Readable } from 'node:stream';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { expect } from 'chai';
import fc from 'fast-check';
import { Agent, request } from 'undici';
import {
  createWorkflow,
  definition,
  rulesStep,
  trigger,
  waitForExecution,
  type ExecutionBody,
} from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { startTestService, type TestService } from '../support/stack';
import { waitFor } from '../support/wait';

const SEED = 20_260_521;
const RUNS_PER_OPERATION = 100;
/** The test service's request timeout (REQUEST_TIMEOUT_MS), low so that the slow-client tests stay short. */
const REQUEST_TIMEOUT_MS = 3_000;
const BODY_LIMIT_BYTES = 256 * 1024;
const DOC_ID = 'https://switchyard.test/openapi.json';

type Json = Record<string, unknown>;

interface Operation {
  method: string;
  path: string;
  spec: {
    responses: Record<string, { content?: Record<string, { schema?: Json }> }>;
    requestBody?: { content: Record<string, { schema: Json }> };
    parameters?: { in: string; name: string }[];
    security?: unknown[];
  };
}

interface SentRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

describe('API fuzzing against the OpenAPI document @integration', function () {
  let service: TestService;
  let receiver: Receiver;
  let agent: Agent;
  let document: Json;
  let operations: Operation[];
  const ajv = new Ajv2020({ strict: false, allErrors: true, logger: false });
  addFormats(ajv);
  const validators = new Map<string, ValidateFunction>();
  /** Real ids per path parameter, by operation (destructive operations get resources of their own). */
  const ids: Record<string, string> = {};
  let hookSecret = '';

  before(async function () {
    this.timeout(120_000);
    receiver = await Receiver.start();
    service = await startTestService({
      env: {
        RATE_LIMIT_PER_SECOND: '100000',
        RATE_LIMIT_BURST: '100000',
        BODY_LIMIT_BYTES: String(BODY_LIMIT_BYTES),
        REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
        WEBHOOK_RETRY_SCHEDULE: '1',
      },
    });
    agent = new Agent({ connections: 8 });
    const res = await send({ method: 'GET', url: '/v1/openapi.json', headers: {} });
    expect(res.status).to.equal(200);
    document = JSON.parse(res.text) as Json;
    ajv.addSchema({ ...document, $id: DOC_ID });
    operations = [];
    for (const [path, methods] of Object.entries(document['paths'] as Record<string, Json>)) {
      for (const [method, spec] of Object.entries(methods))
        operations.push({ method: method.toUpperCase(), path, spec: spec as Operation['spec'] });
    }
    await createRealResources();
  });
  after(async () => {
    await agent?.close();
    // Its schedule goes with it, and so does any backfill still starting runs.
    if (ids['scheduledWorkflow']) await service.api().delete(`/v1/workflows/${ids['scheduledWorkflow']}`);
    await service?.stop();
    await receiver?.stop();
  });

  async function createRealResources(): Promise<void> {
    const api = service.api();
    ids['workflow'] = await createWorkflow(
      api,
      definition([rulesStep('route', [{ when: 'true', output: { ok: true } }])]),
    );
    ids['victimWorkflow'] = await createWorkflow(api, definition([rulesStep('r', [{ when: 'true' }])]));
    ids['approvalWorkflow'] = await createWorkflow(api, definition([{ id: 'review', kind: 'approval' }]));
    // Yearly: a fuzzed backfill window starts few runs (at most one a year since 1970).
    ids['scheduledWorkflow'] = await createWorkflow(
      api,
      definition([rulesStep('r', [{ when: 'true' }])], { trigger: { type: 'schedule', cron: '@yearly' } }),
    );
    ids['waiting'] = await trigger(api, ids['approvalWorkflow']);
    ids['waitingToCancel'] = await trigger(api, ids['approvalWorkflow']);
    const failing = await createWorkflow(
      api,
      definition([rulesStep('route', [{ when: 'true', action: 'fail', message: 'no' }])]),
    );
    const hooks = await api.post(
      '/v1/workflows',
      definition([rulesStep('r', [{ when: 'true' }])], { trigger: { type: 'webhook' } }),
    );
    expect(hooks.status).to.equal(201);
    ids['hookWorkflow'] = hooks.body.id;
    hookSecret = hooks.body.hook_secret;
    const rotating = await api.post(
      '/v1/workflows',
      definition([rulesStep('r', [{ when: 'true' }])], { trigger: { type: 'webhook' } }),
    );
    ids['rotatingHookWorkflow'] = rotating.body.id;
    const webhook = await api.post('/v1/webhooks', {
      url: `${receiver.url}/events`,
      events: ['execution.failed'],
    });
    expect(webhook.status, JSON.stringify(webhook.body)).to.equal(201);
    ids['webhook'] = webhook.body.id;
    const victimWebhook = await api.post('/v1/webhooks', {
      url: `${receiver.url}/other`,
      events: ['execution.canceled'],
    });
    ids['victimWebhook'] = victimWebhook.body.id;
    ids['failed'] = await trigger(api, failing);
    await waitForExecution(api, ids['failed']);
    await waitForExecution(api, ids['waiting'], (e) => e.status === 'waiting');
    ids['delivery'] = await waitFor(
      async () => {
        const res = await api.get(`/v1/webhooks/${ids['webhook']}/deliveries`);
        return (res.body.data as { id: string }[] | undefined)?.[0]?.id;
      },
      { what: 'a webhook delivery' },
    );
    const key = await api.post('/v1/api-keys', { name: 'victim', scopes: ['read'] });
    ids['apiKey'] = key.body.id;
    expect((await api.put('/v1/secrets/REAL_SECRET', { value: 'a-real-secret' })).status).to.equal(204);
    expect((await api.put('/v1/secrets/VICTIM_SECRET', { value: 'another-secret' })).status).to.equal(204);
  }

  /** The real ids worth trying for a path parameter of an operation. */
  function realIds(operation: Operation, name: string): string[] {
    const destructive = operation.method === 'DELETE';
    const { path } = operation;
    if (name === 'step_id') return ['review', 'route', 'trigger'];
    if (name === 'delivery_id') return [ids['delivery']!];
    if (name === 'workflow') return [ids['hookWorkflow']!, ids['workflow']!];
    // Rotating the secret of the hook workflow would make the signed requests fail.
    if (path.endsWith('/hook-secret')) return [ids['rotatingHookWorkflow']!, ids['workflow']!];
    if (path.includes('/schedule')) return [ids['scheduledWorkflow']!, ids['workflow']!];
    if (path.startsWith('/v1/api-keys')) return [ids['apiKey']!];
    if (path.startsWith('/v1/secrets')) return [destructive ? 'VICTIM_SECRET' : 'REAL_SECRET'];
    if (path.startsWith('/v1/webhooks')) return [destructive ? ids['victimWebhook']! : ids['webhook']!];
    if (path.startsWith('/v1/executions')) {
      if (path.endsWith('/cancel')) return [ids['waitingToCancel']!, ids['failed']!];
      return [ids['waiting']!, ids['failed']!];
    }
    if (destructive) return [ids['victimWorkflow']!];
    return [ids['workflow']!, ids['hookWorkflow']!, ids['approvalWorkflow']!];
  }

  async function send(req: SentRequest): Promise<Answer> {
    const res = await request(`${service.url}${req.url}`, {
      method: req.method as 'GET',
      headers: req.headers,
      body: req.body ?? null,
      dispatcher: agent,
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
    return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
  }

  /** The validator of an operation's response schema for a status (undefined: no body documented). */
  function validatorFor(operation: Operation, status: number): ValidateFunction | undefined | null {
    const response = operation.spec.responses[String(status)];
    if (!response) return null;
    if (!response.content?.['application/json']?.schema) return undefined;
    const key = `${operation.method} ${operation.path} ${status}`;
    let validate = validators.get(key);
    if (!validate) {
      const pointer = ['paths', operation.path, operation.method.toLowerCase(), 'responses', String(status)]
        .map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1'))
        .join('/');
      validate = ajv.compile({ $ref: `${DOC_ID}#/${pointer}/content/application~1json/schema` });
      validators.set(key, validate);
    }
    return validate;
  }

  /** Below 500, a documented status, a body matching its schema, and the request id on every answer. */
  function expectDocumented(operation: Operation, req: SentRequest, res: Answer): void {
    const context = `${req.method} ${req.url} → ${res.status} ${res.text.slice(0, 500)}`;
    expect(res.status, context).to.be.below(500);
    const validate = validatorFor(operation, res.status);
    expect(validate, `undocumented status: ${context}`).to.not.equal(null);
    expect(res.headers['x-request-id'], context).to.be.a('string');
    if (validate === undefined) {
      expect(res.text, context).to.equal('');
      return;
    }
    expect(String(res.headers['content-type']), context).to.match(/^application\/json/);
    const body = JSON.parse(res.text) as unknown;
    expect(validate!(body), `${context}\n${ajv.errorsText(validate!.errors)}`).to.equal(true);
    if (res.status >= 400) {
      expect((body as { error: { request_id: string } }).error.request_id, context).to.equal(
        res.headers['x-request-id'],
      );
    }
  }

  // ---- arbitraries ------------------------------------------------------------------------------

  /** Percent-encodes every byte outside the unreserved set (lone surrogates become U+FFFD). */
  const encode = (text: string): string =>
    [...Buffer.from(text, 'utf8')]
      .map((byte) =>
        /[A-Za-z0-9\-._~]/.test(String.fromCharCode(byte))
          ? String.fromCharCode(byte)
          : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`,
      )
      .join('');

  /** Any code points (astral, controls, combining marks), or whole graphemes. */
  const unicodeText = (maxLength: number) =>
    fc.oneof(fc.string({ unit: 'binary', maxLength }), fc.string({ unit: 'grapheme', maxLength }));

  // Not "." or "..": URL normalization turns those into another path, so another operation.
  const oddSegments = fc.constantFrom(
    '%',
    '%zz',
    '%E0%A4',
    '%00',
    '%2e%2ex',
    '...',
    'null',
    'undefined',
    '__proto__',
    'constructor',
    'x'.repeat(300),
    '%F0%9F%98%80',
    'ex_',
    'sk_' + 'a'.repeat(40),
    'trigger',
    'ÿ',
    '%C0%AF',
  );

  const pathParam = (operation: Operation, name: string) =>
    fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...realIds(operation, name)) },
      {
        weight: 3,
        arbitrary: unicodeText(80)
          .filter((s) => s !== '' && s !== '.' && s !== '..')
          .map(encode),
      },
      { weight: 1, arbitrary: oddSegments },
    );

  const queryValue = fc.oneof(
    unicodeText(40),
    fc.integer().map(String),
    fc.constantFrom(
      '',
      '0',
      '-1',
      '1',
      '100',
      '101',
      '1e3',
      '1.5',
      'NaN',
      'Infinity',
      '[]',
      'running',
      'failed',
      'waiting',
      'x'.repeat(5000),
    ),
  );

  const queryString = (operation: Operation) => {
    const documented = (operation.spec.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
    const key = fc.oneof(
      ...(documented.length > 0 ? [{ weight: 3, arbitrary: fc.constantFrom(...documented) }] : []),
      { weight: 1, arbitrary: unicodeText(12) },
      { weight: 1, arbitrary: fc.constantFrom('token', 'limit[]', 'a[b]', '__proto__', 'cursor') },
    );
    return fc.oneof(
      { weight: 3, arbitrary: fc.constant('') },
      fc
        .array(fc.tuple(key, queryValue), { maxLength: 5 })
        .map((pairs) =>
          pairs.length === 0 ? '' : `?${pairs.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&')}`,
        ),
      fc.constantFrom(
        '?',
        '?&&',
        '?=',
        '?limit',
        '?limit=%',
        '?limit=%zz',
        '?cursor=%E0%A4',
        '?status=&status=x',
        '?limit=5',
        '?limit=1&cursor=abc',
      ),
    );
  };

  const FORBIDDEN_HEADERS = new Set([
    'authorization',
    'host',
    'content-length',
    'connection',
    'keep-alive',
    'transfer-encoding',
    'upgrade',
    'expect',
    'te',
    'trailer',
    'proxy-connection',
    'content-type',
  ]);
  const headerName = fc
    .stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,24}$/)
    .filter((name) => !FORBIDDEN_HEADERS.has(name.toLowerCase()));
  /** Header values Node accepts: tab, printable ASCII and Latin-1. */
  const headerValue = (maxLength: number) =>
    fc
      .string({
        unit: fc
          .oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0xa0, max: 0xff }))
          .map((code) => String.fromCharCode(code)),
        maxLength,
      })
      .map((value) => value.trim());

  const CONTENT_TYPES = [
    'application/json',
    'application/json',
    'application/json',
    'application/json; charset=utf-8',
    'application/JSON;charset=UTF-8',
    'application/json; charset="utf-8"',
    'application/json; charset=latin1',
    'application/json; charset=utf-16',
    'application/merge-patch+json',
    'application/vnd.api+json',
    'text/plain',
    'text/json',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=----x',
    '*/*',
    ';;;',
    'application/',
    'application/json; charset',
    'application/json;;charset=utf-8;',
  ];

  /** Present one time in `every`, absent otherwise. */
  const sometimes = <T>(arbitrary: fc.Arbitrary<T>, every: number) =>
    fc.oneof({ weight: every - 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arbitrary });

  const headers = fc.record({
    // Mostly JSON, so that most bodies get past the content type to the parser and the validators.
    contentType: fc.oneof(
      { weight: 8, arbitrary: fc.constant('application/json') },
      { weight: 3, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
      { weight: 1, arbitrary: headerValue(60) },
      { weight: 1, arbitrary: fc.constant(undefined) },
    ),
    requestId: sometimes(headerValue(200), 3),
    idempotencyKey: sometimes(headerValue(300), 4),
    accept: sometimes(fc.constantFrom('application/json', 'text/html', '*/*', 'application/xml', ''), 3),
    extra: sometimes(fc.dictionary(headerName, headerValue(100), { maxKeys: 4 }), 3),
    large: sometimes(
      fc.nat(8_000).map((n) => 'v'.repeat(n)),
      5,
    ),
    signature: fc.oneof(headerValue(200), fc.constantFrom('t=1,v1=00', 't=,v1=', 'v1=' + 'a'.repeat(64))),
  });

  /** A value shaped like a JSON Schema (refs into the document resolved), wrong types mixed in. */
  function schemaShaped(schema: Json | undefined, depth = 0): fc.Arbitrary<unknown> {
    const anyJson = fc.jsonValue({ maxDepth: 3, stringUnit: 'binary' });
    if (!schema || depth > 5) return anyJson;
    const ref = schema['$ref'];
    if (typeof ref === 'string') {
      const target = ref
        .replace(/^#\//, '')
        .split('/')
        .reduce<unknown>(
          (node, part) => (node as Json)[part.replace(/~1/g, '/').replace(/~0/g, '~')],
          document,
        ) as Json;
      return schemaShaped({ ...target, ...schema, $ref: undefined }, depth + 1);
    }
    const variants = (schema['oneOf'] ?? schema['anyOf']) as Json[] | undefined;
    if (variants) return fc.oneof(...variants.map((variant) => schemaShaped(variant, depth + 1)));
    const wrong = { weight: 1, arbitrary: anyJson };
    if (schema['enum'])
      return fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...(schema['enum'] as unknown[])) }, wrong);
    if ('const' in schema) return fc.oneof({ weight: 4, arbitrary: fc.constant(schema['const']) }, wrong);
    switch (schema['type']) {
      case 'object': {
        const properties = (schema['properties'] ?? {}) as Record<string, Json>;
        const shaped = fc.record(
          Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, schemaShaped(v, depth + 1)])),
          { requiredKeys: (schema['required'] as string[] | undefined) ?? [] },
        );
        return fc.oneof({ weight: 6, arbitrary: shaped }, wrong);
      }
      case 'array':
        return fc.oneof(
          {
            weight: 6,
            arbitrary: fc.array(schemaShaped(schema['items'] as Json, depth + 1), {
              minLength: Math.min(Number(schema['minItems'] ?? 0), 3),
              maxLength: 3,
            }),
          },
          wrong,
        );
      case 'string':
        return fc.oneof(
          ...(typeof schema['pattern'] === 'string'
            ? [{ weight: 6, arbitrary: fc.stringMatching(new RegExp(schema['pattern'])) }]
            : []),
          { weight: 3, arbitrary: fc.stringMatching(/^[a-z][a-z0-9_]{0,12}$/) },
          { weight: 2, arbitrary: unicodeText(30) },
          {
            weight: 1,
            arbitrary: fc.constantFrom(
              '1s',
              '72h',
              '0 9 * * 1-5',
              'https://example.com/x',
              'input.x = 1',
              '{{ input.x }}',
              '{{',
              '}}',
              'x'.repeat(20_000),
            ),
          },
          wrong,
        );
      case 'integer':
      case 'number':
        return fc.oneof(
          {
            weight: 4,
            arbitrary: fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true })),
          },
          wrong,
        );
      case 'boolean':
        return fc.oneof({ weight: 4, arbitrary: fc.boolean() }, wrong);
      default:
        return anyJson;
    }
  }

  function bodyFor(operation: Operation): fc.Arbitrary<string | Buffer | undefined> {
    const schema = operation.spec.requestBody?.content['application/json']?.schema;
    return fc.oneof(
      { weight: 4, arbitrary: schemaShaped(schema).map((value) => JSON.stringify(value) ?? 'null') },
      { weight: 3, arbitrary: fc.json({ maxDepth: 4, stringUnit: 'binary' }) },
      { weight: 1, arbitrary: unicodeText(200) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          '',
          '{',
          '[',
          'null',
          '[]',
          '{"a":',
          '\u0000',
          'true',
          '1e999',
          '"\ud800"',
          '{"a":1}{"b":2}',
          '{"__proto__": {"polluted": true}}',
          '{"constructor": {"prototype": {"polluted": true}}}',
          '\ufeff{}',
          '{"input": {"__proto__": null}}',
          '  {}  ',
          '{"a": "\\u0000"}',
        ),
      },
      { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)) },
      { weight: 1, arbitrary: fc.constant(undefined) },
    );
  }

  /** A signed hook request now and then, so random bodies get past the signature check. */
  function signature(body: string | Buffer | undefined): string {
    const t = Math.floor(Date.now() / 1000);
    const hmac = crypto
      .createHmac('sha256', hookSecret)
      .update(`${t}.`)
      .update(body ?? '')
      .digest('hex');
    return `t=${t},v1=${hmac}`;
  }

  function requestFor(operation: Operation): fc.Arbitrary<SentRequest> {
    const names = [...operation.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
    const params = fc.tuple(...names.map((name) => pathParam(operation, name)));
    const wantsBody = operation.method === 'POST' || operation.method === 'PUT';
    const body = wantsBody
      ? bodyFor(operation)
      : fc.oneof({ weight: 5, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.json() });
    return fc
      .record({ params, query: queryString(operation), headers, body, signed: fc.boolean() })
      .map(({ params: values, query, headers: h, body: b, signed }) => {
        let path = operation.path;
        names.forEach((name, i) => (path = path.replace(`{${name}}`, values[i]!)));
        const sent: Record<string, string> = { ...(h.extra ?? {}) };
        if (h.contentType !== undefined && b !== undefined) sent['content-type'] = h.contentType;
        if (h.requestId !== undefined) sent['x-request-id'] = h.requestId;
        if (h.idempotencyKey !== undefined) sent['idempotency-key'] = h.idempotencyKey;
        if (h.accept !== undefined) sent['accept'] = h.accept;
        if (h.large !== undefined) sent['x-large'] = h.large;
        if (operation.path.startsWith('/v1/hooks/'))
          sent['x-service-signature'] = signed ? signature(b) : (h.signature ?? '');
        else if (operation.spec.security === undefined) sent['authorization'] = `Bearer ${service.adminKey}`;
        return {
          method: operation.method,
          url: `${path}${query}`,
          headers: sent,
          ...(b !== undefined ? { body: b } : {}),
        };
      });
  }

  // ---- properties -------------------------------------------------------------------------------

  it('answers every operation of the OpenAPI document below 500, as documented', async function () {
    this.timeout(150_000);
    expect(operations.length).to.be.at.least(25);
    // Every operation is tried, and every failing one reported (not only the first).
    const failures: string[] = [];
    for (const operation of operations) {
      const details = await fc.check(
        fc.asyncProperty(requestFor(operation), async (req) => {
          const res = await send(req);
          expectDocumented(operation, req, res);
        }),
        { seed: SEED, numRuns: RUNS_PER_OPERATION, endOnFailure: true },
      );
      if (details.failed) {
        const error = details.errorInstance as Error | undefined;
        failures.push(
          `${operation.method} ${operation.path}: ${error?.message ?? JSON.stringify(details.counterexample)}`,
        );
      }
    }
    expect(failures, failures.join('\n\n')).to.deep.equal([]);
  });

  /** Definitions from the definition grammar: mostly plausible, now and then subtly wrong. */
  function definitionArb(): fc.Arbitrary<Record<string, unknown>> {
    const maybe = <T>(arbitrary: fc.Arbitrary<T>) => sometimes(arbitrary, 2);
    /** The valid choice nine times in ten. */
    const mostly = <T, U>(valid: fc.Arbitrary<T>, wrong: fc.Arbitrary<U>) =>
      fc.oneof({ weight: 9, arbitrary: valid }, { weight: 1, arbitrary: wrong });
    const expression = mostly(
      fc.constantFrom(
        'true',
        'false',
        "input.plan = 'pro'",
        'steps.first.output.ok',
        '$count(input.items) > 2',
        '$sum([1..10]) > 3',
        '$keys(steps)',
        "$string(input) & 'x'",
        '$pad("", 10)',
        'input.x ? 1 : 0',
        '$count([1..10000000]) > 0',
        '($f := function($x){ $f($x + 1) }; $f(0))',
        '$eval("1+1")',
      ),
      fc.oneof(
        fc.constantFrom('(', '$$$', 'steps.later.output', 'secrets.TOKEN', '{{ input.x }}'),
        unicodeText(30),
      ),
    );
    const template = mostly(
      fc.constantFrom(
        'plain text',
        '{{ input.x }}',
        'Hello {{ input.name }}',
        '{{ steps.first.output }}',
        '{{ $pad("", 5) }}',
        '{{ $string(input) }}',
        'ü{{ input.y }}😀',
      ),
      fc.oneof(
        fc.constantFrom('{{ }}', '{{', '{{ secrets }}', '{{ $$.secrets.TOKEN }}', ''),
        unicodeText(20),
      ),
    );
    const secretTemplate = mostly(
      fc.constantFrom(
        '{{ secrets.REAL_SECRET }}',
        'Bearer {{ secrets.REAL_SECRET }}',
        '{{ secrets.MISSING }}',
      ),
      fc.constant('Bearer {{ secrets.REAL_SECRET }} {{ input.x }}'),
    );
    const value = fc.oneof(template, fc.jsonValue({ maxDepth: 2, stringUnit: 'binary' }));
    const name = mostly(
      unicodeText(30).filter((n) => n.length > 0),
      fc.constant(''),
    );
    const common = { if: maybe(expression), name: maybe(name) };
    const rules = fc.record({
      ...common,
      kind: fc.constant('rules'),
      rules: fc.array(
        fc.record({
          when: expression,
          output: maybe(value),
          action: maybe(mostly(fc.constantFrom('continue', 'fail', 'stop'), fc.constant('explode'))),
          message: maybe(template),
        }),
        { minLength: 1, maxLength: 3 },
      ),
      default: maybe(value),
    });
    const connector = fc.record({
      ...common,
      kind: fc.constant('connector'),
      connector: mostly(fc.constant('http'), fc.constant('ftp')),
      request: fc.record({
        method: maybe(mostly(fc.constantFrom('GET', 'POST', 'PUT'), fc.constantFrom('TRACE', 'get'))),
        url: mostly(
          fc.constantFrom(
            `${receiver.url}/fuzz`,
            `${receiver.url}/fuzz?q={{ input.x }}`,
            'https://example.invalid/x',
          ),
          fc.constantFrom('not a url', '{{ input.url }}', '', 'ftp://x'),
        ),
        headers: maybe(fc.dictionary(headerName, fc.oneof(template, secretTemplate), { maxKeys: 3 })),
        query: maybe(
          fc.dictionary(fc.string(), fc.oneof(template, fc.integer(), fc.boolean()), { maxKeys: 3 }),
        ),
        body: maybe(value),
      }),
      retry: fc.record({
        max_attempts: mostly(fc.constantFrom(1, 2), fc.constantFrom(0, -1)),
        initial_interval: mostly(fc.constant('100ms'), fc.constantFrom('0s', 'soon')),
      }),
      timeout: maybe(mostly(fc.constantFrom('1s', '5s'), fc.constantFrom('0s', '999999999d', '1x'))),
    });
    const ai = fc.record({
      ...common,
      kind: fc.constant('ai'),
      prompt: mostly(fc.oneof(template, secretTemplate), fc.constant('')),
      output_schema: maybe(
        mostly(fc.constant({ type: 'object' }), fc.constantFrom({ type: 'nope' }, { $ref: '#/x' })),
      ),
      temperature: maybe(fc.double({ min: -0.5, max: 2, noNaN: true })),
      retry: fc.constant({ max_attempts: 1 }),
    });
    const approval = fc.record({
      ...common,
      kind: fc.constant('approval'),
      message: maybe(template),
      timeout: maybe(mostly(fc.constantFrom('1s', '72h'), fc.constant('0ms'))),
    });
    const trigger = fc.oneof(
      fc.constant({ type: 'api' }),
      fc.constant({ type: 'webhook' }),
      fc.record({
        type: fc.constant('schedule'),
        cron: maybe(
          mostly(
            fc.constantFrom('0 9 * * 1-5', '@daily'),
            fc.constantFrom('nonsense', '61 * * * *', '0 0 31 2 *'),
          ),
        ),
        every: maybe(mostly(fc.constantFrom('1h', '15m'), fc.constantFrom('500ms', '0s'))),
        timezone: maybe(
          mostly(fc.constantFrom('UTC', 'Europe/Paris'), fc.constantFrom('Mars/Olympus', '+05:00', 'utc')),
        ),
        input: maybe(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 })),
      }),
    );
    const stepIds = ['first', 'second', 'third', 'fourth'];
    return fc
      .record({
        id: mostly(fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,20}$/), fc.constantFrom('UPPER', '-x', '')),
        name: maybe(name),
        trigger: maybe(trigger),
        input_schema: maybe(
          mostly(
            fc.constantFrom(
              { type: 'object' },
              { type: 'object', properties: { x: { type: 'string', format: 'email' } } },
              { type: 'object', properties: { x: { type: 'string', pattern: '^[a-z]+$' } } },
            ),
            fc.constantFrom({ type: 'nope' }, { $ref: '#/nowhere' }, { type: 'object', required: ['x'] }),
          ),
        ),
        timeout: maybe(mostly(fc.constant('1h'), fc.constant('forever'))),
        steps: fc.array(fc.oneof(rules, connector, ai, approval), { minLength: 1, maxLength: 4 }),
        badStepId: sometimes(fc.constantFrom('trigger', 'Bad-Id', 'first', 'x'.repeat(70)), 10),
      })
      .map(({ badStepId, ...definition }) => {
        definition.steps.forEach((step, i) => Object.assign(step, { id: stepIds[i] }));
        if (badStepId !== undefined) Object.assign(definition.steps.at(-1)!, { id: badStepId });
        return JSON.parse(JSON.stringify(definition)) as Record<string, unknown>;
      });
  }

  it('answers definitions from the definition grammar, and triggers of those it saves, as documented', async function () {
    this.timeout(120_000);
    const create = operations.find((o) => o.method === 'POST' && o.path === '/v1/workflows')!;
    const start = operations.find((o) => o.method === 'POST' && o.path === '/v1/workflows/{id}/trigger')!;
    const auth = { 'content-type': 'application/json', authorization: `Bearer ${service.adminKey}` };
    const started: string[] = [];
    const triggerInput = fc.oneof(
      {
        weight: 4,
        arbitrary: fc.dictionary(
          fc.constantFrom('x', 'name', 'plan', 'items', 'url'),
          fc.jsonValue({ maxDepth: 2 }),
        ),
      },
      { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
    );
    await fc.assert(
      fc.asyncProperty(definitionArb(), triggerInput, async (body, input) => {
        const req = { method: 'POST', url: '/v1/workflows', headers: auth, body: JSON.stringify(body) };
        const res = await send(req);
        expectDocumented(create, req, res);
        if (res.status !== 201) return;
        const run = {
          method: 'POST',
          url: `/v1/workflows/${encode(String(body['id']))}/trigger`,
          headers: auth,
          body: JSON.stringify(input),
        };
        const answer = await send(run);
        expectDocumented(start, run, answer);
        if (answer.status === 202)
          started.push((JSON.parse(answer.text) as { execution_id: string }).execution_id);
      }),
      { seed: SEED, numRuns: 150, endOnFailure: true },
    );
    expect(started.length, 'some generated definitions are valid and start').to.be.at.least(10);
    // None of these runs may be left stuck (running forever on failing workflow tasks): each ends, or
    // waits for an approval.
    const settled = (e: ExecutionBody) => e.status !== 'running';
    for (const id of started) {
      const execution = await waitForExecution(service.api(), id, settled, 60_000);
      expect(execution.status, JSON.stringify(execution.error)).to.be.oneOf(['success', 'failed', 'waiting']);
    }
  });

  it('answers random credentials with a documented 401', async () => {
    const operation = operations.find((o) => o.method === 'GET' && o.path === '/v1/workflows')!;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          headerValue(300),
          fc.constantFrom(
            'Bearer',
            'Bearer ',
            'Basic x',
            `Bearer ${service.adminKey}x`,
            `bearer  ${'sk_' + 'A'.repeat(40)}`,
          ),
        ),
        async (value) => {
          const req = { method: 'GET', url: '/v1/workflows', headers: { authorization: value } };
          const res = await send(req);
          expectDocumented(operation, req, res);
          expect(res.status).to.equal(401);
        },
      ),
      { seed: SEED, numRuns: 50, endOnFailure: true },
    );
  });

  // ---- odd ids and text, every operation ---------------------------------------------------------

  /** The headers of an authenticated (or, for hooks, signed) JSON request. */
  function headersFor(operation: Operation, body: string | undefined): Record<string, string> {
    const sent: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' };
    if (operation.path.startsWith('/v1/hooks/')) sent['x-service-signature'] = signature(body);
    else if (operation.spec.security === undefined) sent['authorization'] = `Bearer ${service.adminKey}`;
    return sent;
  }

  /** The operation's path with real ids, and `odd` in the parameter at `position`. */
  function pathWith(operation: Operation, position?: number, odd?: string): string {
    let index = 0;
    return operation.path.replace(/\{(\w+)\}/g, (_, name: string) =>
      index++ === position ? odd! : realIds(operation, name)[0]!,
    );
  }

  // Drawn now and then by the properties above; tried here on every parameter of every operation.
  const ODD_IDS = [
    '%00',
    'a%00b',
    '%',
    '%zz',
    '%E0%A4',
    '%C0%AF',
    '%F0%9F%98%80',
    'x'.repeat(300),
    '__proto__',
  ];

  it('answers odd ids (U+0000, broken percent-encoding, long, astral) in every path parameter, as documented', async () => {
    for (const operation of operations) {
      const count = [...operation.path.matchAll(/\{\w+\}/g)].length;
      for (let position = 0; position < count; position++) {
        for (const odd of ODD_IDS) {
          const body = operation.method === 'POST' || operation.method === 'PUT' ? '{}' : undefined;
          const req = {
            method: operation.method,
            url: pathWith(operation, position, odd),
            headers: headersFor(operation, body),
            ...(body !== undefined ? { body } : {}),
          };
          expectDocumented(operation, req, await send(req));
        }
      }
    }
  });

  it('answers text holding U+0000 in JSON bodies below 500, as documented', async () => {
    const nul = 'a\u0000b';
    const bodies: [string, string, unknown][] = [
      ['POST', '/v1/api-keys', { name: nul, scopes: ['read'] }],
      ['POST', '/v1/workflows', definition([rulesStep('r', [{ when: 'true', output: nul }])], { name: nul })],
      [
        'PUT',
        '/v1/workflows/{id}',
        { ...definition([rulesStep('r', [{ when: 'true' }])]), id: ids['workflow'], description: nul },
      ],
      [
        'POST',
        '/v1/webhooks',
        { url: `${receiver.url}/nul`, events: ['execution.failed'], description: nul },
      ],
      ['PUT', '/v1/secrets/{name}', { value: `${nul}c` }],
      ['POST', '/v1/workflows/{id}/trigger', { text: nul }],
      ['POST', '/v1/executions/{id}/retry', { input: { text: nul } }],
      ['POST', '/v1/executions/{id}/steps/{step_id}/approve', { comment: nul }],
      ['POST', '/v1/hooks/{workflow}', { text: nul }],
    ];
    for (const [method, path, value] of bodies) {
      const operation = operations.find((o) => o.method === method && o.path === path)!;
      const body = JSON.stringify(value);
      const req = { method, url: pathWith(operation), headers: headersFor(operation, body), body };
      expectDocumented(operation, req, await send(req));
    }
  });

  // ---- shapes that stress parsers ---------------------------------------------------------------

  const DEPTH = 10_000;
  const deepArray = '['.repeat(DEPTH) + ']'.repeat(DEPTH);
  const deepObject = '{"a":'.repeat(DEPTH) + '1' + '}'.repeat(DEPTH);

  function postOperations(): Operation[] {
    return operations.filter((o) => o.method === 'POST' || o.method === 'PUT');
  }

  /** One request per POST/PUT operation (real ids, signed hooks) with this raw JSON body. */
  async function sendToEveryBodyOperation(body: string): Promise<void> {
    for (const operation of postOperations()) {
      const sent = {
        method: operation.method,
        url: pathWith(operation),
        headers: headersFor(operation, body),
        body,
      };
      expectDocumented(operation, sent, await send(sent));
    }
  }

  it('answers 10000-deep arrays and objects in every JSON body below 500, as documented', async function () {
    this.timeout(60_000);
    expect(deepArray.length).to.be.below(BODY_LIMIT_BYTES);
    await sendToEveryBodyOperation(deepArray);
    await sendToEveryBodyOperation(deepObject);
  });

  it('saves and runs a workflow whose rule output is nested 10000 deep, or refuses it with a 400', async function () {
    this.timeout(60_000);
    const operation = operations.find((o) => o.method === 'POST' && o.path === '/v1/workflows')!;
    // JSON.stringify itself cannot write 10000 levels: the deep part is spliced in as text.
    const body = definition([rulesStep('deep', [{ when: 'true', output: 'DEEP' }])]);
    const text = JSON.stringify(body).replace('"DEEP"', deepObject);
    const req = {
      method: 'POST',
      url: '/v1/workflows',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${service.adminKey}` },
      body: text,
    };
    const res = await send(req);
    expectDocumented(operation, req, res);
    if (res.status !== 201) return;
    const execution: ExecutionBody = await waitForExecution(
      service.api(),
      await trigger(service.api(), body['id'] as string),
    );
    expect(execution.status, JSON.stringify(execution.error)).to.be.oneOf(['success', 'failed']);
  });

  it('runs an execution whose input is nested 10000 deep, or refuses it with a 400', async function () {
    this.timeout(60_000);
    const operation = operations.find((o) => o.path === '/v1/workflows/{id}/trigger')!;
    const req = {
      method: 'POST',
      url: `/v1/workflows/${ids['workflow']}/trigger`,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${service.adminKey}` },
      body: `{"deep": ${deepObject}}`,
    };
    const res = await send(req);
    expectDocumented(operation, req, res);
    if (res.status !== 202) return;
    const executionId = (JSON.parse(res.text) as { execution_id: string }).execution_id;
    const read = operations.find((o) => o.method === 'GET' && o.path === '/v1/executions/{id}')!;
    const execution = await waitForExecution(service.api(), executionId);
    expect(execution.status, JSON.stringify(execution.error)).to.equal('success');
    const get = {
      method: 'GET',
      url: `/v1/executions/${executionId}`,
      headers: { authorization: `Bearer ${service.adminKey}` },
    };
    expectDocumented(read, get, await send(get));
  });

  it('answers huge arrays in every JSON body below 500, as documented', async function () {
    this.timeout(60_000);
    const numbers = `[${Array(100_000).fill('0').join(',')}]`;
    const steps = JSON.stringify(
      definition(Array.from({ length: 8_000 }, () => ({ id: 'x', kind: 'nope' }))),
    );
    expect(steps.length).to.be.below(BODY_LIMIT_BYTES);
    await sendToEveryBodyOperation(numbers);
    await sendToEveryBodyOperation(steps);
    await sendToEveryBodyOperation(JSON.stringify({ input: Array(50_000).fill({}) }));
  });

  it('answers 413 payload_too_large to a body past the limit, declared or chunked', async () => {
    const operation = operations.find((o) => o.method === 'POST' && o.path === '/v1/workflows')!;
    const big = JSON.stringify({ id: 'x', padding: 'p'.repeat(BODY_LIMIT_BYTES) });
    const declared = {
      method: 'POST',
      url: '/v1/workflows',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${service.adminKey}` },
      body: big,
    };
    const res = await send(declared);
    expectDocumented(operation, declared, res);
    expect(res.status).to.equal(413);
    const chunked = await request(`${service.url}/v1/workflows`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${service.adminKey}` },
      body: Readable.from(
        (function* () {
          for (let i = 0; i < 40; i++) yield Buffer.alloc(BODY_LIMIT_BYTES / 20, 0x20);
        })(),
      ),
      dispatcher: agent,
    });
    const text = await chunked.body.text();
    expect(chunked.statusCode, text).to.equal(413);
    expectDocumented(operation, declared, { status: chunked.statusCode, headers: chunked.headers, text });
  });

  // ---- slow clients -----------------------------------------------------------------------------

  /** A raw connection; resolves with what the server sent and when the connection ended. */
  function rawConnection(): { socket: net.Socket; ended: Promise<{ data: string; ms: number }> } {
    const url = new URL(service.url);
    const socket = net.connect(Number(url.port), url.hostname);
    const started = Date.now();
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (data += chunk));
    socket.on('error', () => undefined);
    const ended = new Promise<{ data: string; ms: number }>((resolve) =>
      socket.on('close', () => resolve({ data, ms: Date.now() - started })),
    );
    return { socket, ended };
  }

  async function expectStillServing(): Promise<void> {
    const started = Date.now();
    const res = await send({
      method: 'GET',
      url: '/v1/workflows?limit=1',
      headers: { authorization: `Bearer ${service.adminKey}` },
    });
    expect(res.status).to.equal(200);
    expect(Date.now() - started).to.be.below(1_000);
  }

  it('drops a client that trickles its body slower than the request timeout, and serves others meanwhile', async function () {
    this.timeout(30_000);
    const clients = Array.from({ length: 10 }, () => rawConnection());
    const timers = clients.map(({ socket }) => {
      socket.write(
        `POST /v1/workflows HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${service.adminKey}\r\n` +
          'Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"id":',
      );
      return setInterval(() => socket.writable && socket.write(' '), 200);
    });
    try {
      for (let i = 0; i < 5; i++) {
        await expectStillServing();
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
      const outcomes = await Promise.all(clients.map((c) => c.ended));
      for (const outcome of outcomes) {
        expect(outcome.ms).to.be.below(REQUEST_TIMEOUT_MS + 3_000);
        // Either the connection is just closed, or it is answered with a client error.
        if (outcome.data) expect(outcome.data).to.match(/^HTTP\/1\.1 4\d\d/);
      }
    } finally {
      timers.forEach(clearInterval);
      clients.forEach(({ socket }) => socket.destroy());
    }
    await expectStillServing();
  });

  it('drops a client that trickles its headers, and serves others meanwhile', async function () {
    this.timeout(30_000);
    const { socket, ended } = rawConnection();
    socket.write('GET /v1/workflows HTTP/1.1\r\nHost: localhost\r\n');
    const timer = setInterval(() => socket.writable && socket.write('X-Slow: 1\r\n'), 200);
    try {
      await expectStillServing();
      const outcome = await ended;
      expect(outcome.ms).to.be.below(REQUEST_TIMEOUT_MS + 3_000);
      if (outcome.data) expect(outcome.data).to.match(/^HTTP\/1\.1 4\d\d/);
    } finally {
      clearInterval(timer);
      socket.destroy();
    }
    await expectStillServing();
  });

  it('answers a header block past Node’s limit with 431 and keeps serving', async () => {
    const { socket, ended } = rawConnection();
    socket.write(`GET /v1/workflows HTTP/1.1\r\nHost: localhost\r\nX-Huge: ${'h'.repeat(40_000)}\r\n\r\n`);
    const outcome = await ended;
    expect(outcome.data).to.match(/^HTTP\/1\.1 431/);
    await expectStillServing();
  });
});
