/**
 * The API reference at /docs: served by the service itself (no CDN, no API key) under a strict
 * Content-Security-Policy, and rendered by headless Chromium with every operation of the OpenAPI document.
 */
import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import request from 'supertest';
import { API_REFERENCE_CSP } from '../../src/http/api-reference';
import { launchBrowser, watchContext } from '../support/browser';
import { startTestService, type TestService } from '../support/stack';

/** The document, walked as plain JSON. */
type Json = any;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

interface Operation {
  label: string;
  operationId: string;
  summary: string;
}

/** Every operation of the document: paths × methods, and the outbound events under `webhooks`. */
function operationsOf(doc: Json): Operation[] {
  const operations: Operation[] = [];
  for (const [group, prefix] of [
    [doc.paths, ''],
    [doc.webhooks ?? {}, 'webhook '],
  ] as const) {
    for (const [path, item] of Object.entries<Json>(group)) {
      for (const method of METHODS) {
        const operation = item[method];
        if (!operation) continue;
        operations.push({
          label: `${prefix}${method.toUpperCase()} ${path}`,
          operationId: operation.operationId,
          summary: operation.summary,
        });
      }
    }
  }
  return operations;
}

/** The little of the DOM the page functions use (the project compiles without the DOM library). */
interface PageDocument {
  querySelectorAll(selector: string): Iterable<{
    id: string;
    querySelector(selector: string): { textContent: string | null } | null;
  }> & { length: number };
}
declare const document: PageDocument;

function scriptSources(html: string): string[] {
  return [...html.matchAll(/<script\b[^>]*\bsrc="([^"]+)"/g)].map((match) => match[1]!);
}

describe('API reference at /docs @integration', function () {
  let service: TestService;
  let doc: Json;
  before(async function () {
    this.timeout(120_000);
    service = await startTestService({ worker: false });
    doc = (await request(service.url).get('/v1/openapi.json').expect(200)).body;
  });
  after(async () => service?.stop());

  describe('over HTTP', () => {
    for (const path of ['/docs', '/docs/']) {
      it(`answers ${path} with the HTML page under its own Content-Security-Policy, without an API key`, async () => {
        const res = await request(service.url).get(path).expect(200);
        expect(res.headers['content-type']).to.equal('text/html; charset=utf-8');
        expect(res.headers['content-security-policy']).to.equal(API_REFERENCE_CSP);
        expect(res.headers['x-content-type-options']).to.equal('nosniff');
        expect(res.text).to.include('<div id="redoc"></div>');
      });
    }

    it('allows scripts from the service only, none inline, and names no other origin', () => {
      const directives = new Map(
        API_REFERENCE_CSP.split(';').map((d) => {
          const [name, ...values] = d.trim().split(/\s+/);
          return [name!, values];
        }),
      );
      expect(directives.get('default-src')).to.deep.equal(["'none'"]);
      expect(directives.get('script-src')).to.deep.equal(["'self'"]);
      expect(API_REFERENCE_CSP).not.to.match(/https?:|\*|unsafe-eval/);
    });

    it('loads its scripts from the service, with long-lived caching, gzip and revalidation', async () => {
      const html = (await request(service.url).get('/docs')).text;
      expect(html).not.to.match(/(src|href)="(https?:)?\/\//);
      expect(html).not.to.match(/<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
      const sources = scriptSources(html);
      expect(sources).to.have.length(2);
      for (const src of sources) {
        expect(src).to.match(/^\/docs\/assets\/[\w.-]+\.js$/);
        const res = await request(service.url).get(src).set('Accept-Encoding', 'gzip').expect(200);
        expect(res.headers['content-type']).to.equal('text/javascript; charset=utf-8');
        expect(res.headers['content-encoding']).to.equal('gzip');
        expect(res.headers['cache-control']).to.equal('public, max-age=31536000, immutable');
        expect(res.text.length).to.be.greaterThan(100);
        await request(service.url).get(src).set('If-None-Match', String(res.headers['etag'])).expect(304);
        const plain = await request(service.url).get(src).set('Accept-Encoding', 'identity').expect(200);
        expect(plain.headers['content-encoding']).to.equal(undefined);
      }
      // The renderer is Redoc's standalone bundle from node_modules.
      const bundle = await request(service.url).get(sources[0]!).expect(200);
      expect(bundle.text).to.include('Redoc');
      expect(bundle.text).not.to.include('cdn.redoc.ly');
    });

    it('answers an unknown asset with 404 not_found', async () => {
      const res = await request(service.url).get('/docs/assets/nothing.js').expect(404);
      expect(res.body.error.code).to.equal('not_found');
    });

    it('is not an operation of the OpenAPI document', () => {
      expect(Object.keys(doc.paths).filter((p) => p.startsWith('/docs'))).to.deep.equal([]);
    });
  });

  describe('in headless Chromium', () => {
    let browser: Browser;
    before(async function () {
      // A first run on a machine without Chromium installs it (apt-get): minutes, not seconds.
      this.timeout(600_000);
      browser = await launchBrowser();
    });
    after(async () => browser?.close());

    it('renders every operation of the OpenAPI document, from the service alone, without errors', async function () {
      this.timeout(60_000);
      const operations = operationsOf(doc);
      expect(operations.length).to.be.greaterThan(20);
      const context = await browser.newContext();
      try {
        const watch = watchContext(context, new URL(service.url).origin);
        const page = await context.newPage();
        await page.goto(`${service.url}/docs`);
        // Redoc renders each operation as a section with id "operation/<operationId>".
        await page.waitForFunction(
          (count) => document.querySelectorAll('[id^="operation/"]').length >= count,
          operations.length,
          { timeout: 30_000 },
        );
        const rendered = await page.evaluate(() =>
          Object.fromEntries(
            [...document.querySelectorAll('[id^="operation/"]')].map((section) => [
              section.id.slice('operation/'.length),
              section.querySelector('h2')?.textContent ?? '',
            ]),
          ),
        );
        const missing = operations.filter((op) => !rendered[op.operationId]?.includes(op.summary));
        expect(
          missing.map((op) => `${op.label} (${op.operationId}: ${op.summary})`),
          'operations not rendered',
        ).to.deep.equal([]);
        expect(await page.title()).to.match(/^Switchyard API .* reference$/);
        // The sections come in the document's tag order (what a newcomer needs first, first).
        const sections = await page.evaluate(() =>
          [...document.querySelectorAll('[id^="tag/"]')]
            .filter((section) => !section.id.slice(4).includes('/'))
            .map((section) => section.querySelector('h2, h1')?.textContent),
        );
        expect(sections).to.deep.equal((doc['tags'] as { name: string }[]).map((tag) => tag.name));
        // Search runs in the web worker the policy lets Redoc start from a blob: URL.
        const approve = operations.find((op) => op.operationId === 'approveStep');
        expect(approve, 'the approveStep operation').to.not.equal(undefined);
        await page.fill('input.search-input', 'approval');
        await page
          .locator('[data-role="search:results"]')
          .getByText(approve!.summary)
          .waitFor({ timeout: 10_000 });
        expect(watch.foreignRequests, 'requests that left the service').to.deep.equal([]);
        expect(watch.pageErrors, 'page errors').to.deep.equal([]);
        expect(watch.consoleErrors, 'console errors').to.deep.equal([]);
      } finally {
        await context.close();
      }
    });
  });
});
