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
  // One promise and one reaction, where a race of two with a `finally` makes some eight: a run's activities
  // call this several times, and every promise pays Node's promise hooks
  // (docs/benchmarks.md#fewer-promises-per-run).
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new DeadlineError(ms)), ms);
    // A late failure lands here too, after the deadline answered: handled, so never unhandled.
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- work's failure, passed on as it is
        reject(error);
      },
    );
  });
}
