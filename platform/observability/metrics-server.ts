/**
 * Where Prometheus scrapes (docs/operations.md#metrics): `GET /metrics` on a port of its own
 * (METRICS_PORT), or on the API's port when none is set. The page is this process's registry followed
 * by the Temporal SDK's metrics (its exporter listens on loopback only; this page relays it), so each
 * process is one scrape target.
 */
import http from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import type Koa from 'koa';
import { metrics, METRICS_CONTENT_TYPE } from './metrics';

let sdkMetricsUrl: string | undefined;

/** Where the Temporal SDK's Prometheus exporter of this process listens (installTemporalRuntime). */
export function setSdkMetricsUrl(url: string | undefined): void {
  sdkMetricsUrl = url;
}

/** The page: our metrics, then the SDK's (skipped when it does not answer within a second). */
export async function renderMetrics(): Promise<string> {
  const ours = await metrics.registry.metrics();
  if (!sdkMetricsUrl) return ours;
  const sdk = await fetch(sdkMetricsUrl, { signal: AbortSignal.timeout(1_000) })
    .then((response) => (response.ok ? response.text() : ''))
    .catch(() => '');
  return sdk ? `${ours}\n${sdk}` : ours;
}

/** Whether a request may read the page: any, without METRICS_TOKEN; with it, `Authorization: Bearer <token>`. */
export function metricsAuthorized(authorization: string | undefined, token: string | undefined): boolean {
  if (!token) return true;
  const presented = Buffer.from(authorization ?? '');
  const expected = Buffer.from(`Bearer ${token}`);
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}

/** True for a client on this machine (127.0.0.0/8, ::1, and IPv4-mapped loopback). */
export function isLoopbackClient(address: string | undefined): boolean {
  if (!address || !ipaddr.isValid(address)) return false;
  return ipaddr.process(address).range() === 'loopback';
}

/**
 * `GET /metrics` in the API's Koa app (when no METRICS_PORT is set). The API's port is usually public and
 * the labels name workspaces and workflows, so without METRICS_TOKEN the page answers only clients on
 * this machine (the address of the connection itself: forwarded headers do not count).
 */
export function metricsRoute(token: string | undefined): Koa.Middleware {
  return async (ctx, next) => {
    if (ctx.path !== '/metrics' || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) {
      await next();
      return;
    }
    ctx.state['route'] = '/metrics';
    if (!token && !isLoopbackClient(ctx.req.socket.remoteAddress)) {
      ctx.status = 403;
      ctx.type = 'text/plain';
      ctx.body = 'Metrics answer only local clients: set METRICS_TOKEN, or METRICS_PORT and METRICS_HOST\n';
      return;
    }
    if (!metricsAuthorized(ctx.get('authorization') || undefined, token)) {
      ctx.status = 401;
      ctx.set('WWW-Authenticate', 'Bearer');
      ctx.type = 'text/plain';
      ctx.body = 'METRICS_TOKEN required\n';
      return;
    }
    ctx.set('Cache-Control', 'no-store');
    ctx.type = METRICS_CONTENT_TYPE;
    ctx.body = await renderMetrics();
  };
}

/** A server of its own on METRICS_PORT and METRICS_HOST (127.0.0.1 unless set): `GET /metrics` only. */
export async function startMetricsServer(options: {
  host: string;
  port: number;
  token: string | undefined;
}): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const url = req.url?.split('?')[0];
    if (url !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: GET /metrics\n');
      return;
    }
    if (!metricsAuthorized(req.headers.authorization, options.token)) {
      res.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer' }).end();
      return;
    }
    renderMetrics().then(
      (text) =>
        res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE, 'cache-control': 'no-store' }).end(text),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, resolve);
  });
  return server;
}
