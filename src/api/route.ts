/**
 * One declaration per endpoint: method, path, scope, zod schemas for params, query and body, and the
 * responses. The same declaration registers the Koa route (validation, auth, rate limit, body parsing)
 * and describes the operation in the OpenAPI document, so the two cannot drift apart.
 */
import type Router from '@koa/router';
import type Koa from 'koa';
import { z } from 'zod';
import type { AppError, ErrorCode, ErrorDetail } from '../../platform/errors';
import { invalidRequest, notFound } from '../../platform/errors';
import type { AuthContext } from '../http/auth';
import { readJsonBody, readRawBody } from '../http/body';
import type { Scope } from '../../platform/store/api-keys';
import { zodDetails } from '../definitions/validate';
import { parseUserJson } from '../../core/parse-user-json';
import type { Services } from '../services';
import type { SemanticError } from './semantic-errors';

export type Method = 'get' | 'post' | 'put' | 'delete';

export interface RouteContext<P, Q, B> {
  koa: Koa.Context;
  services: Services;
  params: P;
  query: Q;
  body: B;
  /** The raw request body (empty without one): signatures are computed over these bytes. */
  rawBody: Buffer;
  /** Undefined on unauthenticated routes. */
  auth: AuthContext;
  requestId: string;
}

export interface RouteResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** An OpenAPI Link: how a tool goes from this response to another operation. */
export interface ResponseLink {
  operationId: string;
  parameters: Record<string, string>;
  description?: string;
}

/** An error body's example: its code, message and details (the request id is the document's). */
export interface ErrorExample {
  code: ErrorCode;
  message: string;
  details?: ErrorDetail[];
}

export interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
  /** An example body for the document. */
  example?: unknown;
  links?: Record<string, ResponseLink>;
}

export type Infer<T> = T extends z.ZodType ? z.output<T> : undefined;

export interface RouteDefinition<
  P extends z.ZodType | undefined,
  Q extends z.ZodType | undefined,
  B extends z.ZodType | undefined,
> {
  method: Method;
  /** OpenAPI form: /v1/workflows/{id} */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  /** The scope the key needs; 'none' for unauthenticated endpoints (health, OpenAPI, inbound hooks). */
  auth: Scope | 'none';
  params?: P;
  query?: Q;
  /** Request headers the endpoint reads, for the OpenAPI document (the handler checks them itself). */
  headers?: z.ZodObject;
  body?: B;
  /**
   * Media types the body may also come as, besides application/json (`+json` types: the body is read as
   * JSON either way), each with its schema and example, for the OpenAPI document; the handler tells them
   * apart (`koa.is`) and validates them itself.
   */
  otherBodyTypes?: Record<string, { schema: z.ZodType; example?: unknown }>;
  /**
   * 'schema' (default): the body must match `body` or the request is a 400 `invalid_request`.
   * 'handler': the handler validates the body itself (definitions, trigger input) with its own error code.
   */
  bodyValidation?: 'schema' | 'handler';
  /**
   * 'before' (default): the JSON body is parsed before the handler runs (malformed JSON: 400).
   * 'handler': the body is only read (size limit, 413): `body` is undefined, and the handler checks
   * `rawBody` first (inbound hooks verify a signature over it), then calls parseJsonBody itself.
   */
  bodyParsing?: 'before' | 'handler';
  bodyRequired?: boolean;
  responses: Record<number, ResponseSpec>;
  /** Error statuses this endpoint can answer, documented with the error body. */
  errors: number[];
  /** The example error body of a status, where this endpoint's differs from the usual one (openapi.ts). */
  errorExamples?: Record<number, ErrorExample>;
  /** The 400s it answers to requests its schemas allow (semantic-errors.ts), listed in its 400 response. */
  semanticErrors?: SemanticError[];
  /**
   * The endpoint acts on a run through the run's workers (approve, reject, cancel, retry), so it also
   * answers 503 `worker_unavailable`, which its 503 response describes (docs/api.md#when-no-worker-serves-a-run).
   */
  needsWorker?: boolean;
  handler: (ctx: RouteContext<Infer<P>, Infer<Q>, Infer<B>>) => Promise<RouteResult>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRoute = RouteDefinition<any, any, any>;

export function defineRoute<
  P extends z.ZodType | undefined = undefined,
  Q extends z.ZodType | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(route: RouteDefinition<P, Q, B>): AnyRoute {
  return route as AnyRoute;
}

export function koaPath(openApiPath: string): string {
  return openApiPath.replace(/\{(\w+)\}/g, ':$1');
}

function parseWith<T extends z.ZodType>(
  schema: T,
  value: unknown,
  where: string,
  error: (details: ReturnType<typeof zodDetails>) => AppError,
): z.output<T> {
  const parsed = parseUserJson(schema, value);
  if (!parsed.success)
    throw error(zodDetails(parsed.issues).map((d) => ({ ...d, path: `${where}${d.path}` })));
  return parsed.data;
}

export interface RouteMiddleware {
  authenticate(ctx: Koa.Context, scope: Scope): Promise<AuthContext>;
  rateLimit(ctx: Koa.Context, auth: AuthContext): Promise<void>;
}

/** The body an endpoint without a body schema accepts: nothing, or an empty object. */
const NO_FIELDS = z.strictObject({});

export function registerRoutes(
  router: Router,
  routes: AnyRoute[],
  services: Services,
  middleware: RouteMiddleware,
): void {
  for (const route of routes) {
    router[route.method](koaPath(route.path), async (ctx: Koa.Context) => {
      // The access log and the request metrics name the route by its pattern, never by its ids.
      ctx.state['route'] = route.path;
      const auth = route.auth === 'none' ? undefined : await middleware.authenticate(ctx, route.auth);
      if (auth) ctx.state['keyId'] = auth.keyId;
      if (auth) await middleware.rateLimit(ctx, auth);
      // No id can hold U+0000 (PostgreSQL cannot even store one): such an id is unknown, a 404.
      if (Object.values(ctx.params as Record<string, string>).some((value) => value.includes('\u0000')))
        throw notFound('not_found', `No resource at ${ctx.path}: ids never contain U+0000.`);
      const params: unknown = route.params
        ? parseWith(route.params, ctx.params, '/path', (d) => invalidRequest('Invalid path parameter.', d))
        : undefined;
      const query: unknown = route.query
        ? parseWith(route.query, ctx.query, '/query', (d) =>
            invalidRequest(`Invalid query: ${d[0]?.path} ${d[0]?.message}.`, d),
          )
        : undefined;
      const wantsBody = route.method === 'post' || route.method === 'put';
      const body = !wantsBody
        ? { present: false, raw: Buffer.alloc(0), value: undefined }
        : route.bodyParsing === 'handler'
          ? await readRawBody(ctx, services.config.bodyLimitBytes)
          : await readJsonBody(ctx, services.config.bodyLimitBytes);
      if (route.bodyRequired && !body.present)
        throw invalidRequest('This endpoint needs a JSON body.', [{ path: '', message: 'is required' }]);
      let value = body.value;
      if (!route.body && body.present) {
        // An endpoint that takes no body refuses one with fields instead of ignoring them (a misspelt or
        // unsupported option must not pass unnoticed); an empty object is fine.
        parseWith(NO_FIELDS, body.value, '', (d) =>
          invalidRequest(`This endpoint takes no body fields: ${d[0]?.path || '/'} ${d[0]?.message}.`, d),
        );
      }
      if (route.body && route.bodyValidation !== 'handler' && (body.present || route.bodyRequired)) {
        value = parseWith(route.body, body.value, '', (d) =>
          invalidRequest(`Invalid body: ${d[0]?.path || '/'} ${d[0]?.message}.`, d),
        );
      }
      const result = await route.handler({
        koa: ctx,
        services,
        params,
        query,
        body: value,
        rawBody: body.raw,
        auth: auth as AuthContext,
        requestId: String(ctx.state['requestId'] ?? ''),
      });
      ctx.status = result.status;
      if (result.headers) ctx.set(result.headers);
      if (result.body !== undefined) ctx.body = result.body;
    });
  }
}

/** Query `limit` (docs/api.md#pagination): default 20, at most 100. */
export const limitParam = z.coerce
  .number()
  .int('must be an integer')
  .min(1, 'must be at least 1')
  .max(100, 'must be at most 100')
  .default(20)
  .meta({ description: 'Page size (1-100, default 20).' });

/**
 * Cursors are base64url JSON that starts with `{"p":` (see cursor.ts), so the pattern says what the
 * service can accept; only a next_cursor the service issued for the same list and filters is valid.
 * No example: a cursor is bound to the workspace, the list and the filters it came from, so no fixed value
 * is one every caller could send (the lists' response examples show a next_cursor); a refused cursor is
 * one of the lists' semantic 400s (semantic-errors.ts LIST_CURSOR).
 */
export const CURSOR_PATTERN = /^eyJwIj[A-Za-z0-9_-]{2,4090}$/;

export const cursorParam = z
  .string()
  .regex(CURSOR_PATTERN, 'must be the next_cursor of a previous page')
  .optional()
  .meta({
    description:
      'The next_cursor of the previous page, passed as it is (opaque base64url). Only a cursor this list issued ' +
      'for the same filters is valid: any other value, even one matching the pattern, is 400 invalid_request.',
  });

export const paginated = <T extends z.ZodType>(item: T, id: string) =>
  z.object({ data: z.array(item), next_cursor: z.string().nullable() }).meta({ id });
