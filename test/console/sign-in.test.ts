/**
 * The console is served by the API process at / under a strict Content-Security-Policy, and signs in
 * with an API key that it keeps nowhere a script could read (docs/console.md).
 */
import { expect } from 'chai';
import request from 'supertest';
import { CONSOLE_CSP } from '../../src/console/static';
import {
  expectAccessible,
  expectNoErrors,
  openConsole,
  signIn,
  startConsoleHarness,
  type ConsoleHarness,
} from './harness';

describe('Console: serving and sign-in @browser', function () {
  this.timeout(120_000);
  let harness: ConsoleHarness;

  before(async () => {
    harness = await startConsoleHarness({ worker: false });
  });
  after(async () => harness?.close());

  it('serves index.html at / and for history routes, never cached, under the console CSP', async () => {
    for (const path of ['/', '/runs/ex_123', '/settings']) {
      const res = await request(harness.service.url).get(path).set('Accept', 'text/html').expect(200);
      expect(res.headers['content-type']).to.equal('text/html; charset=utf-8');
      expect(res.headers['cache-control']).to.equal('no-cache');
      expect(res.headers['content-security-policy']).to.equal(CONSOLE_CSP);
      expect(res.headers['x-content-type-options']).to.equal('nosniff');
      expect(res.headers['referrer-policy']).to.equal('no-referrer');
      expect(res.text).to.match(
        /<script type="module" crossorigin src="\/assets\/index-[\w-]+\.js"><\/script>/,
      );
      expect(res.text).not.to.match(/<script(?![^>]*\bsrc=)[^>]*>/);
    }
    expect(CONSOLE_CSP).to.include("script-src 'self'").and.not.include('unsafe');
  });

  it('serves hashed assets for a year, immutable, with their types', async () => {
    const html = (await request(harness.service.url).get('/').set('Accept', 'text/html')).text;
    const assets = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets.some((a) => a.endsWith('.js'))).to.equal(true);
    expect(assets.some((a) => a.endsWith('.css'))).to.equal(true);
    for (const asset of assets) {
      const res = await request(harness.service.url).get(asset).expect(200);
      expect(res.headers['cache-control']).to.equal('public, max-age=31536000, immutable');
      expect(res.headers['content-type']).to.match(
        asset.endsWith('.js') ? /^text\/javascript/ : /^text\/css/,
      );
      await request(harness.service.url)
        .get(asset)
        .set('If-None-Match', res.headers['etag'] as string)
        .expect(304);
    }
    await request(harness.service.url).get('/assets/index-missing.js').set('Accept', 'text/html').expect(404);
  });

  it('leaves the API its JSON 404s, /docs and the health routes', async () => {
    const api = await request(harness.service.url).get('/runs/ex_123').expect(404);
    expect(api.body.error.code).to.equal('not_found');
    const v1 = await request(harness.service.url).get('/v1/nothing').set('Accept', 'text/html').expect(404);
    expect(v1.body.error.code).to.equal('not_found');
    const post = await request(harness.service.url).post('/runs').set('Accept', 'text/html').expect(404);
    expect(post.body.error.code).to.equal('not_found');
    const docs = await request(harness.service.url).get('/docs').set('Accept', 'text/html').expect(200);
    expect(docs.text).to.include('id="redoc"');
    await request(harness.service.url).get('/healthz').set('Accept', 'text/html').expect(200);
    const session = await request(harness.service.url).get('/console/session').set('Accept', 'text/html');
    expect(session.status).to.equal(401);
  });

  it('signs in with a key, shows the workspace and scopes, and keeps the key nowhere a script can read', async () => {
    const { workspaceId, key } = await harness.service.newWorkspace(['write']);
    const tab = await openConsole(harness);
    try {
      const { page } = tab;
      await expectAccessible(page, 'the sign-in page');
      await signIn(page, key);
      expect(await page.getByTestId('workspace').textContent()).to.equal(workspaceId);
      expect(await page.getByTestId('scopes').textContent()).to.equal('write');
      expect(await page.getByLabel('API key').count()).to.equal(0);

      const readable = await page.evaluate<string>(`JSON.stringify({
        cookie: document.cookie,
        local: Object.entries(localStorage),
        session: Object.entries(sessionStorage),
        html: document.documentElement.outerHTML,
      })`);
      expect(readable).not.to.include(key);
      expect(readable).not.to.include(key.slice(3));
      const cookies = await tab.context.cookies();
      expect(cookies.map((c) => [c.name, c.httpOnly, c.sameSite])).to.deep.equal([
        ['switchyard_session', true, 'Strict'],
      ]);

      // A reload keeps the session (the cookie), and the console reads its CSRF token again.
      await page.reload();
      await page.getByTestId('workspace').waitFor();
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('API key').waitFor();
      expect(await tab.context.cookies()).to.deep.equal([]);
      await page.reload();
      await page.getByLabel('API key').waitFor();
      expectNoErrors(tab.watch);
    } finally {
      await tab.close();
    }
  });

  it("a wrong key: the contract's message and request_id, and no session", async () => {
    const tab = await openConsole(harness);
    try {
      await tab.page.getByLabel('API key').fill('sk_notakeyatallnotakeyatallnotakeyatall00');
      await tab.page.getByRole('button', { name: 'Sign in' }).click();
      const alert = tab.page.getByRole('alert');
      await alert.waitFor();
      expect(await alert.textContent()).to.include('Unknown or revoked API key.');
      expect(await tab.page.getByTestId('request-id').textContent()).to.match(/^req_/);
      expect(await tab.context.cookies()).to.deep.equal([]);
      await expectAccessible(tab.page, 'the sign-in page with an error');
      expectNoErrors(tab.watch, [/status of 401/]);
    } finally {
      await tab.close();
    }
  });

  it('a key revoked elsewhere ends the session: the next call brings the sign-in form back', async () => {
    const { workspaceId, key } = await harness.service.newWorkspace(['read']);
    const admin = await harness.service.newKey(workspaceId, ['admin']);
    const tab = await openConsole(harness);
    try {
      const { page } = tab;
      await signIn(page, key);
      const keys = await harness.service.api(admin).get('/v1/api-keys');
      const id = (keys.body.data as { id: string; scopes: string[] }[]).find(
        (k) => k.scopes[0] === 'read',
      )!.id;
      await harness.service.api(admin).delete(`/v1/api-keys/${id}`).expect(204);

      // The runs page refreshes itself: its next read may bring the form back before this click does (the
      // link is then gone). Either call is one after the revocation, and the form must come back.
      await page
        .getByRole('link', { name: 'Workflows' })
        .click({ timeout: 5_000 })
        .catch(() => undefined);
      await page.getByLabel('API key').waitFor();
      const logged = tab.watch.consoleErrors.length;
      // The page no longer asks the service on the next visit: the form shows at once, nothing is logged.
      await page.reload();
      await page.getByLabel('API key').waitFor();
      expect(tab.watch.consoleErrors.length).to.equal(logged);
      expectNoErrors(tab.watch, [/status of 401/]);
    } finally {
      await tab.close();
    }
  });
});
