/** The OpenAPI 3.1 document, generated from the same route declarations and zod schemas that validate requests. */
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject } from 'zod-openapi';
import type { z } from 'zod';
import type { AnyRoute } from './route';
import { errorBodySchema } from './schemas';

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

export function buildOpenApiDocument(routes: AnyRoute[], version: string): Record<string, unknown> {
  const paths: ZodOpenApiPathsObject = {};
  for (const route of routes) {
    const responses: Record<string, unknown> = {};
    for (const [status, spec] of Object.entries(route.responses)) {
      responses[status] = {
        description: spec.description,
        ...(route.auth !== 'none' ? { headers: rateLimitHeaders } : {}),
        ...(spec.schema ? { content: { 'application/json': { schema: spec.schema } } } : {}),
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
      responses[String(status)] = {
        description: STATUS_TEXT[status] ?? 'Error',
        content: { 'application/json': { schema: errorBodySchema } },
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
              content: { 'application/json': { schema: route.body as z.ZodType } },
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
        'Lists take ?limit= (default 20, max 100) and ?cursor= and answer {data, next_cursor}.',
    },
    servers: [{ url: '/' }],
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
  }) as unknown as Record<string, unknown>;
}
