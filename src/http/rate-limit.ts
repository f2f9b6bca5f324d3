/**
 * Rate limits (docs/api.md#rate-limits): per key and per workspace (so that minting keys does not multiply a
 * workspace's share), a token bucket that holds up to `burst` tokens and refills `perSecond` tokens a
 * second; each request takes one. A full bucket lets `burst` requests through at once, after which
 * requests come back one every 1/perSecond seconds. Every response carries
 * RateLimit-Limit (the burst), RateLimit-Remaining (whole tokens left) and RateLimit-Reset (seconds until
 * the bucket is full again); an empty bucket answers 429 with Retry-After (seconds until one token is
 * there).
 *
 * Where the buckets live:
 * - PostgreSQL server (DATABASE_URL): in the `rate_limits` table (migration 007), one atomic statement
 *   per request (TAKE_TOKEN below), timed by the database's clock, so every API process takes from the
 *   same bucket and N replicas allow a key its limit once, not N times. When the database does not
 *   answer (an error, or nothing within DATABASE_DEADLINE_MS), the request is counted in this process's
 *   memory instead: during a database outage the limits are per process (N replicas allow up to N times
 *   the limit), and requests are neither failed nor stalled by the limiter.
 * - Embedded PGlite: in memory. PGlite runs inside the one process that holds DATA_DIR's lock, so there
 *   is no other API process to share buckets with.
 *
 * Hand-written on purpose: the contract asks for a token bucket, and no well-kept Node library keeps one
 * in PostgreSQL (rate-limiter-flexible, used for a while, counts fixed windows: a spent window comes back
 * all at once, and two windows back to back pass twice the burst). The statement is small and atomic.
 */
import type Koa from 'koa';
import { AppError } from '../../platform/errors';
import type { Logger } from '../../platform/logger';
import type { Database } from '../../platform/store/db';
import { withDeadline } from '../../platform/store/deadline';

export interface RateLimitSettings {
  /** Tokens added per second (RATE_LIMIT_PER_SECOND). */
  perSecond: number;
  /** The bucket's size: requests allowed at once (RATE_LIMIT_BURST). */
  burst: number;
}

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
  /** Seconds until one token is available (when not allowed). */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  /** Takes a token from `key`'s bucket, if there is one, and says whether the request is allowed. */
  take(key: string): Promise<RateLimitDecision>;
}

/** A bucket's level after a request, and whether that request took a token. */
function decide(
  { perSecond, burst }: RateLimitSettings,
  tokens: number,
  allowed: boolean,
): RateLimitDecision {
  return {
    allowed,
    limit: burst,
    remaining: Math.floor(tokens),
    resetSeconds: Math.ceil((burst - tokens) / perSecond),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / perSecond)),
  };
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/** Token buckets in this process's memory (embedded PGlite, and while PostgreSQL cannot answer). */
export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly settings: RateLimitSettings,
    private readonly now: () => number = () => performance.now(),
  ) {}

  take(key: string): RateLimitDecision {
    const { perSecond, burst } = this.settings;
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: burst, updatedAt: now };
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.updatedAt) / 1000) * perSecond);
    bucket.updatedAt = now;
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    this.buckets.set(key, bucket);
    if (this.buckets.size > 100_000) this.evictFull(now);
    return decide(this.settings, bucket.tokens, allowed);
  }

  /** Full buckets carry no information; dropping them bounds memory. */
  private evictFull(now: number): void {
    const { perSecond, burst } = this.settings;
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + ((now - bucket.updatedAt) / 1000) * perSecond >= burst) this.buckets.delete(key);
    }
  }
}

/**
 * Takes a token from bucket $1 (rate $2 per second, size $3) in one statement: a new key starts full
 * and takes one; an existing row (locked by the upsert, so concurrent requests of a key queue here)
 * refills by the seconds since `updated_at` times the rate, up to the size, and loses a token only when
 * at least one is there. Returns the level after the request and whether it took a token.
 *
 * The time is clock_timestamp(), read once, after the row lock is held: now() is the statement's start,
 * which can come before the `updated_at` that a concurrent request wrote while this one waited for the
 * lock, and would then take time back. greatest() keeps `updated_at` from going back all the same.
 */
const TAKE_TOKEN = `
  insert into rate_limits as bucket (key, tokens, allowed, updated_at)
  values ($1, $3::double precision - 1, true, clock_timestamp())
  on conflict (key) do update set (tokens, allowed, updated_at) = (
    select case when level >= 1 then level - 1 else level end, level >= 1, at
    from (
      select at, least(
        $3::double precision,
        bucket.tokens + $2::double precision * extract(epoch from at - bucket.updated_at)::double precision
      ) as level
      from (select greatest(bucket.updated_at, clock_timestamp()) as at) as clock
    ) as refill
  )
  returning tokens, allowed`;

interface TakenRow {
  tokens: number;
  allowed: boolean;
}

/** Deletes this limiter's rows ($1: its prefix) whose bucket is full again: untouched for $2 seconds. */
const DELETE_FULL = `
  delete from rate_limits
  where starts_with(key, $1) and updated_at < clock_timestamp() - make_interval(secs => $2)`;

/** How long a request waits for the database's answer before it is counted in memory. */
export const DATABASE_DEADLINE_MS = 500;
/**
 * After the database failed to answer, how long this process counts in memory before it asks again, so
 * that a hanging database is not handed a statement (and a pool connection) by every request.
 */
export const DATABASE_RETRY_MS = 1_000;
/**
 * How often each limiter deletes its full buckets' rows: at most once per this interval, after a
 * request it counted in the database. No timer, so there is nothing to stop when the service stops, and
 * an idle service leaves the table alone (a key's row is overwritten at its next request anyway).
 */
export const PURGE_INTERVAL_MS = 60_000;

export interface RateLimiterOptions extends RateLimitSettings {
  /** Names this limiter's keys ("<name>:<key>"): several limiters share the table. */
  name: string;
  /** The service's database: on a PostgreSQL server the buckets are kept there, else in memory. */
  db: Pick<Database, 'kind' | 'query'>;
  logger?: Logger;
  /** Tests: DATABASE_DEADLINE_MS and DATABASE_RETRY_MS. */
  deadlineMs?: number;
  retryMs?: number;
  /** Tests: the clock of the in-memory buckets and of the retry and purge intervals, in ms. */
  now?: () => number;
}

export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const settings = { perSecond: options.perSecond, burst: options.burst };
  const now = options.now ?? (() => performance.now());
  const memory = new TokenBuckets(settings, now);
  if (options.db.kind !== 'postgres') return { take: async (key) => memory.take(key) };

  const { db, name, logger } = options;
  const deadlineMs = options.deadlineMs ?? DATABASE_DEADLINE_MS;
  const retryMs = options.retryMs ?? DATABASE_RETRY_MS;
  let askDatabaseAfter = -Infinity;
  let purgedAt = -Infinity;
  let inMemory = false;

  const fellBack = (error: unknown) => {
    askDatabaseAfter = now() + retryMs;
    if (inMemory) return;
    inMemory = true;
    logger?.warn(
      { err: error, limiter: name },
      'Rate limits are counted per process: the database did not answer',
    );
  };
  const purge = () => {
    purgedAt = now();
    db.query(DELETE_FULL, [`${name}:`, settings.burst / settings.perSecond]).catch((error: unknown) =>
      logger?.debug({ err: error, limiter: name }, 'Could not delete full rate-limit buckets'),
    );
  };

  return {
    take: async (key) => {
      if (now() < askDatabaseAfter) return memory.take(key);
      let rows: TakenRow[];
      try {
        // A statement that answers after the deadline still takes its token in the table.
        rows = await withDeadline(
          db.query<TakenRow>(TAKE_TOKEN, [`${name}:${key}`, settings.perSecond, settings.burst]),
          deadlineMs,
        );
        if (!rows[0]) throw new Error('the statement returned no bucket');
      } catch (error) {
        fellBack(error);
        return memory.take(key);
      }
      if (inMemory) {
        inMemory = false;
        logger?.info({ limiter: name }, 'Rate limits are counted in the database again');
      }
      if (now() - purgedAt >= PURGE_INTERVAL_MS) purge();
      return decide(settings, rows[0].tokens, rows[0].allowed);
    },
  };
}

/** One bucket a request takes a token from: which limiter, whose bucket, and what it limits (for messages). */
export interface RateLimitCheck {
  limiter: RateLimiter;
  key: string;
  /** "this API key", "this workspace". */
  what: string;
}

/**
 * Takes a token for one request of `key`: sets the RateLimit-* headers, or throws 429 `rate_limited`
 * (naming `what` is limited) with Retry-After.
 */
export async function enforceRateLimit(
  ctx: Koa.Context,
  limiter: RateLimiter,
  key: string,
  what: string,
): Promise<void> {
  await enforceRateLimits(ctx, [{ limiter, key, what }]);
}

/**
 * Takes a token from each bucket in turn (an API key's, then its workspace's): the first that has none
 * answers 429 `rate_limited` naming it, and the buckets after it are left alone, so a request refused for
 * its key costs its workspace nothing. When every bucket allows the request, the RateLimit-* headers
 * describe the tightest: the one with the fewest tokens left.
 */
export async function enforceRateLimits(ctx: Koa.Context, checks: readonly RateLimitCheck[]): Promise<void> {
  let tightest: RateLimitDecision | undefined;
  for (const { limiter, key, what } of checks) {
    const decision = await limiter.take(key);
    if (!decision.allowed) throw rateLimited(decision, what);
    if (!tightest || decision.remaining < tightest.remaining) tightest = decision;
  }
  if (tightest) ctx.set(rateLimitHeaders(tightest));
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
