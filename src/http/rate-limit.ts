/**
 * Rate limits (CONTRACT §8) with rate-limiter-flexible: per key, `burst` requests per window of
 * `burst / perSecond` seconds (the library's fixed window, started by a key's first request), so a
 * key gets a burst of `burst` at once and `perSecond` on average, as the contract's token bucket does.
 * Unlike a bucket, a spent window refills all at once when it ends, not one request at a time:
 * Retry-After and RateLimit-Reset say when. Every response carries RateLimit-Limit / -Remaining /
 * -Reset; a spent window answers 429 with Retry-After.
 *
 * Where the counters live:
 * - PostgreSQL server (DATABASE_URL): in the `rate_limits` table (migration 007), so every API process
 *   counts against the same window and N replicas allow the limit once, not N times. An in-memory
 *   limiter with the same settings is the library's `insuranceLimiter`: while the database cannot
 *   answer, each process limits on its own instead of failing the request. A key whose window is spent
 *   is refused from memory until the window ends (`inMemoryBlockOnConsumed`), so a caller hammering
 *   the API past its limit costs no database round trip.
 * - Embedded PGlite: in memory. PGlite runs inside the one process that holds DATA_DIR's lock, so there
 *   is no other API process to share counters with.
 */
import type Koa from 'koa';
import type pg from 'pg';
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import { AppError } from '../errors';

/** The table migration 007 creates; the library never creates it (`tableCreated: true`). */
const TABLE = 'rate_limits';

export interface RateLimitSettings {
  /** Requests per second on average (RATE_LIMIT_PER_SECOND). */
  perSecond: number;
  /** Requests at once, and per window (RATE_LIMIT_BURST). */
  burst: number;
}

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window ends and the full burst is available again. */
  resetSeconds: number;
  /** Seconds until a request can be allowed again (when not allowed). */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  /** Counts one request of `key` and says whether it is allowed. */
  take(key: string): Promise<RateLimitDecision>;
}

export interface RateLimiterOptions extends RateLimitSettings {
  /** Names this limiter's keys (several limiters share the table). */
  name: string;
  /** A PostgreSQL server's pool: counters shared by every process. Unset: in this process only. */
  pool: pg.Pool | undefined;
}

/**
 * The window's length: `burst` requests per window is `perSecond` on average. Whole milliseconds,
 * rounded up (never above the configured rate): the PostgreSQL store keeps expiry times as integers.
 */
export function windowSeconds({ perSecond, burst }: RateLimitSettings): number {
  return Math.ceil((burst * 1000) / perSecond) / 1000;
}

export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const settings = { keyPrefix: options.name, points: options.burst, duration: windowSeconds(options) };
  const inMemory = new RateLimiterMemory(settings);
  const limiter = options.pool
    ? new RateLimiterPostgres({
        ...settings,
        storeClient: options.pool,
        storeType: 'pool',
        tableName: TABLE,
        tableCreated: true,
        // Deletes rows expired for an hour, every 5 minutes (an unref'd timer), so the table holds only
        // the keys used lately.
        clearExpiredByTimeout: true,
        inMemoryBlockOnConsumed: options.burst,
        insuranceLimiter: inMemory,
      })
    : inMemory;
  return {
    take: async (key) => {
      try {
        return decision(options.burst, await limiter.consume(key), true);
      } catch (error) {
        // A refusal rejects with the counter's state; anything else is a failure (the insurance
        // limiter absorbs the store's).
        if (error instanceof RateLimiterRes) return decision(options.burst, error, false);
        throw error;
      }
    },
  };
}

function decision(limit: number, res: RateLimiterRes, allowed: boolean): RateLimitDecision {
  const secondsLeft = Math.max(0, Math.ceil(res.msBeforeNext / 1000));
  return {
    allowed,
    limit,
    remaining: res.remainingPoints,
    resetSeconds: secondsLeft,
    retryAfterSeconds: allowed ? 0 : Math.max(1, secondsLeft),
  };
}

/**
 * Counts one request of `key`: sets the RateLimit-* headers, or throws 429 `rate_limited` (naming
 * `what` is limited) with Retry-After.
 */
export async function enforceRateLimit(
  ctx: Koa.Context,
  limiter: RateLimiter,
  key: string,
  what: string,
): Promise<void> {
  const decision = await limiter.take(key);
  if (!decision.allowed) throw rateLimited(decision, what);
  ctx.set(rateLimitHeaders(decision));
}

function rateLimitHeaders(decision: RateLimitDecision): Record<string, string> {
  return {
    'RateLimit-Limit': String(decision.limit),
    'RateLimit-Remaining': String(decision.remaining),
    'RateLimit-Reset': String(decision.resetSeconds),
  };
}

function rateLimited(decision: RateLimitDecision, what: string): AppError {
  return new AppError(
    429,
    'rate_limited',
    `Too many requests for ${what}; retry after ${decision.retryAfterSeconds} s.`,
    {
      headers: { ...rateLimitHeaders(decision), 'Retry-After': String(decision.retryAfterSeconds) },
    },
  );
}
