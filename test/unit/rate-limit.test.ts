import { expect } from 'chai';
import { TokenBuckets } from '../../src/http/rate-limit';

describe('rate limit token buckets', () => {
  it('allows a burst, then refuses with a retry-after', () => {
    const now = 0;
    const buckets = new TokenBuckets(10, 3, () => now);
    expect([1, 2, 3].map(() => buckets.take('k').allowed)).to.deep.equal([true, true, true]);
    const refused = buckets.take('k');
    expect(refused.allowed).to.equal(false);
    expect(refused.remaining).to.equal(0);
    expect(refused.retryAfterSeconds).to.equal(1);
  });

  it('refills at the configured rate', () => {
    let now = 0;
    const buckets = new TokenBuckets(10, 3, () => now);
    for (let i = 0; i < 3; i++) buckets.take('k');
    now += 100; // 1 token at 10/s
    expect(buckets.take('k').allowed).to.equal(true);
    expect(buckets.take('k').allowed).to.equal(false);
  });

  it('keeps one bucket per key', () => {
    const buckets = new TokenBuckets(1, 1, () => 0);
    expect(buckets.take('a').allowed).to.equal(true);
    expect(buckets.take('b').allowed).to.equal(true);
    expect(buckets.take('a').allowed).to.equal(false);
  });

  it('reports the limit, what remains and when the bucket is full again', () => {
    const buckets = new TokenBuckets(50, 100, () => 0);
    const decision = buckets.take('k');
    expect(decision).to.include({ limit: 100, remaining: 99, resetSeconds: 1 });
  });
});
