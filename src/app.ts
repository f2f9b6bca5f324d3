/**
 * createApp(services): the Koa application with every middleware and route. It never listens itself:
 * main.ts does, and tests drive app.callback() directly.
 */
import Router from '@koa/router';
import Koa from 'koa';
import { AppError } from '../platform/errors';
import { apiKeyRoutes } from './api/api-keys';
import { eventRoutes } from './api/events';
import { bulkOperationRoutes } from './api/bulk-operations';
import { executionRoutes } from './api/executions';
import { healthRoutes } from './api/health';
import { hookRoutes } from './api/inbound-hooks';
import { buildOpenApiDocument } from './api/openapi';
import { registerRoutes, type AnyRoute } from './api/route';
import { scheduleRoutes } from './api/schedules';
import { secretRoutes } from './api/secrets';
import { webhookRoutes } from './api/webhooks';
import { workspaceRoutes } from './api/workspace';
import { consoleSessionRoutes } from './console/session-routes';
import { serveConsole } from './console/static';
import { workflowRoutes } from './api/workflows';
import { registerApiReference } from './http/api-reference';
import { Authenticator } from './http/auth';
import { codecRoutes } from './http/codec-server';
import { errorHandler } from './http/error-handler';
import { createRateLimiter, enforceRateLimits } from './http/rate-limit';
import { requestId } from './http/request-id';
import { securityHeaders } from './http/security-headers';
import { metrics, refusalReason } from '../platform/observability/metrics';
import { metricsRoute } from '../platform/observability/metrics-server';
import { requestSpans } from '../platform/observability/tracing';
import type { Services } from './services';
import { projectVersion } from '../platform/paths';

export function apiRoutes(openApiDocument: () => Record<string, unknown>): AnyRoute[] {
  return [
    ...healthRoutes(openApiDocument),
    ...apiKeyRoutes(),
    ...workflowRoutes(),
    ...scheduleRoutes(),
    ...executionRoutes(),
    ...eventRoutes(),
    ...bulkOperationRoutes(),
    ...secretRoutes(),
    ...webhookRoutes(),
    ...hookRoutes(),
    ...workspaceRoutes(),
  ];
}

/** The OpenAPI document of this version of the service (built once; it depends on code only). */
export function openApiDocument(): Record<string, unknown> {
  cachedDocument ??= buildOpenApiDocument(apiRoutes(openApiDocument), projectVersion);
  return cachedDocument;
}
let cachedDocument: Record<string, unknown> | undefined;

export function createApp(services: Services): Koa {
  // Behind a trusted proxy (TRUST_PROXY), X-Forwarded-Proto says whether the client used HTTPS (the
  // session cookie's Secure and name follow it); otherwise such headers are ignored.
  const app = new Koa({ proxy: services.config.trustProxy });
  // Errors are rendered by errorHandler; Koa's own logging of them would double every 5xx.
  app.silent = true;
  const router = new Router();
  const authenticator = new Authenticator(services.db, services.logger, services.config.console.secureCookie);
  const limiter = createRateLimiter({
    ...services.config.rateLimit,
    name: 'api-key',
    db: services.db,
    logger: services.logger,
  });

  const workspaceLimiter = createRateLimiter({
    ...services.config.workspaceRateLimit,
    name: 'workspace',
    db: services.db,
    logger: services.logger,
  });

  registerRoutes(router, apiRoutes(openApiDocument), services, {
    authenticate: (ctx, scope) => authenticator.authenticate(ctx, scope),
    rateLimit: (ctx, auth) =>
      enforceRateLimits(ctx, [
        { limiter, key: auth.keyId, what: 'this API key' },
        { limiter: workspaceLimiter, key: auth.workspaceId, what: 'this workspace' },
      ]),
  });
  registerApiReference(router, projectVersion);
  consoleSessionRoutes(router, services);
  codecRoutes(router, services, authenticator);

  app.use(requestId());
  if (services.tracing) app.use(requestSpans(services.tracing, requestRoute));
  app.use(securityHeaders());
  app.use(accessLog(services));
  app.use(errorHandler(services.logger));
  app.use(triggerOutcomes());
  // Prometheus scrapes here unless METRICS_PORT gives it a port of its own (docs/operations.md#metrics).
  if (services.config.metrics.enabled && services.config.metrics.port === undefined)
    app.use(metricsRoute(services.config.metrics.token));
  // Runs around the router: turns "no route answered" into the contract's 404, and the router's bare
  // 405/501 (it sets the Allow header) into 405 method_not_allowed.
  app.use(async (ctx, next) => {
    await next();
    if (ctx.body != null) return;
    if (ctx.status === 405 || ctx.status === 501) {
      throw new AppError(405, 'method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}.`, {
        headers: { Allow: ctx.response.get('Allow') },
      });
    }
    if (ctx.status === 404) throw new AppError(404, 'not_found', `No route ${ctx.method} ${ctx.path}.`);
  });
  // The web console (dist/console): its files, and index.html for browser navigations no route answers.
  app.use(serveConsole());
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

/**
 * One line per request at info (a 5xx at warn): method, route pattern, status, duration, request id and
 * the API key's id (never the key). Level checks first, so a process logging at warn pays nothing here.
 */
function accessLog(services: Services): Koa.Middleware {
  const log = services.logger.child({ component: 'http' });
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const ms = performance.now() - started;
      const route = requestRoute(ctx);
      metrics.httpRequests.observe({ method: ctx.method, route, status: ctx.status }, ms / 1000);
      const level = ctx.status >= 500 ? 'warn' : 'info';
      if (log.isLevelEnabled(level)) {
        log[level](
          {
            method: ctx.method,
            route,
            path: ctx.path,
            status: ctx.status,
            ms: Math.round(ms * 10) / 10,
            requestId: ctx.state['requestId'] as string,
            keyId: ctx.state['keyId'] as string | undefined,
          },
          'request',
        );
      }
    }
  };
}

/** The routes that start executions, and their `trigger` label. */
const TRIGGER_ROUTES: Record<string, string> = {
  '/v1/workflows/{id}/trigger': 'api',
  '/v1/hooks/{workflow}': 'hook',
};

/**
 * Counts trigger requests accepted and refused by reason (switchyard_triggers_total). Runs inside the
 * error handler, so it sees the error a refusal throws.
 */
function triggerOutcomes(): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      const trigger = TRIGGER_ROUTES[requestRoute(ctx)];
      const status = (error as { status?: unknown }).status;
      if (trigger) {
        const code = typeof status === 'number' ? status : 500;
        metrics.triggers.inc({ trigger, outcome: 'refused', reason: refusalReason(error, code) });
      }
      throw error;
    }
    const trigger = TRIGGER_ROUTES[requestRoute(ctx)];
    if (trigger) {
      if (ctx.status < 300) metrics.triggers.inc({ trigger, outcome: 'accepted', reason: '' });
      else
        metrics.triggers.inc({ trigger, outcome: 'refused', reason: refusalReason(undefined, ctx.status) });
    }
  };
}

/** The route's pattern (`/v1/workflows/{id}`), or `unmatched` when no route answered (a 404, a console file). */
export function requestRoute(ctx: Koa.Context): string {
  const route: unknown = ctx.state['route'] ?? (ctx as { _matchedRoute?: unknown })._matchedRoute;
  return typeof route === 'string' ? route : 'unmatched';
}
