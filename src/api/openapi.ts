/** The OpenAPI 3.1 document, generated from the same route declarations and zod schemas that validate requests. */
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject } from 'zod-openapi';
import { z } from 'zod';
import { EVENT_KINDS, type EventKind } from '../../core/event-types';
import type { AnyRoute, ErrorExample } from './route';
import type { ErrorCode } from '../../platform/errors';
import { errorBodySchema, eventPayloadExample, eventPayloadSchema } from './schemas';
import type { SemanticError } from './semantic-errors';

const STATUS_TEXT: Record<number, string> = {
  400: 'Invalid request, input or definition',
  401: 'Missing, malformed, unknown or revoked API key (or invalid signature on hooks)',
  403: 'The key lacks the scope this endpoint needs',
  404: 'Unknown id, or one of another workspace',
  405: 'Method not allowed',
  409: 'Conflict with the current state',
  413: 'Body larger than the limit',
  415: 'Body is not JSON',
  429: 'Rate limited; see Retry-After',
  431: 'The request line and headers (a long query string counts) are over 16 KiB; answered before any route runs',
  500: 'Internal error',
  503: 'A dependency (Temporal, the database) is unavailable; the request did nothing',
};

const rateLimitHeaders = {
  'RateLimit-Limit': { description: 'Bucket size (burst)', schema: { type: 'integer' as const } },
  'RateLimit-Remaining': { description: 'Requests left in the bucket', schema: { type: 'integer' as const } },
  'RateLimit-Reset': {
    description: 'Seconds until the bucket is full',
    schema: { type: 'integer' as const },
  },
};

const requestIdHeader = {
  'X-Request-Id': {
    description:
      'The request id (a sane incoming X-Request-Id is kept); error bodies repeat it as request_id.',
    required: true,
    schema: { type: 'string' as const, example: 'req_8Jq2mZ0cXv4LwT1aBn7R' },
  },
};

const retryAfterHeader = {
  'Retry-After': {
    description: 'Seconds to wait before trying again.',
    required: true,
    schema: { type: 'integer' as const, minimum: 1, example: 1 },
  },
};

/** One example error body per status: what a client sees most often there. */
const ERROR_EXAMPLES: Record<number, [ErrorCode, string]> = {
  400: ['invalid_request', 'Invalid body: /events/0 must be one of execution.started, execution.completed.'],
  401: ['unauthorized', 'Missing or invalid API key.'],
  403: ['forbidden', "This API key lacks the 'write' scope."],
  404: ['workflow_not_found', "No workflow 'customer-onboarding' in this workspace."],
  405: ['method_not_allowed', 'DELETE is not allowed on /v1/workflows.'],
  409: ['execution_not_failed', 'Only a failed execution can be retried; this one is running.'],
  413: ['payload_too_large', 'The body is larger than 1048576 bytes.'],
  415: ['unsupported_media_type', 'Send the body as application/json.'],
  429: ['rate_limited', 'Too many requests for this API key; retry after 1 s.'],
  431: [
    'invalid_request',
    'The request line and headers are larger than the server accepts (16 KiB in all).',
  ],
  500: ['internal_error', 'Something went wrong on our side; quote the request id to support.'],
  503: ['temporal_unavailable', 'Temporal is unavailable; the request did nothing. Retry shortly.'],
};

/** The 503 of an endpoint that needs a worker of the run's build (route.ts `needsWorker`). */
const WORKER_UNAVAILABLE_PROSE =
  '. Also `worker_unavailable` when no worker of the build the run needs is running: the message names the ' +
  'build, `details[0].build_id` carries it, and the request did nothing (a decision or a cancellation is ' +
  'not applied later when a worker of that build returns)';
const WORKER_UNAVAILABLE_EXAMPLE: ErrorExample = {
  code: 'worker_unavailable',
  message:
    "No worker of build 1a2b3c4d5e6f is running to apply this decision to execution 'ex_7kQ2mX9vLp4RtY8wZc3NbF6d'; " +
    'the request did nothing and will not apply later. Start a worker of that build, or move the run onto a ' +
    'running build (docs/operations.md#a-run-whose-build-has-no-worker).',
  details: [
    { path: '', message: 'the request needs a worker of build 1a2b3c4d5e6f', build_id: '1a2b3c4d5e6f' },
  ],
};

function errorExample(status: number, route: AnyRoute) {
  const [code, message] = ERROR_EXAMPLES[status] ?? ['invalid_request', 'The request is invalid.'];
  const own =
    route.errorExamples?.[status] ??
    (status === 503 && route.needsWorker ? WORKER_UNAVAILABLE_EXAMPLE : undefined);
  return {
    error: {
      code: own?.code ?? code,
      message: own?.message ?? message,
      request_id: 'req_8Jq2mZ0cXv4LwT1aBn7R',
      details: own?.details ?? [],
    },
  };
}

/**
 * The 400s an operation answers to schema-valid requests (semantic-errors.ts), in the response's prose and
 * as `x-semantic-errors`: code, the patterns of each detail's path and message, and what the rule is.
 */
function semanticProse(errors: SemanticError[]): string {
  if (errors.length === 0) return '';
  const lines = errors.map((e) => `\n- \`${e.code}\`: ${e.description}`);
  return `. Also answered to a request the schemas allow, when:${[...new Set(lines)].join('')}`;
}

function semanticEntry(error: SemanticError) {
  return { code: error.code, path: error.path, message: error.message, description: error.description };
}

/** The body schema's `.meta({ example })`, repeated on the media type where tools look for it first. */
function bodyExample(route: AnyRoute): { example?: unknown } {
  const example = route.body ? z.globalRegistry.get(route.body as z.ZodType)?.example : undefined;
  return example !== undefined ? { example } : {};
}

/** The other media types of the request body (route.ts `otherBodyTypes`). */
function otherBodyTypes(route: AnyRoute): Record<string, { schema: z.ZodType; example?: unknown }> {
  return Object.fromEntries(
    Object.entries(route.otherBodyTypes ?? {}).map(([type, { schema, example }]) => [
      type,
      { schema, ...(example !== undefined ? { example } : {}) },
    ]),
  );
}

const EVENT_SUMMARIES: Record<EventKind, string> = {
  'execution.started': 'An execution started',
  'execution.waiting': 'An execution waits for an approval decision',
  'execution.completed': 'An execution ended with status success',
  'execution.failed': 'An execution failed',
  'execution.canceled': 'An execution was canceled',
};

/** Standard Webhooks headers on every delivery attempt (docs/webhooks.md#signatures). */
const webhookHeaders = z.object({
  'webhook-id': z.string().meta({
    description:
      'The event id (the payload `id`): the same on every attempt of one event, so receivers dedupe on it.',
    example: 'evt_5b0c2f6e9d8a4c71b3e2a94f07d6c158',
  }),
  'webhook-timestamp': z.string().regex(/^\d+$/).meta({
    description:
      'Unix seconds when this attempt was signed; fresh on every attempt. Refuse ones too far from now.',
    example: '1795255364',
  }),
  'webhook-signature': z.string().meta({
    description:
      'Space-separated `v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{raw body}">`, keyed by the ' +
      "base64-decoded part of the endpoint's `whsec_` secret. Any Standard Webhooks verifier library accepts it.",
    example: 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
  }),
});

/**
 * The outbound events (OpenAPI 3.1 `webhooks`): one entry per event kind, the POST the service sends to
 * every endpoint registered for it.
 */
function webhooksObject(): ZodOpenApiPathsObject {
  const webhooks: ZodOpenApiPathsObject = {};
  for (const kind of EVENT_KINDS) {
    webhooks[kind] = {
      post: {
        operationId: `${kind.replace(/\.(\w)/, (_, c: string) => c.toUpperCase())}Event`,
        summary: EVENT_SUMMARIES[kind],
        description:
          `Sent to every enabled endpoint registered for \`${kind}\`, signed per Standard Webhooks. ` +
          'Only a 2xx acknowledges; redirects are not followed. Any other answer, a timeout (15 s) or a network ' +
          'error is retried (at once, then after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h by default), honouring ' +
          'Retry-After on 429 and 503. Events about a closed execution are sent once the execution is closed, so ' +
          'GET /v1/executions/{id} shows its final status and every step.',
        tags: ['Outbound events'],
        security: [],
        requestParams: { header: webhookHeaders },
        requestBody: {
          required: true,
          content: { 'application/json': { schema: eventPayloadSchema, example: eventPayloadExample(kind) } },
        },
        responses: {
          '200': { description: 'Any 2xx acknowledges the delivery: it is not sent again.' },
          '410': {
            description: 'Gone: the endpoint is disabled (status "disabled") and gets no more deliveries.',
          },
        },
      },
    };
  }
  return webhooks;
}

export function buildOpenApiDocument(routes: AnyRoute[], version: string): Record<string, unknown> {
  const paths: ZodOpenApiPathsObject = {};
  for (const route of routes) {
    const responses: Record<string, unknown> = {};
    for (const [status, spec] of Object.entries(route.responses)) {
      responses[status] = {
        description: spec.description,
        headers: { ...requestIdHeader, ...(route.auth !== 'none' ? rateLimitHeaders : {}) },
        ...(spec.schema
          ? {
              content: {
                'application/json': {
                  schema: spec.schema,
                  ...(spec.example !== undefined ? { example: spec.example } : {}),
                },
              },
            }
          : {}),
        ...(spec.links ? { links: spec.links } : {}),
      };
    }
    const errors = new Set([
      ...route.errors,
      431,
      500,
      ...(route.auth !== 'none' ? [401, 403, 429, 503] : []),
    ]);
    if (route.method === 'post' || route.method === 'put') [413, 415, 400].forEach((s) => errors.add(s));
    for (const status of [...errors].sort()) {
      const semantic = status === 400 ? (route.semanticErrors ?? []) : [];
      responses[String(status)] = {
        description:
          (STATUS_TEXT[status] ?? 'Error') +
          semanticProse(semantic) +
          (status === 503 && route.needsWorker ? WORKER_UNAVAILABLE_PROSE : ''),
        ...(semantic.length > 0 ? { 'x-semantic-errors': semantic.map(semanticEntry) } : {}),
        headers: {
          ...requestIdHeader,
          ...(status === 429 || status === 503 ? retryAfterHeader : {}),
          ...(route.auth !== 'none' && status !== 401 && status !== 431 ? rateLimitHeaders : {}),
        },
        content: { 'application/json': { schema: errorBodySchema, example: errorExample(status, route) } },
      };
    }
    const operation: ZodOpenApiOperationObject = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tags: [route.tag],
      ...(route.auth === 'none' ? { security: [] } : { 'x-required-scope': route.auth }),
      requestParams: {
        ...(route.params ? { path: route.params as z.ZodObject } : {}),
        ...(route.query ? { query: route.query as z.ZodObject } : {}),
        ...(route.headers ? { header: route.headers } : {}),
      },
      ...(route.body
        ? {
            requestBody: {
              required: route.bodyRequired ?? false,
              content: {
                'application/json': { schema: route.body as z.ZodType, ...bodyExample(route) },
                ...otherBodyTypes(route),
              },
            },
          }
        : {}),
      responses: responses as ZodOpenApiOperationObject['responses'],
    };
    paths[route.path] = { ...paths[route.path], [route.method]: operation };
  }
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Switchyard API',
      version,
      description:
        'Durable workflow orchestration on Temporal. Errors share one body: {"error": {code, message, request_id, details}}. ' +
        'Lists take ?limit= (default 20, max 100) and ?cursor= and answer {data, next_cursor}. ' +
        'What the service stores (definitions, names, descriptions, webhook URLs, secret values) cannot hold the ' +
        'character U+0000, which PostgreSQL cannot store: a body that would store one is 400 invalid_request.',
    },
    servers: [{ url: '/' }],
    // In reading order: what a newcomer does first comes first (Redoc's sidebar follows this list).
    tags: [
      {
        name: 'Workflows',
        description: 'Versioned workflow definitions, their triggers, and starting runs.',
      },
      {
        name: 'Schedules',
        description:
          'The schedule of a workflow with a schedule trigger: its next and recent runs; pause, resume, run now, backfill.',
      },
      {
        name: 'Executions',
        description: 'Runs: each step with its input, output, attempts and duration; retry, cancel, approve.',
      },
      {
        name: 'Events',
        description:
          'Events your systems send (plain JSON or CloudEvents): stored, listed, and the runs their event triggers start.',
      },
      {
        name: 'Bulk operations',
        description:
          'Cancel, retry or rerun every execution a filter matches (after an incident), with a dry run and progress.',
      },
      { name: 'Hooks', description: 'Inbound hooks: signed requests from other systems that start runs.' },
      { name: 'Webhooks', description: 'Endpoints that receive outbound events, and their delivery log.' },
      {
        name: 'Outbound events',
        description: 'What the service POSTs to your webhook endpoints, signed per Standard Webhooks.',
      },
      { name: 'Secrets', description: 'Encrypted values that connector and AI steps use by name.' },
      { name: 'API keys', description: "The workspace's keys and their scopes." },
      { name: 'Workspace', description: "The caller's workspace: its limits and what it uses of them." },
      { name: 'Health', description: 'Liveness, readiness and this document.' },
    ],
    security: [{ bearerAuth: [] }],
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'An API key: sk_ followed by 40 base62 characters.',
        },
      },
    },
    paths,
    webhooks: webhooksObject(),
  }) as unknown as Record<string, unknown>;
}
