/**
 * Resolves or rejects as `work` does, or rejects after `ms` with a DeadlineError. `work` is not
 * stopped: what it still does must be harmless (idempotent), and its late failure is swallowed.
 */
/**
 * How long an execution's activities wait for the database where they can do without it (emit_event,
 * the subscription report of run_steps): a database that is away can take its connection timeout
 * (3 s) or its query timeout (15 s) to say so. (The rate limiter has its own, shorter deadline.)
 */
export const DATABASE_WAIT_MS = 2_000;

export class DeadlineError extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
    this.name = 'DeadlineError';
  }
}

export function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineError(ms)), ms);
  });
  work.catch(() => undefined);
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
