/**
 * Trigger idempotency keys (docs/api.md#idempotency): per workspace and workflow, for 24 hours, a key maps to
 * one execution id. The row is written before the workflow starts; a replay starts the same execution id
 * again (a no-op when it already runs), so a crash between the two steps never loses the execution.
 */
import type { Queryable } from './db';
import { deleteInBatches, PURGE_BATCH } from './delete-in-batches';

export const IDEMPOTENCY_WINDOW_HOURS = 24;

/**
 * Returns the execution id bound to the key: `candidateId` when the key is new (or its previous use
 * expired), otherwise the id stored by the first request.
 */
export async function claimIdempotencyKey(
  db: Queryable,
  input: { workspaceId: string; workflowId: string; key: string; candidateId: string },
): Promise<{ executionId: string; replay: boolean }> {
  const rows = await db.query<{ execution_id: string }>(
    `insert into idempotency_keys (workspace_id, workflow_id, key, execution_id) values ($1, $2, $3, $4)
     on conflict (workspace_id, workflow_id, key) do update
       set execution_id = case when idempotency_keys.created_at < now() - interval '${IDEMPOTENCY_WINDOW_HOURS} hours'
                               then excluded.execution_id else idempotency_keys.execution_id end,
           created_at = case when idempotency_keys.created_at < now() - interval '${IDEMPOTENCY_WINDOW_HOURS} hours'
                             then now() else idempotency_keys.created_at end
     returning execution_id`,
    [input.workspaceId, input.workflowId, input.key, input.candidateId],
  );
  const row = rows[0]!;
  return { executionId: row.execution_id, replay: row.execution_id !== input.candidateId };
}

/** Points a key just claimed at another execution (a debounced trigger that joined its key's waiting one). */
export async function pointIdempotencyKey(
  db: Queryable,
  input: { workspaceId: string; workflowId: string; key: string; executionId: string },
): Promise<void> {
  await db.query(
    'update idempotency_keys set execution_id = $4 where workspace_id = $1 and workflow_id = $2 and key = $3',
    [input.workspaceId, input.workflowId, input.key, input.executionId],
  );
}

/** Deletes keys past the window (the housekeeping job, hourly). */
export function purgeExpiredIdempotencyKeys(db: Queryable): Promise<number> {
  return deleteInBatches(
    db,
    `delete from idempotency_keys where (workspace_id, workflow_id, key) in (
       select workspace_id, workflow_id, key from idempotency_keys
        where created_at < now() - interval '${IDEMPOTENCY_WINDOW_HOURS} hours'
        limit ${PURGE_BATCH})
     returning 1`,
  );
}
