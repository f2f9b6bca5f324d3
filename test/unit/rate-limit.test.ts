/**
 * The token buckets of docs/api.md#rate-limits: in memory (embedded PGlite, and the fallback while PostgreSQL
 * does not answer), and the PostgreSQL statement, run here on an in-memory PGlite with migration 007's table;
 * and a request's tokens from its key's bucket and its workspace's.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { expect } from 'chai';
import type Koa from 'koa';
import type { AppError } from '../../platform/errors';
import {
  createRateLimiter,
  enforceRateLimits,
  PURGE_INTERVAL_MS,
  TokenBuckets,
  type RateLimitCheck,
  type RateLimiter,
  type RateLimiterOptions,
} from '../../src/http/rate-limit';
import { migrationsDirectory } from '../../platform/paths';
import { sleep, waitFor } from '../support/wait';

/** A fake clock for the in-memory buckets, in ms. */
function clock(): { now: () => number; advance(ms: number): void } {
  let now = 0;
  return { now: () => now, advance: (ms) => (now += ms) };
}

async function takeMany(limiter: RateLimiter, key: string, count: number): Promise<boolean[]> {
  const allowed: boolean[] = [];
  for (let i = 0; i < count; i++) allowed.push((await limiter.take(key)).allowed);
  return allowed;
}

/** A limiter (1/s, burst 2) over a database of `kind` whose every query fails. */
const failingDatabase = (kind: 'pglite' | 'postgres'): RateLimiter =>
  createRateLimiter({
    perSecond: 1,
    burst: 2,
    name: 'test',
    db: { kind, query: () => Promise.reject(new Error('ECONNREFUSED')) },
    retryMs: 0,
  });

describe('rate limits: token buckets in memory', () => {
  it('allows a burst, then refuses with Retry-After until one token is back', () => {
    const buckets = new TokenBuckets({ perSecond: 10, burst: 3 }, () => 0);
    expect([1, 2, 3].map(() => buckets.take('k').allowed)).to.deep.equal([true, true, true]);
    expect(buckets.take('k')).to.deep.equal({
      allowed: false,
      limit: 3,
      remaining: 0,
      resetSeconds: 1,
      retryAfterSeconds: 1,
    });
  });

  it('gives requests back one every 1/perSecond seconds once the burst is spent (the trickle)', () => {
    const time = clock();
    const buckets = new TokenBuckets({ perSecond: 2, burst: 4 }, time.now);
    for (let i = 0; i < 4; i++) buckets.take('k');
    expect(buckets.take('k')).to.include({ allowed: false, retryAfterSeconds: 1, resetSeconds: 2 });
    time.advance(500);
    expect(buckets.take('k').allowed).to.equal(true);
    expect(buckets.take('k').allowed).to.equal(false);
    time.advance(250);
    expect(buckets.take('k').allowed).to.equal(false);
    time.advance(250);
    expect(buckets.take('k').allowed).to.equal(true);
  });

  it('refills up to the burst, never above', () => {
    const time = clock();
    const buckets = new TokenBuckets({ perSecond: 10, burst: 3 }, time.now);
    buckets.take('k');
    time.advance(3_600_000);
    expect([1, 2, 3, 4].map(() => buckets.take('k').allowed)).to.deep.equal([true, true, true, false]);
  });

  it('says how long until the bucket is full again and until the next token', () => {
    const buckets = new TokenBuckets({ perSecond: 1, burst: 5 }, () => 0);
    expect(buckets.take('k')).to.include({ remaining: 4, resetSeconds: 1 });
    for (let i = 0; i < 4; i++) buckets.take('k');
    expect(buckets.take('k')).to.include({ allowed: false, resetSeconds: 5, retryAfterSeconds: 1 });
    const slow = new TokenBuckets({ perSecond: 0.25, burst: 1 }, () => 0);
    slow.take('k');
    expect(slow.take('k')).to.include({ allowed: false, retryAfterSeconds: 4 });
  });

  it('keeps one bucket per key', () => {
    const buckets = new TokenBuckets({ perSecond: 1, burst: 1 }, () => 0);
    expect(buckets.take('a').allowed).to.equal(true);
    expect(buckets.take('b').allowed).to.equal(true);
    expect(buckets.take('a').allowed).to.equal(false);
  });

  it('limits in memory, without the database, over embedded PGlite', async () => {
    // Every query fails: the burst of 2 is kept all the same.
    expect(await takeMany(failingDatabase('pglite'), 'k', 3)).to.deep.equal([true, true, false]);
  });
});

describe('rate limits: token buckets in PostgreSQL', function () {
  this.timeout(60_000);
  let pglite: PGlite;
  /** The statement runs on PGlite as it runs on a server; `kind` selects the shared buckets. */
  let db: RateLimiterOptions['db'];
  const limiter = (perSecond: number, burst: number, name = 'test'): RateLimiter =>
    createRateLimiter({ perSecond, burst, name, db });

  before(async () => {
    pglite = await PGlite.create();
    await pglite.exec(fs.readFileSync(path.join(migrationsDirectory, '007.do.rate-limits.sql'), 'utf8'));
    db = {
      kind: 'postgres',
      query: async <Row>(sql: string, params?: unknown[]) => (await pglite.query<Row>(sql, params)).rows,
    };
  });
  after(async () => pglite?.close());
  beforeEach(async () => pglite.exec('delete from rate_limits'));

  it('allows a burst, then refuses with Retry-After and RateLimit-Reset', async () => {
    const shared = limiter(1, 3);
    expect(await shared.take('k')).to.deep.equal({
      allowed: true,
      limit: 3,
      remaining: 2,
      resetSeconds: 1,
      retryAfterSeconds: 0,
    });
    expect(await takeMany(shared, 'k', 2)).to.deep.equal([true, true]);
    expect(await shared.take('k')).to.include({
      allowed: false,
      remaining: 0,
      resetSeconds: 3,
      retryAfterSeconds: 1,
    });
  });

  it('lets one more request through after 1/perSecond seconds (the trickle)', async () => {
    const shared = limiter(10, 3);
    await takeMany(shared, 'k', 3);
    // Until a request is refused, the bucket holds less than a token; the next one comes within 100 ms.
    await waitFor(async () => !(await shared.take('k')).allowed, { intervalMs: 0, what: 'a refusal' });
    await waitFor(async () => (await shared.take('k')).allowed, { intervalMs: 5, what: 'a trickle' });
    await sleep(110);
    expect(await takeMany(shared, 'k', 2)).to.deep.equal([true, false]);
  });

  it('refills up to the burst, never above', async () => {
    const shared = limiter(10, 3);
    await shared.take('k');
    await pglite.query(`update rate_limits set updated_at = updated_at - interval '1 hour'`);
    expect(await takeMany(shared, 'k', 4)).to.deep.equal([true, true, true, false]);
  });

  it('keeps one bucket per key and per limiter', async () => {
    const apiKeys = limiter(1, 1, 'api-key');
    const hooks = limiter(1, 1, 'hook');
    expect(await apiKeys.take('a')).to.include({ allowed: true });
    expect(await apiKeys.take('b')).to.include({ allowed: true });
    expect(await hooks.take('a')).to.include({ allowed: true });
    expect(await apiKeys.take('a')).to.include({ allowed: false });
    const rows = await pglite.query<{ key: string }>('select key from rate_limits order by key');
    expect(rows.rows.map((row) => row.key)).to.deep.equal(['api-key:a', 'api-key:b', 'hook:a']);
  });

  it('deletes its rows whose bucket is full again, after a request, at most once per interval', async () => {
    const time = clock();
    const shared = createRateLimiter({ perSecond: 1, burst: 10, name: 'test', db, now: time.now });
    await pglite.query(
      `insert into rate_limits values
         ('test:full', 10, true, now() - interval '11 seconds'),
         ('test:refilling', 0, false, now() - interval '9 seconds'),
         ('other:full', 10, true, now() - interval '11 seconds')`,
    );
    const keys = async () =>
      (await pglite.query<{ key: string }>('select key from rate_limits order by key')).rows.map(
        (row) => row.key,
      );
    await shared.take('k');
    await waitFor(async () => !(await keys()).includes('test:full'), { what: 'the purge' });
    expect(await keys()).to.deep.equal(['other:full', 'test:k', 'test:refilling']);

    await pglite.query(`insert into rate_limits values ('test:full', 10, true, now() - interval '1 hour')`);
    await shared.take('k');
    await sleep(50);
    expect(await keys()).to.include('test:full');
    time.advance(PURGE_INTERVAL_MS);
    await shared.take('k');
    await waitFor(async () => !(await keys()).includes('test:full'), { what: 'the next purge' });
  });
});

describe('rate limits: while PostgreSQL does not answer', () => {
  it('keeps limiting, in this process, when the database fails', async () => {
    expect(await takeMany(failingDatabase('postgres'), 'k', 3)).to.deep.equal([true, true, false]);
  });

  it('does not wait for a hanging database longer than the deadline', async () => {
    const limiter = createRateLimiter({
      perSecond: 1,
      burst: 1,
      name: 'test',
      db: { kind: 'postgres', query: () => new Promise(() => undefined) },
      deadlineMs: 50,
      retryMs: 0,
    });
    const started = performance.now();
    expect(await takeMany(limiter, 'k', 2)).to.deep.equal([true, false]);
    expect(performance.now() - started).to.be.below(1_000);
  });

  it('counts in memory for a while after a failure, then asks the database again', async () => {
    const time = clock();
    let queries = 0;
    const limiter = createRateLimiter({
      perSecond: 1,
      burst: 5,
      name: 'test',
      db: {
        kind: 'postgres',
        query: async <Row>() => {
          queries++;
          if (queries === 1) throw new Error('ECONNREFUSED');
          return [{ tokens: 0, allowed: false }] as Row[];
        },
      },
      retryMs: 1_000,
      now: time.now,
    });
    expect(await limiter.take('k')).to.include({ allowed: true, remaining: 4 });
    time.advance(999);
    expect(await limiter.take('k')).to.include({ allowed: true, remaining: 3 });
    expect(queries).to.equal(1);
    time.advance(1);
    expect(await limiter.take('k')).to.include({ allowed: false, remaining: 0 });
    expect(queries).to.be.at.least(2);
  });
});

describe('rate limits: a key and its workspace', () => {
  /** A limiter in memory with a fake clock (embedded PGlite). */
  const inMemory = (burst: number) =>
    createRateLimiter({
      perSecond: 1,
      burst,
      name: 'test',
      db: { kind: 'pglite', query: () => Promise.reject(new Error('unused')) },
      now: clock().now,
    });

  /** What a response got: its headers, or the 429 it was refused with. */
  async function request(
    checks: RateLimitCheck[],
  ): Promise<{ headers: Record<string, string>; refused?: AppError }> {
    const headers: Record<string, string> = {};
    const ctx = {
      set: (values: Record<string, string>) => Object.assign(headers, values),
    } as unknown as Koa.Context;
    try {
      await enforceRateLimits(ctx, checks);
      return { headers };
    } catch (error) {
      return { headers, refused: error as AppError };
    }
  }

  it('describes the tighter bucket in the headers', async () => {
    const key = inMemory(100);
    const workspace = inMemory(5);
    const { headers } = await request([
      { limiter: key, key: 'k', what: 'this API key' },
      { limiter: workspace, key: 'w', what: 'this workspace' },
    ]);
    expect(headers).to.deep.equal({
      'RateLimit-Limit': '5',
      'RateLimit-Remaining': '4',
      'RateLimit-Reset': '1',
    });
  });

  it('refuses for the workspace once its keys together spent its bucket, naming it', async () => {
    const workspace = inMemory(3);
    const keys = [inMemory(100), inMemory(100)];
    const outcomes = [];
    for (let i = 0; i < 4; i++) {
      outcomes.push(
        await request([
          { limiter: keys[i % 2]!, key: `k${i % 2}`, what: 'this API key' },
          { limiter: workspace, key: 'w', what: 'this workspace' },
        ]),
      );
    }
    expect(outcomes.map((o) => o.refused?.status ?? 200)).to.deep.equal([200, 200, 200, 429]);
    expect(outcomes[3]!.refused!.message).to.include('this workspace');
  });

  it('leaves the workspace bucket alone when the key is refused', async () => {
    const key = inMemory(1);
    const workspace = inMemory(3);
    const checks = [
      { limiter: key, key: 'k', what: 'this API key' },
      { limiter: workspace, key: 'w', what: 'this workspace' },
    ];
    await request(checks);
    const refused = await request(checks);
    expect(refused.refused?.message).to.include('this API key');
    // Only the first request took from the workspace's 3 tokens: this one leaves 1.
    expect((await workspace.take('w')).remaining).to.equal(1);
  });
});
