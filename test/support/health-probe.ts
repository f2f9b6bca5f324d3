/**
 * The API's responsiveness while some work runs: `/healthz` is asked every 10 ms until the work settles.
 * An event loop held by that work (a regular expression, a validation) holds these answers too.
 */
import request from 'supertest';

/**
 * The slowest answer a test accepts while costly work runs: loose, since the suite shares two cores with
 * the dev server (a held event loop shows as seconds; `npm run bench` measures the latency itself).
 */
export const HEALTH_ANSWER_BOUND_MS = 1000;

/** `work`'s result and the slowest /healthz answer (ms) while it ran. */
export async function whileProbingHealth<T>(
  url: string,
  work: Promise<T>,
): Promise<{ result: T; slowestMs: number }> {
  let done = false;
  let slowestMs = 0;
  const probe = (async () => {
    while (!done) {
      const started = performance.now();
      await request(url).get('/healthz').expect(200);
      slowestMs = Math.max(slowestMs, performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  try {
    return { result: await work, slowestMs };
  } finally {
    done = true;
    await probe;
  }
}
