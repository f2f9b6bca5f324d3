/** Retries of failed runs (see migrations/003): a guard against concurrent retries, and superseded runs. */
import type { Queryable } from './db';
import { deleteInBatches, PURGE_BATCH } from './delete-in-batches';

export interface RetryClaim {
  /** True when this caller owns the retry of the run and must start the new run. */
  owner: boolean;
  retriedFromStep: string;
  newRunId: string | null;
}

/** How long an unfinished claim (no new run recorded) blocks others: a crash mid-retry must not block forever. */
const STALE_CLAIM_SECONDS = 30;

export async function claimRetry(
  db: Queryable,
  claim: { workspaceId: string; executionId: string; baseRunId: string; step: string },
): Promise<RetryClaim> {
  const inserted = await db.query<{ retried_from_step: string }>(
    `insert into execution_retries (workspace_id, execution_id, base_run_id, retried_from_step) values ($1, $2, $3, $4)
     on conflict (base_run_id) do update set created_at = now()
       where execution_retries.new_run_id is null and execution_retries.created_at < now() - interval '${STALE_CLAIM_SECONDS} seconds'
     returning retried_from_step`,
    [claim.workspaceId, claim.executionId, claim.baseRunId, claim.step],
  );
  if (inserted[0]) return { owner: true, retriedFromStep: inserted[0].retried_from_step, newRunId: null };
  const [existing] = await db.query<{ retried_from_step: string; new_run_id: string | null }>(
    'select retried_from_step, new_run_id from execution_retries where base_run_id = $1',
    [claim.baseRunId],
  );
  return {
    owner: false,
    retriedFromStep: existing?.retried_from_step ?? claim.step,
    newRunId: existing?.new_run_id ?? null,
  };
}

export async function recordRetriedRun(db: Queryable, baseRunId: string, newRunId: string): Promise<void> {
  await db.query('update execution_retries set new_run_id = $2 where base_run_id = $1', [
    baseRunId,
    newRunId,
  ]);
}

/** Releases a claim whose new run could not start, so the next request can try again. */
export async function releaseRetry(db: Queryable, baseRunId: string): Promise<void> {
  await db.query('delete from execution_retries where base_run_id = $1 and new_run_id is null', [baseRunId]);
}

/** Which of these run ids were replaced by a retry. */
export async function supersededRuns(db: Queryable, runIds: string[]): Promise<Set<string>> {
  if (runIds.length === 0) return new Set();
  const rows = await db.query<{ base_run_id: string }>(
    'select base_run_id from execution_retries where base_run_id = any($1::text[])',
    [runIds],
  );
  return new Set(rows.map((row) => row.base_run_id));
}

/**
 * Deletes retries older than Temporal's retention (TEMPORAL_RETENTION_DAYS): the failed run they
 * supersede closed before they were made, so Temporal has deleted it by then (the housekeeping job).
 */
export function purgeExecutionRetries(db: Queryable, retentionDays: number): Promise<number> {
  return deleteInBatches(
    db,
    `delete from execution_retries where base_run_id in (
       select base_run_id from execution_retries
        where created_at < now() - make_interval(days => $1)
        limit ${PURGE_BATCH})
     returning 1`,
    [retentionDays],
  );
}
