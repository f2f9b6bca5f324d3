/**
 * The API reference at /docs: Redoc's standalone bundle (the npm package `redoc`, copied into dist by the build)
 * renders GET /v1/openapi.json. The page loads everything from this service, nothing from a CDN, so it works
 * offline and under a Content-Security-Policy that names no other origin.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import zlib from 'node:zlib';
import type Router from '@koa/router';
import type Koa from 'koa';
import { apiReferenceBundlePath } from '../../platform/paths';

import { API_REFERENCE_PATH } from './paths';

export { API_REFERENCE_PATH };
const ASSETS_PATH = `${API_REFERENCE_PATH}/assets`;

/**
 * The page's policy, as narrow as Redoc allows:
 * - scripts from this origin only (the bundle and a separate init script: no inline script);
 * - style-src 'unsafe-inline': Redoc styles itself with styled-components and the bundle's style-loader,
 *   which insert <style> elements, some while the bundle is still evaluating, before Redoc's `nonce` option
 *   can reach them, so neither a nonce nor a hash covers them. Nothing can leave through CSS either: images,
 *   fonts and connections are limited to this origin and data: below;
 * - worker-src blob:: Redoc's search index runs in a web worker that the bundle creates from a blob: URL;
 * - img-src data:: the favicon placeholder and the attribution logo (see loadRedocBundle);
 * - connect-src 'self': the OpenAPI document.
 */
export const API_REFERENCE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'unsafe-inline'",
  'img-src data:',
  "connect-src 'self'",
  'worker-src blob:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Redoc's sidebar shows this logo beside "API docs by Redocly", loaded from its CDN. */
const REDOC_CDN_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
/** An empty image instead: the attribution stays (as text), and no request leaves the service. */
const EMPTY_IMAGE = 'data:image/svg+xml,%3Csvg%20xmlns=%22http://www.w3.org/2000/svg%22/%3E';

interface Asset {
  /** The file name under /docs/assets/, with a hash of the content so that it may be cached for good. */
  name: string;
  body: Buffer;
  etag: string;
  contentType: string;
  /** Made on the first request that accepts gzip (the bundle: 1.1 MB raw, some 330 KB gzipped). */
  gzipped?: Buffer;
}

function asset(baseName: string, extension: string, contentType: string, content: string | Buffer): Asset {
  const body = Buffer.isBuffer(content) ? content : Buffer.from(content);
  const hash = crypto.createHash('sha256').update(body).digest('base64url').slice(0, 12);
  return { name: `${baseName}.${hash}.${extension}`, body, etag: `"${hash}"`, contentType };
}

function loadRedocBundle(): Asset {
  if (!fs.existsSync(apiReferenceBundlePath)) {
    throw new Error(
      `The API reference's renderer is missing (${apiReferenceBundlePath}): run \`npm run build\`.`,
    );
  }
  const source = fs.readFileSync(apiReferenceBundlePath, 'utf8').replaceAll(REDOC_CDN_LOGO, EMPTY_IMAGE);
  return asset('redoc.standalone', 'js', 'text/javascript; charset=utf-8', source);
}

/** Redoc's options: https://redocly.com/docs/redoc/v2.x/config (the `redoc` package's README). */
const INIT_SCRIPT = `'use strict';
Redoc.init(
  '/v1/openapi.json',
  { expandResponses: '200,201,202,204', jsonSampleExpandLevel: 3, hideDownloadButton: false },
  document.getElementById('redoc'),
);
`;

function page(title: string, scripts: Asset[]): string {
  const tags = scripts.map((s) => `    <script src="${ASSETS_PATH}/${s.name}"></script>`).join('\n');
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${title}</title>
    <link rel="icon" href="data:," />
    <style>
      body { margin: 0; }
    </style>
  </head>
  <body>
    <noscript>This page needs JavaScript. The OpenAPI document it renders is at <a href="/v1/openapi.json">/v1/openapi.json</a>.</noscript>
    <div id="redoc"></div>
${tags}
  </body>
</html>
`;
}

interface ApiReference {
  html: string;
  assets: Asset[];
}

let loaded: ApiReference | undefined;

/** The page and its assets, read once per process (the first createApp). */
function apiReference(version: string): ApiReference {
  if (!loaded) {
    const assets = [loadRedocBundle(), asset('init', 'js', 'text/javascript; charset=utf-8', INIT_SCRIPT)];
    loaded = { html: page(`Switchyard API ${version} reference`, assets), assets };
  }
  return loaded;
}

function serveAsset(file: Asset): Koa.Middleware {
  return async (ctx) => {
    ctx.set({
      'Cache-Control': 'public, max-age=31536000, immutable',
      ETag: file.etag,
      Vary: 'Accept-Encoding',
    });
    ctx.type = file.contentType;
    ctx.status = 200;
    if (ctx.fresh) {
      ctx.status = 304;
      return;
    }
    if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
      file.gzipped ??= zlib.gzipSync(file.body);
      ctx.set('Content-Encoding', 'gzip');
      ctx.body = file.gzipped;
    } else {
      ctx.body = file.body;
    }
  };
}

/** GET /docs (and /docs/) and the files it loads; no API key: the document it shows is public. */
export function registerApiReference(router: Router, version: string): void {
  const reference = apiReference(version);
  const servePage: Koa.Middleware = async (ctx) => {
    ctx.set('Content-Security-Policy', API_REFERENCE_CSP);
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = reference.html;
  };
  router.get(API_REFERENCE_PATH, servePage);
  router.get(`${API_REFERENCE_PATH}/`, servePage);
  for (const file of reference.assets) router.get(`${ASSETS_PATH}/${file.name}`, serveAsset(file));
}
