/**
 * The workspace console's files (docs/console.md), built by `npm run build` into dist/console and served
 * by the API process: hashed assets under /assets/ cached for good, index.html never cached, and
 * index.html for every browser navigation that no route answers (history-API paths like /runs/ex_...).
 * API clients keep the contract's JSON 404: only GET/HEAD requests that ask for text/html outside the
 * API's own paths fall back to the page.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import type Koa from 'koa';
import { consoleDirectory } from '../../platform/paths';

/**
 * The console's policy: everything from this origin, nothing inline. Scripts are the bundle's files
 * (Vite writes no inline script); styles are its CSS file, and the few computed positions (timeline
 * bars) are set through the CSSOM (`element.style.width = ...`), which `style-src 'self'` allows, unlike
 * `style="..."` attributes in markup.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Paths the console never claims, so their 404s stay the contract's JSON (and /docs stays its own). */
const RESERVED_PREFIXES = ['/v1', '/console/', '/docs', '/healthz', '/readyz'];

const IMMUTABLE = 'public, max-age=31536000, immutable';
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.svg', '.json', '.map', '.txt']);

interface ConsoleFile {
  body: Buffer;
  gzipped: Buffer | undefined;
  etag: string;
  type: string;
  cacheControl: string;
}

type ConsoleFiles = Map<string, ConsoleFile>;

function readFiles(root: string): ConsoleFiles | undefined {
  if (!fs.existsSync(path.join(root, 'index.html'))) return undefined;
  const files: ConsoleFiles = new Map();
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        walk(full);
        continue;
      }
      const urlPath = `/${path.relative(root, full).split(path.sep).join('/')}`;
      const body = fs.readFileSync(full);
      const extension = path.extname(entry.name);
      files.set(urlPath, {
        body,
        gzipped: COMPRESSIBLE.has(extension) && body.length > 1024 ? zlib.gzipSync(body) : undefined,
        etag: `"${crypto.createHash('sha256').update(body).digest('base64url').slice(0, 16)}"`,
        type: extension,
        // Vite names everything under assets/ by a hash of its content.
        cacheControl: urlPath.startsWith('/assets/') ? IMMUTABLE : 'no-cache',
      });
    }
  };
  walk(root);
  return files;
}

const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en">
  <head><meta charset="utf-8" /><title>Switchyard console not built</title></head>
  <body>
    <main>
      <h1>The Switchyard console is not built</h1>
      <p>This service serves its web console from <code>dist/console</code>, which is missing.
      Run <code>npm run build</code> (or <code>npm start</code>, which builds first), then reload this page.</p>
      <p>The API itself works: <a href="/v1/openapi.json">/v1/openapi.json</a>.</p>
    </main>
  </body>
</html>
`;

function isReserved(urlPath: string): boolean {
  return RESERVED_PREFIXES.some(
    (prefix) => urlPath === prefix || urlPath.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`),
  );
}

/** A navigation of a browser: it names text/html itself (API clients send application/json or *\/*). */
function wantsHtml(ctx: Koa.Context): boolean {
  return (ctx.method === 'GET' || ctx.method === 'HEAD') && ctx.get('accept').includes('text/html');
}

function send(ctx: Koa.Context, file: ConsoleFile): void {
  ctx.set({ 'Cache-Control': file.cacheControl, ETag: file.etag, Vary: 'Accept-Encoding' });
  if (file.type === '.html') ctx.set('Content-Security-Policy', CONSOLE_CSP);
  ctx.type = file.type;
  ctx.status = 200;
  if (ctx.fresh) {
    ctx.status = 304;
    return;
  }
  if (file.gzipped && ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
    ctx.set('Content-Encoding', 'gzip');
    ctx.body = file.gzipped;
  } else {
    ctx.body = file.body;
  }
}

/**
 * The console's middleware, placed just before the router. Files of the build answer at once; any other
 * request goes to the router, and a browser navigation that no route answered gets index.html.
 * `root` is read on first use and kept; while it is missing, it is looked for again on each request,
 * so a service started before `npm run build` serves the console once it is built.
 */
export function serveConsole(root: string = consoleDirectory): Koa.Middleware {
  let files: ConsoleFiles | undefined;
  const load = () => (files ??= readFiles(root));
  return async (ctx, next) => {
    const isRead = ctx.method === 'GET' || ctx.method === 'HEAD';
    const file =
      isRead && ctx.path !== '/index.html' && !isReserved(ctx.path) ? load()?.get(ctx.path) : undefined;
    if (file) return send(ctx, file);
    await next();
    if (ctx.status !== 404 || ctx.body != null || !wantsHtml(ctx) || isReserved(ctx.path)) return;
    // A missing hashed asset is a stale page asking for an old build: a 404, not the page.
    if (ctx.path.startsWith('/assets/')) return;
    const index = load()?.get('/index.html');
    if (index) return send(ctx, index);
    ctx.status = 503;
    ctx.type = 'html';
    ctx.set('Content-Security-Policy', CONSOLE_CSP);
    ctx.body = NOT_BUILT_PAGE;
  };
}
