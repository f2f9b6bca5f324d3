/**
 * OWASP API7, server-side request forgery (docs/webhooks.md#outbound-webhooks, docs/configuration.md): with
 * ALLOW_PRIVATE_DESTINATIONS off (the default), webhook registration answers 400 `invalid_webhook_url` and
 * connector steps fail with `destination_not_allowed` for every way of naming a private, loopback, link-local
 * or unspecified address: literal ranges, the shorthand/decimal/hex/octal IPv4 forms the URL parser accepts,
 * IPv6, IPv4-mapped and IPv4-compatible IPv6, NAT64, names that resolve to loopback. Deliveries check again
 * at delivery time, and the address actually connected to is checked too (DNS rebinding). A TCP listener on
 * every loopback address counts connections: none may arrive.
 *
 * What cannot be tested end to end here: a redirect from an allowed (public HTTPS) first hop to a private
 * one, since no public HTTPS host is reachable from the test machine and /etc/hosts may not be changed.
 * The redirect rules are tested with the guard functions on the resolved Location (the connector runs
 * checkUrlForm on every hop, and guardedLookup at every connect), and end to end with private
 * destinations allowed: webhook deliveries never follow redirects, connectors only when asked.
 */
import dns from 'node:dns';
import os from 'node:os';
import { expect } from 'chai';
import {
  checkDestination,
  checkUrlForm,
  DestinationError,
  guardedLookup,
  isNonPublicAddress,
} from '../../platform/net/destination-guard';
import { createEndpoint } from '../../platform/store/webhooks';
import {
  createWorkflow,
  definition,
  FAST_RETRY,
  httpStep,
  rulesStep,
  stepOf,
  trigger,
  waitForExecution,
  type ExecutionBody,
} from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { startTestService, type TestService } from '../support/stack';
import { waitFor } from '../support/wait';
import { ConnectionTrap, expectErrorOf, sharedService } from './support';

const STRICT = { allowPrivate: false };
/** A public unicast address (example.com's) that fake DNS answers; nothing here connects to it. */
const PUBLIC_ADDRESS = '93.184.216.34';

/** Every form of a non-public destination, with the trap's port where it is local. */
function privateUrls(port: number): string[] {
  return [
    // Plain http to anywhere.
    `http://127.0.0.1:${port}/`,
    // Private ranges (RFC 1918), carrier-grade NAT, link-local (the cloud metadata address), unspecified.
    'https://10.0.0.1/',
    'https://10.255.255.254/',
    'https://172.16.0.1/',
    'https://172.31.255.254/',
    'https://192.168.0.1/',
    'https://100.64.0.1/',
    'https://169.254.169.254/latest/meta-data/',
    `https://0.0.0.0:${port}/`,
    `https://0:${port}/`,
    // Loopback in every notation the WHATWG URL parser turns into 127.0.0.1.
    `https://127.0.0.1:${port}/`,
    `https://127.1:${port}/`,
    `https://2130706433:${port}/`,
    `https://0x7f000001:${port}/`,
    `https://0x7f.1:${port}/`,
    `https://0177.0.0.1:${port}/`,
    `https://017700000001:${port}/`,
    `https://%31%32%37.0.0.1:${port}/`,
    `https://127.0.0.1.:${port}/`,
    // IPv6: loopback, unspecified, link-local, unique-local, IPv4-mapped, IPv4-compatible, NAT64.
    `https://[::1]:${port}/`,
    `https://[::]:${port}/`,
    'https://[fe80::1]/',
    'https://[fd00::1]/',
    `https://[::ffff:127.0.0.1]:${port}/`,
    `https://[::ffff:7f00:1]:${port}/`,
    `https://[0:0:0:0:0:ffff:127.0.0.1]:${port}/`,
    'https://[::ffff:169.254.169.254]/',
    'https://[::ffff:10.0.0.1]/',
    `https://[::127.0.0.1]:${port}/`,
    'https://[64:ff9b::7f00:1]/',
    // A name that resolves to loopback (more below, where this machine resolves them).
    `https://localhost:${port}/`,
    `https://LOCALHOST:${port}/`,
  ];
}

/**
 * Other names for this machine that resolve to non-public addresses here (its host name does in most
 * containers; "localhost." where the resolver accepts the trailing dot). Names that do not resolve are
 * left out: they fail as network errors, having reached nothing. /etc/hosts may not be changed for more.
 */
async function localNames(): Promise<string[]> {
  const names: string[] = [];
  for (const name of [os.hostname(), 'localhost.']) {
    try {
      const addresses = await dns.promises.lookup(name, { all: true });
      if (addresses.length > 0 && addresses.every((a) => isNonPublicAddress(a.address))) names.push(name);
    } catch {
      // Does not resolve on this machine.
    }
  }
  return names;
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | dns.LookupAddress[],
  family?: number,
) => void;

/**
 * Fake DNS for names under .rebind.test (everything else resolves as usual): `check` answers the
 * up-front check (dns.promises.lookup), `connect` the connect-time lookup (dns.lookup).
 */
function installFakeDns(
  answers: Record<string, { check: () => string[]; connect: () => string[] }>,
): () => void {
  const original = { lookup: dns.lookup, promisesLookup: dns.promises.lookup };
  const find = (hostname: string) => answers[hostname.replace(/\.$/, '').toLowerCase()];
  const asList = (addresses: string[]) =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  const lookup = (
    hostname: string,
    options: dns.LookupAllOptions | LookupCallback,
    callback?: LookupCallback,
  ) => {
    const answer = find(hostname);
    if (!answer) return (original.lookup as (...args: unknown[]) => void)(hostname, options, callback);
    const cb = (typeof options === 'function' ? options : callback)!;
    const list = asList(answer.connect());
    setImmediate(() =>
      typeof options === 'object' && options.all
        ? cb(null, list)
        : cb(null, list[0]!.address, list[0]!.family),
    );
  };
  const promisesLookup = async (hostname: string, options?: dns.LookupAllOptions) => {
    const answer = find(hostname);
    if (!answer) return original.promisesLookup(hostname, options ?? {});
    const list = asList(answer.check());
    return options?.all ? list : list[0];
  };
  Object.assign(dns, { lookup });
  Object.assign(dns.promises, { lookup: promisesLookup });
  return () => {
    Object.assign(dns, { lookup: original.lookup });
    Object.assign(dns.promises, { lookup: original.promisesLookup });
  };
}

describe('security: server-side request forgery @integration', function () {
  let trap: ConnectionTrap;
  before(async () => {
    trap = await ConnectionTrap.start();
  });
  after(async () => trap?.stop());

  describe('with private destinations not allowed (the default)', () => {
    let strict: TestService;
    let names: string[];
    before(async function () {
      this.timeout(120_000);
      strict = await startTestService({
        env: { ALLOW_PRIVATE_DESTINATIONS: 'false', WEBHOOK_RETRY_SCHEDULE: '1' },
      });
      names = await localNames();
    });
    after(async () => strict?.stop());

    describe('webhook registration', () => {
      for (const [index, template] of privateUrls(0).entries()) {
        it(`refuses ${template.replace(':0/', ':<port>/')} with 400 invalid_webhook_url`, async () => {
          const url = privateUrls(trap.port)[index]!;
          const res = await strict.api().post('/v1/webhooks', { url, events: ['execution.completed'] });
          expectErrorOf(res, 400, ['invalid_webhook_url'], url);
          expect(res.body.error.details[0].path).to.equal('/url');
        });
      }

      it('refuses other names of this machine, which resolve to non-public addresses', async function () {
        if (names.length === 0) this.skip();
        for (const name of names) {
          const url = `https://${name}:${trap.port}/`;
          expectErrorOf(
            await strict.api().post('/v1/webhooks', { url, events: ['execution.completed'] }),
            400,
            ['invalid_webhook_url'],
            url,
          );
        }
      });

      it('refuses URLs with credentials', async () => {
        const res = await strict
          .api()
          .post('/v1/webhooks', { url: 'https://user:pw@example.com/', events: ['execution.completed'] });
        expectErrorOf(res, 400, ['invalid_webhook_url'], 'credentials');
      });
    });

    describe('connector steps', () => {
      const executions = new Map<string, ExecutionBody>();
      const urls = () => [...privateUrls(trap.port), ...names.map((name) => `https://${name}:${trap.port}/`)];
      before(async function () {
        this.timeout(60_000);
        const api = strict.api();
        await Promise.all(
          urls().map(async (url) => {
            const workflowId = await createWorkflow(
              api,
              definition([httpStep('call', { url, follow_redirects: true }, { retry: FAST_RETRY })]),
            );
            executions.set(url, await waitForExecution(api, await trigger(api, workflowId)));
          }),
        );
        const fromInput = await createWorkflow(
          api,
          definition([httpStep('call', { url: '{{ input.url }}' }, { retry: FAST_RETRY })]),
        );
        executions.set(
          'input',
          await waitForExecution(
            api,
            await trigger(api, fromInput, { url: `https://127.0.0.1:${trap.port}/` }),
          ),
        );
      });

      for (const [index, url] of privateUrls(0).entries()) {
        it(`fail with destination_not_allowed, at once, for ${url.replace(':0/', ':<port>/')}`, () => {
          const execution = executions.get(privateUrls(trap.port)[index]!)!;
          expect(execution.error, JSON.stringify(execution.error)).to.include({
            step: 'call',
            code: 'destination_not_allowed',
          });
          expect(stepOf(execution, 'call').attempts).to.equal(1);
        });
      }

      it('fail with destination_not_allowed for other names of this machine', function () {
        if (names.length === 0) this.skip();
        for (const name of names) {
          expect(executions.get(`https://${name}:${trap.port}/`)!.error, name).to.include({
            code: 'destination_not_allowed',
          });
        }
      });

      it('fail with destination_not_allowed for a URL that comes from the input', () => {
        expect(executions.get('input')!.error).to.include({ code: 'destination_not_allowed' });
      });
    });

    describe('delivery time', () => {
      it('refuses an endpoint whose stored URL is private (registered before the setting changed)', async () => {
        const { workspaceId, key } = await strict.newWorkspace(['admin']);
        const { db, cipher } = strict.runtime.services;
        const endpoint = await createEndpoint(db, cipher, {
          workspaceId,
          url: `https://127.0.0.1:${trap.port}/old`,
          events: ['execution.completed'],
          description: null,
          secret: 'whsec_c2VjdXJpdHktc3VpdGUtc2VjcmV0LTAxMjM0NTY3',
        });
        const api = strict.api(key);
        await trigger(
          api,
          await createWorkflow(api, definition([rulesStep('a', [{ when: 'true', output: 1 }])])),
        );
        const attempt = await waitFor(
          async () => {
            const res = await api.get(`/v1/webhooks/${endpoint.id}/deliveries`).expect(200);
            return (res.body.data as { attempts: { error: string | null }[] }[])[0]?.attempts[0];
          },
          { what: 'a delivery attempt' },
        );
        expect(attempt.error).to.include('not a public address');
      });
    });

    describe('DNS answers that change (rebinding)', () => {
      let restore: () => void;
      let lateCalls = 0;
      before(() => {
        restore = installFakeDns({
          // Public when checked, loopback when connected to.
          'hook.rebind.test': { check: () => [PUBLIC_ADDRESS], connect: () => ['127.0.0.1'] },
          // Public when registered, loopback from then on.
          'late.rebind.test': {
            check: () => (lateCalls++ === 0 ? [PUBLIC_ADDRESS] : ['127.0.0.1']),
            connect: () => ['127.0.0.1'],
          },
          'step.rebind.test': { check: () => [PUBLIC_ADDRESS], connect: () => ['127.0.0.1'] },
          'mixed.rebind.test': { check: () => [PUBLIC_ADDRESS], connect: () => [PUBLIC_ADDRESS, '::1'] },
          'mapped.rebind.test': { check: () => [PUBLIC_ADDRESS], connect: () => ['::ffff:127.0.0.1'] },
        });
      });
      after(() => restore?.());

      async function deliveryError(host: string): Promise<string> {
        const { key } = await strict.newWorkspace(['admin']);
        const api = strict.api(key);
        const endpoint = await api
          .post('/v1/webhooks', { url: `https://${host}:${trap.port}/hook`, events: ['execution.completed'] })
          .expect(201);
        await trigger(
          api,
          await createWorkflow(api, definition([rulesStep('a', [{ when: 'true', output: 1 }])])),
        );
        const attempt = await waitFor(
          async () => {
            const res = await api.get(`/v1/webhooks/${endpoint.body.id}/deliveries`).expect(200);
            return (res.body.data as { attempts: { error: string | null }[] }[])[0]?.attempts[0];
          },
          { what: 'a delivery attempt' },
        );
        return attempt.error ?? '';
      }

      it('a delivery refuses a name that resolves to loopback only when connecting', async () => {
        expect(await deliveryError('hook.rebind.test')).to.include('resolves to a non-public address');
      });

      it('a delivery refuses a name that resolved to a public address at registration only', async () => {
        expect(await deliveryError('late.rebind.test')).to.include('resolves to a non-public address');
      });

      for (const [host, what] of [
        ['step.rebind.test', 'loopback'],
        ['mixed.rebind.test', 'a public and a loopback address'],
        ['mapped.rebind.test', 'an IPv4-mapped loopback address'],
      ]) {
        it(`a connector step refuses a name that resolves to ${what} when connecting`, async () => {
          const api = strict.api();
          const workflowId = await createWorkflow(
            api,
            definition([httpStep('call', { url: `https://${host}:${trap.port}/` }, { retry: FAST_RETRY })]),
          );
          const execution = await waitForExecution(api, await trigger(api, workflowId));
          expect(execution.error).to.include({ step: 'call', code: 'destination_not_allowed' });
          expect(stepOf(execution, 'call').attempts).to.equal(1);
        });
      }
    });

    it('let nothing connect to a local address', () => {
      expect(trap.connections).to.equal(0);
    });
  });

  describe('redirects, with private destinations allowed (development and tests)', () => {
    let open: TestService;
    let receiver: Receiver;
    let other: Receiver;
    before(async function () {
      this.timeout(120_000);
      open = await sharedService();
      receiver = await Receiver.start();
      other = await Receiver.start();
    });
    after(async () => {
      await other?.stop();
      await receiver?.stop();
    });

    it('a webhook delivery never follows one', async () => {
      const before = trap.connections;
      receiver.replyOnceTo('/moved', {
        status: 307,
        headers: { location: `http://127.0.0.1:${trap.port}/internal` },
      });
      const { key } = await open.newWorkspace(['admin']);
      const api = open.api(key);
      const endpoint = await api
        .post('/v1/webhooks', { url: `${receiver.url}/moved`, events: ['execution.completed'] })
        .expect(201);
      await trigger(
        api,
        await createWorkflow(api, definition([rulesStep('a', [{ when: 'true', output: 1 }])])),
      );
      const attempt = await waitFor(
        async () => {
          const res = await api.get(`/v1/webhooks/${endpoint.body.id}/deliveries`).expect(200);
          return (res.body.data as { attempts: { status_code: number; error: string | null }[] }[])[0]
            ?.attempts[0];
        },
        { what: 'a delivery attempt' },
      );
      expect(attempt).to.include({ status_code: 307 });
      expect(attempt.error).to.include('redirect');
      expect(trap.connections).to.equal(before);
    });

    it('a connector step does not follow one unless asked', async () => {
      const before = trap.connections;
      receiver.replyOnceTo('/step-moved', {
        status: 302,
        headers: { location: `http://127.0.0.1:${trap.port}/internal` },
      });
      const workflowId = await createWorkflow(
        open.api(),
        definition([httpStep('call', { url: `${receiver.url}/step-moved` }, { retry: FAST_RETRY })]),
      );
      const execution = await waitForExecution(open.api(), await trigger(open.api(), workflowId));
      expect(stepOf(execution, 'call').output).to.deep.include({ status: 302 });
      expect(trap.connections).to.equal(before);
    });

    // Browsers' fetch and curl drop Authorization, Cookie and Proxy-Authorization when a redirect leaves the origin.
    it('a connector step that follows one to another origin does not take the credentials along', async () => {
      await open.api().put('/v1/secrets/REDIRECT_TOKEN', { value: 'redirect-token-value-1' }).expect(204);
      receiver.replyOnceTo('/cross', { status: 302, headers: { location: `${other.url}/landing` } });
      other.replyOnceTo('/landing', { status: 200, body: { landed: true } });
      const workflowId = await createWorkflow(
        open.api(),
        definition([
          httpStep(
            'call',
            {
              url: `${receiver.url}/cross`,
              headers: { Authorization: 'Bearer {{ secrets.REDIRECT_TOKEN }}', Cookie: 'session=abc' },
              follow_redirects: true,
            },
            { retry: FAST_RETRY },
          ),
        ]),
      );
      const execution = await waitForExecution(open.api(), await trigger(open.api(), workflowId));
      expect(execution.status).to.equal('success');
      expect(receiver.requestsTo('/cross')[0]!.headers['authorization']).to.equal(
        'Bearer redirect-token-value-1',
      );
      const landed = other.requestsTo('/landing')[0]!;
      expect(landed.headers['authorization']).to.equal(undefined);
      expect(landed.headers['cookie']).to.equal(undefined);
    });
  });

  describe('the guard functions', () => {
    const base = 'https://api.example.com/start';

    for (const address of [
      '::7f00:1', // IPv4-compatible ::127.0.0.1 (deprecated), as the URL parser writes it
      '::a00:1',
      '::ffff:0:7f00:1',
      '64:ff9b::7f00:1',
      '64:ff9b:1::a00:1',
      '2002:7f00:1::1',
      '2001::1',
      '100::1',
      'fec0::1',
      'e000::1',
    ]) {
      it(`treat ${address} as non-public`, () => expect(isNonPublicAddress(address)).to.equal(true));
    }

    for (const address of ['8.8.8.8', '::ffff:8.8.8.8', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e']) {
      it(`treat ${address} as public`, () => expect(isNonPublicAddress(address)).to.equal(false));
    }

    for (const location of [
      'http://127.0.0.1/x',
      '//127.0.0.1/x',
      'https://127.1/x',
      'https://2130706433/x',
      'https://[::ffff:7f00:1]/x',
      'https://[::1]/x',
      'https://169.254.169.254/latest/meta-data/',
      'https://10.0.0.1/x',
      'http://api.example.com/plain',
      'https://user:pw@api.example.com/x',
    ]) {
      it(`refuse a redirect to ${location} on the hop's URL`, () => {
        expect(() => checkUrlForm(new URL(location, base).toString(), STRICT)).to.throw(DestinationError);
      });
    }

    it('accept a redirect to another public HTTPS path', () => {
      expect(checkUrlForm(new URL('/next', base).toString(), STRICT).href).to.equal(
        'https://api.example.com/next',
      );
    });

    it('refuse a redirect to a name that resolves to loopback, before and while connecting', async () => {
      const url = new URL('https://localhost/x', base).toString();
      let error: unknown;
      try {
        await checkDestination(url, STRICT);
      } catch (caught) {
        error = caught;
      }
      expect(error).to.be.instanceOf(DestinationError);
      const result = await new Promise<unknown>((resolve) =>
        guardedLookup(STRICT)('localhost', { all: true }, (e) => resolve(e)),
      );
      expect(result).to.be.instanceOf(DestinationError);
    });

    describe('guardedLookup with DNS answers that change', () => {
      let restore: () => void;
      let calls = 0;
      before(() => {
        restore = installFakeDns({
          'flip.rebind.test': {
            check: () => [PUBLIC_ADDRESS],
            connect: () => (calls++ === 0 ? [PUBLIC_ADDRESS] : ['10.0.0.7']),
          },
          'many.rebind.test': {
            check: () => [PUBLIC_ADDRESS],
            connect: () => [PUBLIC_ADDRESS, '169.254.169.254'],
          },
        });
      });
      after(() => restore?.());

      const resolveWith = (hostname: string, all: boolean) =>
        new Promise<{ error: unknown; address: unknown }>((resolve) =>
          guardedLookup(STRICT)(hostname, { all }, (error, address) => resolve({ error, address })),
        );

      it('checks the answer of every connect, not only the first one', async () => {
        expect((await resolveWith('flip.rebind.test', false)).address).to.equal(PUBLIC_ADDRESS);
        const second = await resolveWith('flip.rebind.test', false);
        expect(second.error).to.be.instanceOf(DestinationError);
        expect((second.error as Error).message).to.equal('flip.rebind.test resolves to a non-public address');
      });

      it('refuses when any of the addresses is not public', async () => {
        for (const all of [true, false])
          expect((await resolveWith('many.rebind.test', all)).error).to.be.instanceOf(DestinationError);
      });

      it('lets everything through when private destinations are allowed', async () => {
        const result = await new Promise<unknown>((resolve) =>
          guardedLookup({ allowPrivate: true })('many.rebind.test', { all: true }, (error, address) =>
            resolve(error ?? address),
          ),
        );
        expect(result).to.have.length(2);
      });
    });
  });
});
