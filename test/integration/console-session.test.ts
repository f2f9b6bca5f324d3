/**
 * The web console's sign-in (docs/console.md): an API key is exchanged once for a session in an
 * HttpOnly, SameSite=Strict cookie; /v1 accepts that cookie with the key's scopes, and asks for the
 * session's CSRF token on every request that changes something.
 */
import { expect } from 'chai';
import { startTestService, type TestService } from '../support/stack';

interface SessionBody {
  workspace: { id: string; name: string };
  key: { id: string; name: string; prefix: string; scopes: string[] };
  csrf_token: string;
  expires_at: string;
  temporal: { ui_url: string | null; namespace: string };
}

describe('Console sessions @integration', function () {
  this.timeout(120_000);
  let service: TestService;

  before(async () => {
    service = await startTestService({ env: { TEMPORAL_UI_URL: 'http://temporal-ui.example:8080/' } });
  });
  after(async () => {
    await service?.stop();
  });

  /** Signs in with a key; returns the cookie pair to send back, the Set-Cookie header and the body. */
  async function signIn(apiKey: string) {
    const response = await fetch(`${service.url}/console/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: apiKey }),
    });
    expect(response.status, await response.clone().text()).to.equal(201);
    const setCookie = response.headers.get('set-cookie') ?? '';
    const cookie = setCookie.split(';')[0]!;
    return { cookie, setCookie, body: (await response.json()) as SessionBody };
  }

  function call(path: string, init: { cookie: string; method?: string; csrf?: string; body?: unknown }) {
    return fetch(`${service.url}${path}`, {
      method: init.method ?? 'GET',
      headers: {
        cookie: init.cookie,
        ...(init.csrf ? { 'x-csrf-token': init.csrf } : {}),
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    });
  }

  it('signs in with a key: an HttpOnly, SameSite=Strict cookie, the workspace and scopes, never the key', async () => {
    const { workspaceId, key } = await service.newWorkspace(['write']);
    const { setCookie, body } = await signIn(key);
    expect(setCookie).to.match(/^switchyard_session=cst_[A-Za-z0-9]+;/);
    expect(setCookie.toLowerCase()).to.include('httponly');
    expect(setCookie.toLowerCase()).to.include('samesite=strict');
    expect(setCookie.toLowerCase()).to.include('path=/');
    expect(body.workspace.id).to.equal(workspaceId);
    expect(body.key.scopes).to.deep.equal(['write']);
    expect(body.key.prefix).to.equal(key.slice(0, 9));
    expect(body.csrf_token).to.match(/^[A-Za-z0-9]{32}$/);
    expect(Date.parse(body.expires_at) - Date.now()).to.be.within(11.9 * 3_600_000, 12 * 3_600_000);
    expect(body.temporal).to.deep.equal({ ui_url: 'http://temporal-ui.example:8080', namespace: 'default' });
    expect(JSON.stringify(body)).not.to.include(key);
  });

  it('the cookie reads /v1; a change needs the X-CSRF-Token header too', async () => {
    const { key } = await service.newWorkspace(['write']);
    const { cookie, body } = await signIn(key);
    expect((await call('/v1/workflows', { cookie })).status).to.equal(200);

    const secret = { value: 's3cret' };
    const withoutToken = await call('/v1/secrets/CONSOLE_TEST', { cookie, method: 'PUT', body: secret });
    expect(withoutToken.status).to.equal(403);
    expect(((await withoutToken.json()) as { error: { message: string } }).error.message).to.include(
      'X-CSRF-Token',
    );
    const wrongToken = await call('/v1/secrets/CONSOLE_TEST', {
      cookie,
      method: 'PUT',
      csrf: 'x'.repeat(32),
      body: secret,
    });
    expect(wrongToken.status).to.equal(403);
    const withToken = await call('/v1/secrets/CONSOLE_TEST', {
      cookie,
      method: 'PUT',
      csrf: body.csrf_token,
      body: secret,
    });
    expect(withToken.status, await withToken.text()).to.equal(204);
  });

  it("a session acts with its key's scopes: a read key's session cannot write", async () => {
    const { key } = await service.newWorkspace(['read']);
    const { cookie, body } = await signIn(key);
    const refused = await call('/v1/secrets/CONSOLE_TEST', {
      cookie,
      method: 'PUT',
      csrf: body.csrf_token,
      body: { value: 'x' },
    });
    expect(refused.status).to.equal(403);
    expect(((await refused.json()) as { error: { message: string } }).error.message).to.include(
      "'write' scope",
    );
  });

  it('revoking the key ends its sessions at once', async () => {
    const { workspaceId, key } = await service.newWorkspace(['admin']);
    const { cookie } = await signIn(key);
    const other = await service.newKey(workspaceId, ['admin']);
    const keyId = (await signIn(key)).body.key.id;
    await service.api(other).delete(`/v1/api-keys/${keyId}`).expect(204);

    expect((await call('/v1/workflows', { cookie })).status).to.equal(401);
    const session = await call('/console/session', { cookie });
    expect(session.status).to.equal(401);
    expect(((await session.json()) as { error: { code: string } }).error.code).to.equal('unauthorized');
  });

  it('an expired session is refused', async () => {
    const { key } = await service.newWorkspace(['read']);
    const { cookie, body } = await signIn(key);
    expect((await call('/console/session', { cookie })).status).to.equal(200);
    await service.runtime.services.db.query(
      "update console_sessions set expires_at = now() - interval '1 second' where csrf_token = $1",
      [body.csrf_token],
    );
    expect((await call('/console/session', { cookie })).status).to.equal(401);
    expect((await call('/v1/workflows', { cookie })).status).to.equal(401);
  });

  it('signing out needs the CSRF token, ends the session and clears the cookie', async () => {
    const { key } = await service.newWorkspace(['read']);
    const { cookie, body } = await signIn(key);
    expect((await call('/console/session', { cookie, method: 'DELETE' })).status).to.equal(403);

    const out = await call('/console/session', { cookie, method: 'DELETE', csrf: body.csrf_token });
    expect(out.status).to.equal(204);
    expect(out.headers.get('set-cookie')).to.match(/^switchyard_session=;.*expires=Thu, 01 Jan 1970/i);
    expect((await call('/v1/workflows', { cookie })).status).to.equal(401);
  });

  it('an Authorization header wins over the cookie', async () => {
    const { key } = await service.newWorkspace(['admin']);
    const { cookie } = await signIn(key);
    const response = await fetch(`${service.url}/v1/workflows`, {
      headers: { cookie, authorization: 'Bearer sk_wrongwrongwrongwrongwrongwrongwrong' },
    });
    expect(response.status).to.equal(401);
  });

  it('refuses an unknown key (401), a body without a key (400) and a body that is not JSON (415)', async () => {
    const post = (body: string, contentType = 'application/json') =>
      fetch(`${service.url}/console/session`, {
        method: 'POST',
        headers: { 'content-type': contentType },
        body,
      });
    const unknown = await post(JSON.stringify({ api_key: `sk_${'a'.repeat(40)}` }));
    expect(unknown.status).to.equal(401);
    expect(unknown.headers.get('set-cookie')).to.equal(null);
    const missing = await post(JSON.stringify({ key: 'x' }));
    expect(missing.status).to.equal(400);
    expect(((await missing.json()) as { error: { code: string } }).error.code).to.equal('invalid_request');
    expect((await post('api_key=sk_x', 'application/x-www-form-urlencoded')).status).to.equal(415);
    expect((await fetch(`${service.url}/console/session`)).status).to.equal(401);
  });
});
