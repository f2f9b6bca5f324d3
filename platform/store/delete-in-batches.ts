import type { Queryable } from './db';

/** Rows deleted per statement by a purge: short transactions, so requests go on beside it. */
export const PURGE_BATCH = 5_000;

/**
 * Runs `statement` (a delete of at most PURGE_BATCH rows that returns one row per row deleted) until it
 * deletes fewer; the total deleted.
 */
export async function deleteInBatches(
  db: Queryable,
  statement: string,
  params: unknown[] = [],
): Promise<number> {
  let deleted = 0;
  for (;;) {
    const rows = await db.query(statement, params);
    deleted += rows.length;
    if (rows.length < PURGE_BATCH) return deleted;
  }
}
