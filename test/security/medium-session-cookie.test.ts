/**
 * Over HTTPS the console's session cookie is `__Host-switchyard_session` and Secure, so
 * neither a plain-HTTP page nor a sibling subdomain can plant or overwrite it, and the browser never sends
 * it over plain HTTP. Behind a proxy that terminates TLS, TRUST_PROXY=true makes X-Forwarded-Proto count;
 * over plain HTTP (local development) the cookie stays `switchyard_session` and works. The app is the
 * shared service's, built again over the same services with TRUST_PROXY on.
 */
import { expect } from 'chai';
import request from 'supertest';
import type Koa from 'koa';
import { createApp } from '../../src/app';
import type { TestService } from '../support/stack';
import { sharedService } from './support';

describe('security (medium): the session cookie over HTTPS @integration', () => {
  let service: TestService;
  let app: Koa;
  before(async () => {
    service = await sharedService();
    const services = service.runtime.services;
    app = createApp({ ...services, config: { ...services.config, trustProxy: true } });
  });

  async function signIn(key: string, https: boolean): Promise<string> {
    const res = await request(app.callback())
      .post('/console/session')
      .set(https ? { 'X-Forwarded-Proto': 'https' } : {})
      .send({ api_key: key });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return (res.headers['set-cookie'] as unknown as string[])[0]!;
  }

  const workflows = (cookie: string, https: boolean) =>
    request(app.callback())
      .get('/v1/workflows')
      .set({ cookie, ...(https ? { 'X-Forwarded-Proto': 'https' } : {}) });

  it('names it __Host-switchyard_session with Secure behind TLS (TRUST_PROXY), and keeps plain HTTP working', async () => {
    const { key } = await service.newWorkspace(['read']);

    const overHttps = await signIn(key, true);
    expect(overHttps, 'the cookie over HTTPS').to.match(/^__Host-switchyard_session=cst_[A-Za-z0-9]+;/);
    const attributes = overHttps.toLowerCase().split(/;\s*/);
    expect(attributes, 'the cookie over HTTPS').to.include.members(['secure', 'httponly', 'path=/']);
    expect(
      attributes.some((a) => a.startsWith('domain=')),
      '__Host- cookies have no Domain',
    ).to.equal(false);
    const secureCookie = overHttps.split(';')[0]!;
    expect((await workflows(secureCookie, true)).status, 'the __Host- cookie reads /v1').to.equal(200);

    // Plain HTTP (development on localhost): the plain name, not Secure, and it works.
    const overHttp = await signIn(key, false);
    expect(overHttp).to.match(/^switchyard_session=cst_[A-Za-z0-9]+;/);
    expect(overHttp.toLowerCase()).not.to.include('secure');
    const plainCookie = overHttp.split(';')[0]!;
    expect((await workflows(plainCookie, false)).status, 'the plain cookie over HTTP').to.equal(200);

    // Over HTTPS a plain-named cookie (one a plain-HTTP page could have planted) is not a session.
    expect((await workflows(plainCookie, true)).status, 'a plain-named cookie over HTTPS').to.equal(401);
  });
});
