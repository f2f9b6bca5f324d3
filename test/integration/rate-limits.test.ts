/**
 * Rate limits (docs/api.md#rate-limits) with more than one API process: over one PostgreSQL database, every
 * process takes from the same token bucket (a row of `rate_limits`), so two processes allow a key's burst
 * once, not twice, and after it one request every 1/perSecond seconds between them. With embedded PGlite (one
 * process by construction) the buckets are kept in memory. A workspace has a bucket of its own beside its
 * keys' (WORKSPACE_RATE_LIMIT_*), which all its keys share: more keys do not mean more requests.
 */
import { expect } from 'chai';
import request from 'supertest';
import { signatureHeader } from '../../src/inbound-hooks/signature';
import { definition, expectError, rulesStep, uniqueId } from '../support/fixtures';
import { startTestService, type TestService } from '../support/stack';
import { sleep, waitFor } from '../support/wait';

const PER_SECOND = 1;
const BURST = 6;
const LIMITS = { RATE_LIMIT_PER_SECOND: String(PER_SECOND), RATE_LIMIT_BURST: String(BURST) };
/** Both processes must open the hook secrets either one sealed. */
const SHARED = { ...LIMITS, SECRETS_KEY: 'rate-limit-test-secrets-key' };

/**
 * Sends `count` requests, alternating between the given services, and counts those allowed. Anything
 * but 2xx and 429 fails the test. The contract allows the burst plus what refills meanwhile.
 */
async function countAllowed(
  services: TestService[],
  count: number,
  send: (service: TestService) => request.Test,
): Promise<{ allowed: number; mostAllowed: number }> {
  const started = performance.now();
  let allowed = 0;
  for (let i = 0; i < count; i++) {
    const res = await send(services[i % services.length]!);
    expect([200, 202, 429], JSON.stringify(res.body)).to.include(res.status);
    if (res.status !== 429) allowed++;
  }
  const seconds = (performance.now() - started) / 1000;
  return { allowed, mostAllowed: BURST + Math.floor(seconds * PER_SECOND) };
}

/**
 * Two API processes over one new PostgreSQL database; the first runs the worker too, and the second, API
 * only, is on its task queue, so that the first one's worker runs what the second one starts.
 */
async function startTwoApiProcesses(env: Record<string, string>): Promise<[TestService, TestService]> {
  const first = await startTestService({ db: 'postgres', env });
  const second = await startTestService({
    databaseUrl: first.config.databaseUrl!,
    worker: false,
    env: { ...env, TEMPORAL_TASK_QUEUE: first.config.temporal.taskQueue },
  });
  return [first, second];
}

describe('rate limits across API processes @integration', function () {
  this.timeout(300_000);

  describe('two API processes over one PostgreSQL database', () => {
    let first: TestService;
    let second: TestService;
    before(async () => {
      [first, second] = await startTwoApiProcesses(SHARED);
    });
    after(async () => {
      await second?.stop();
      await first?.stop();
    });

    it('allows a key its burst once across both processes, not once per process', async () => {
      const key = await first.newKey('default', ['read']);
      const { allowed, mostAllowed } = await countAllowed([first, second], 2 * BURST, (service) =>
        service.api(key).get('/v1/workflows'),
      );
      expect(allowed).to.be.within(BURST, mostAllowed);
    });

    it('after the burst, lets one request through every 1/perSecond seconds across both processes', async () => {
      const key = await first.newKey('default', ['read']);
      const get = (service: TestService) => service.api(key).get('/v1/workflows');
      for (let i = 0; i < BURST; i++) expect((await get(i % 2 ? second : first)).status).to.equal(200);
      const refused = await waitFor(
        async () => {
          const res = await get(second);
          return res.status === 429 && res;
        },
        { intervalMs: 0, what: 'a refusal once the burst is spent' },
      );
      // Less than a token left: the next one is 1 s away, the whole bucket 6 s.
      expect(refused.headers).to.include({
        'retry-after': '1',
        'ratelimit-remaining': '0',
        'ratelimit-reset': String(BURST / PER_SECOND),
      });
      // The first request the refill lets through leaves the bucket close to empty...
      await waitFor(async () => (await get(first)).status === 200, { intervalMs: 20, what: 'a trickle' });
      expect((await get(second)).status).to.equal(429);
      // ...and 1/perSecond seconds later exactly one more request gets through, on either process.
      await sleep(1000 / PER_SECOND + 100);
      expect((await get(second)).status).to.equal(200);
      const next = await get(first);
      expect(next.status).to.equal(429);
      expect(next.headers).to.include({ 'retry-after': '1' });
    });

    it("allows a workflow's inbound hooks their burst once across both processes", async () => {
      const created = await first
        .api()
        .post(
          '/v1/workflows',
          definition([rulesStep('echo', [{ when: 'true', output: 1 }])], {
            id: uniqueId(),
            trigger: { type: 'webhook' },
          }),
        )
        .expect(201);
      const { id, hook_secret: secret } = created.body as { id: string; hook_secret: string };
      const { allowed, mostAllowed } = await countAllowed([first, second], 2 * BURST, (service) => {
        const body = JSON.stringify({ nonce: uniqueId('n') });
        return request(service.url)
          .post(`/v1/hooks/${id}`)
          .set('Content-Type', 'application/json')
          .set('X-Service-Signature', signatureHeader(secret, body, Math.floor(Date.now() / 1000)))
          .send(body);
      });
      expect(allowed).to.be.within(BURST, mostAllowed);
    });
  });

  describe('embedded PGlite (one process)', () => {
    let service: TestService;
    before(async () => {
      service = await startTestService({ env: LIMITS });
    });
    after(async () => service?.stop());

    it('allows a key its burst, then answers 429', async () => {
      const key = await service.newKey('default', ['read']);
      const { allowed, mostAllowed } = await countAllowed([service], 2 * BURST, (s) =>
        s.api(key).get('/v1/workflows'),
      );
      expect(allowed).to.be.within(BURST, mostAllowed);
    });
  });

  describe('per workspace, beside per key', () => {
    /** Keys may do as they like; their workspace has the small bucket. */
    const WORKSPACE_LIMITS = {
      SECRETS_KEY: 'rate-limit-test-secrets-key',
      WORKSPACE_RATE_LIMIT_PER_SECOND: String(PER_SECOND),
      WORKSPACE_RATE_LIMIT_BURST: String(BURST),
    };
    let first: TestService;
    let second: TestService;
    before(async () => {
      [first, second] = await startTwoApiProcesses(WORKSPACE_LIMITS);
    });
    after(async () => {
      await second?.stop();
      await first?.stop();
    });

    it("makes a workspace's keys share its budget across both processes, and leaves other workspaces alone", async () => {
      const { workspaceId, key } = await first.newWorkspace(['read']);
      const keys = [key, await first.newKey(workspaceId, ['read'])];
      // Each key on each process in turn: four (key, process) pairs, one bucket between them.
      const pairs = [first, second].flatMap((service) => keys.map((k) => service.api(k)));
      const started = performance.now();
      const answers = [];
      for (let i = 0; i < 4 * BURST; i++) answers.push(await pairs[i % pairs.length]!.get('/v1/workflows'));
      const mostAllowed = BURST + Math.floor(((performance.now() - started) / 1000) * PER_SECOND);
      const allowed = answers.filter((res) => res.status === 200).length;
      expect(allowed).to.be.within(BURST, mostAllowed);
      const refused = answers.find((res) => res.status !== 200)!;
      expectError(refused, 429, 'rate_limited');
      expect(refused.body.error.message).to.include('this workspace');

      const other = await second.newWorkspace(['read']);
      const res = await second.api(other.key).get('/v1/workflows').expect(200);
      // The headers describe the tighter bucket: the workspace's, not the key's (100,000 in tests).
      expect(res.headers).to.include({
        'ratelimit-limit': String(BURST),
        'ratelimit-remaining': String(BURST - 1),
      });
    });
  });
});
