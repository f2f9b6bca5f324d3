/** The console's static serving (src/console/static.ts) on a bare Koa app: files, fallback, not built. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import Koa from 'koa';
import request from 'supertest';
import { CONSOLE_CSP, serveConsole } from '../../src/console/static';

function appOver(root: string): Koa {
  const app = new Koa();
  app.use(serveConsole(root));
  app.use(async (ctx, next) => {
    if (ctx.path === '/v1/thing') ctx.body = { ok: true };
    else await next();
  });
  return app;
}

describe('console static files', () => {
  let root: string;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'sy-console-static-'));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('says to run npm run build while dist/console is missing, then serves it once built', async () => {
    const app = appOver(root).callback();
    const missing = await request(app).get('/').set('Accept', 'text/html').expect(503);
    expect(missing.text).to.include('npm run build');
    expect(missing.headers['content-security-policy']).to.equal(CONSOLE_CSP);

    fs.mkdirSync(path.join(root, 'assets'));
    fs.writeFileSync(path.join(root, 'index.html'), '<!doctype html><title>console</title>');
    fs.writeFileSync(path.join(root, 'assets', 'index-abc.js'), 'console.log(1)');
    const page = await request(app).get('/runs/ex_1').set('Accept', 'text/html').expect(200);
    expect(page.text).to.include('<title>console</title>');
    const asset = await request(app).get('/assets/index-abc.js').expect(200);
    expect(asset.headers['cache-control']).to.equal('public, max-age=31536000, immutable');
  });

  it('falls back to the page only for browser navigations outside the API', async () => {
    fs.writeFileSync(path.join(root, 'index.html'), '<!doctype html><title>console</title>');
    const app = appOver(root).callback();
    await request(app).get('/runs').set('Accept', 'application/json').expect(404);
    await request(app).get('/runs').set('Accept', '*/*').expect(404);
    await request(app).post('/runs').set('Accept', 'text/html').expect(404);
    await request(app).get('/v1/other').set('Accept', 'text/html').expect(404);
    await request(app).get('/docs/x').set('Accept', 'text/html').expect(404);
    await request(app).get('/console/anything').set('Accept', 'text/html').expect(404);
    expect((await request(app).get('/v1/thing').set('Accept', 'text/html').expect(200)).body).to.deep.equal({
      ok: true,
    });
    await request(app).head('/workflows').set('Accept', 'text/html').expect(200);
    await request(app).get('/index.html').set('Accept', 'application/json').expect(404);
  });
});
