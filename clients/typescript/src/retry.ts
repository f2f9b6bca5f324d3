/**
 * A fetch that retries answers the service gives when a request did nothing: 429 `rate_limited` and 503
 * (`temporal_unavailable`, `database_unavailable`, `worker_unavailable`). It waits what `Retry-After` says
 * (10 s for `worker_unavailable`: a worker takes an operator to start), else an exponential
 * backoff with jitter, and gives up (returning the last answer) after `maxRetries` retries or when the
 * wait asked for is longer than `maxDelayMs`.
 */
import { parseRetryAfter } from './errors';

export interface RetryOptions {
  /**
   * Retries after the first attempt; 0 turns retrying off.
   * @default 3
   */
  maxRetries?: number;
  /**
   * Longest single wait. A `Retry-After` longer than this is not waited for: the error is thrown at once.
   * @default 30000
   */
  maxDelayMs?: number;
  /**
   * First backoff when the answer has no `Retry-After` (doubled on each retry, with jitter).
   * @default 500
   */
  baseDelayMs?: number;
}

const RETRIED_STATUSES = new Set([429, 503]);

export function retryingFetch(
  fetchImpl: (request: Request) => Promise<Response>,
  options: RetryOptions = {},
  sleep: (ms: number, signal?: AbortSignal) => Promise<void> = delay,
): (request: Request) => Promise<Response> {
  const maxRetries = options.maxRetries ?? 3;
  const maxDelayMs = options.maxDelayMs ?? 30_000;
  const baseDelayMs = options.baseDelayMs ?? 500;
  return async (request) => {
    for (let attempt = 0; ; attempt++) {
      // Each attempt sends a fresh copy: a body can be read only once.
      const response = await fetchImpl(attempt < maxRetries ? request.clone() : request);
      if (!RETRIED_STATUSES.has(response.status) || attempt >= maxRetries) return response;
      const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
      const wait =
        retryAfter !== undefined
          ? retryAfter * 1000
          : Math.min(maxDelayMs, baseDelayMs * 2 ** attempt) * (0.5 + Math.random() / 2);
      if (wait > maxDelayMs) return response;
      // The answer is dropped: read it so the connection can be reused.
      await response.body?.cancel().catch(() => undefined);
      await sleep(wait, request.signal);
    }
  };
}

export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
