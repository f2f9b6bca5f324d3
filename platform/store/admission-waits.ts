/**
 * The admission latency of `/metrics` (switchyard_admission_wait_seconds, docs/operations.md#metrics): how
 * long each run a gate's transaction granted had waited, observed once that transaction committed.
 */
import { metrics } from '../observability/metrics';
import type { Database, Queryable } from './db';

/** Seconds each run granted in a transaction had been queued (the grant's own `returning`). */
export type Waits = number[];

/**
 * Runs a transaction that may grant places or starts, then observes the waits of the runs it granted:
 * after the commit, so that a grant rolled back is not counted, and in the one process whose transaction
 * changed the row from queued (the key's lock serializes grants), so that each admission counts once.
 */
export async function grantingTransaction<T>(
  db: Database,
  gate: 'concurrency' | 'throttle',
  work: (tx: Queryable, waits: Waits) => Promise<T>,
): Promise<T> {
  let waits: Waits = [];
  const result = await db.transaction((tx) => {
    waits = [];
    return work(tx, waits);
  });
  metrics.admitted(gate, waits);
  return result;
}
