import { expect } from 'chai';
import pg from 'pg';
import { createRateLimiter, windowSeconds, type RateLimiter } from '../../src/http/rate-limit';
import { freePort } from '../support/ports';

/** A limiter that counts in this process (as with embedded PGlite). */
const inMemory = (perSecond: number, burst: number): RateLimiter =>
  createRateLimiter({ perSecond, burst, name: 'test', pool: undefined });

async function takeMany(limiter: RateLimiter, key: string, count: number): Promise<boolean[]> {
  const allowed: boolean[] = [];
  for (let i = 0; i < count; i++) allowed.push((await limiter.take(key)).allowed);
  return allowed;
}

describe('rate limits', () => {
  it('allows a burst, then refuses with a retry-after', async () => {
    const limiter = inMemory(10, 3);
    expect(await takeMany(limiter, 'k', 3)).to.deep.equal([true, true, true]);
    const refused = await limiter.take('k');
    expect(refused).to.include({ allowed: false, remaining: 0, retryAfterSeconds: 1 });
  });

  it('allows the whole burst again once the window ends', async () => {
    const limiter = inMemory(20, 2); // 2 per 100 ms
    await takeMany(limiter, 'k', 3);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(await takeMany(limiter, 'k', 3)).to.deep.equal([true, true, false]);
  });

  it('keeps one count per key', async () => {
    const limiter = inMemory(1, 1);
    expect((await limiter.take('a')).allowed).to.equal(true);
    expect((await limiter.take('b')).allowed).to.equal(true);
    expect((await limiter.take('a')).allowed).to.equal(false);
  });

  it('reports the limit, what remains and when the window ends', async () => {
    const decision = await inMemory(50, 100).take('k');
    expect(decision).to.include({ limit: 100, remaining: 99, resetSeconds: 2 });
  });

  it('sizes the window so that the average is the configured rate, in whole milliseconds', () => {
    expect(windowSeconds({ perSecond: 50, burst: 100 })).to.equal(2);
    expect(windowSeconds({ perSecond: 1, burst: 5 })).to.equal(5);
    expect(windowSeconds({ perSecond: 30, burst: 100 })).to.equal(3.334);
  });

  it('keeps limiting, in this process, when PostgreSQL cannot answer', async () => {
    const pool = new pg.Pool({
      connectionString: `postgres://nobody@127.0.0.1:${await freePort()}/none`,
      connectionTimeoutMillis: 1000,
    });
    try {
      const limiter = createRateLimiter({ perSecond: 1, burst: 2, name: 'test', pool });
      expect(await takeMany(limiter, 'k', 3)).to.deep.equal([true, true, false]);
    } finally {
      await pool.end();
    }
  });
});
