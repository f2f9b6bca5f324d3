/**
 * Bulk operations (migration 012, docs/operations.md#bulk-operations): created with the executions they
 * matched, claimed by a bulk runner with a lease, acted on execution by execution, read with their counts.
 */
import type { Database, Queryable } from './db';
import { pageByKey, type PageRequest } from './keyset-pages';

export type BulkAction = 'cancel' | 'retry' | 'rerun';
export type BulkStatus = 'running' | 'completed' | 'canceled';
export type ItemOutcome = 'succeeded' | 'failed' | 'skipped';

/** At most this many errors are shown with an operation. */
export const ERRORS_SHOWN = 100;

export interface NewBulkOperation {
  id: string;
  action: BulkAction;
  filter: Record<string, unknown>;
  options: Record<string, unknown>;
  createdBy: string | null;
  executionIds: string[];
}

export interface BulkOperationRecord {
  id: string;
  action: BulkAction;
  filter: Record<string, unknown>;
  options: Record<string, unknown>;
  status: BulkStatus;
  matched: number;
  succeeded: number;
  failed: number;
  skipped: number;
  errors: { execution_id: string; code: string; message: string }[];
  created_at: Date;
  finished_at: Date | null;
  seq: string;
}

/** An operation a runner holds the lease of. */
export interface ClaimedOperation {
  workspace_id: string;
  id: string;
  action: BulkAction;
  options: Record<string, unknown>;
  created_by: string | null;
}

export interface OperationItem {
  execution_id: string;
  /** It was being acted on when its runner stopped: the action may have happened already. */
  resumed: boolean;
}

/** Running operations a workspace may have at once. */
export const MAX_RUNNING_OPERATIONS = 5;

export async function runningOperations(db: Queryable, workspaceId: string): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    "select count(*)::int as n from bulk_operations where workspace_id = $1 and status = 'running'",
    [workspaceId],
  );
  return row!.n;
}

/** Stores an operation and the executions it matched, in one transaction. */
export async function createOperation(
  db: Database,
  workspaceId: string,
  op: NewBulkOperation,
): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query(
      `insert into bulk_operations (workspace_id, id, action, filter, options, matched, created_by)
       values ($1, $2, $3, $4::jsonb, $5::jsonb, $6, $7)`,
      [
        workspaceId,
        op.id,
        op.action,
        JSON.stringify(op.filter),
        JSON.stringify(op.options),
        op.executionIds.length,
        op.createdBy,
      ],
    );
    for (let i = 0; i < op.executionIds.length; i += 1000) {
      const slice = op.executionIds.slice(i, i + 1000);
      await tx.query(
        `insert into bulk_operation_items (workspace_id, operation_id, execution_id, seq)
         select $1, $2, id, $3 + ordinality::int from unnest($4::text[]) with ordinality as t(id)`,
        [workspaceId, op.id, i, slice],
      );
    }
  });
}

/** Takes the lease of one running operation whose lease is free, oldest first; undefined when none is. */
export async function claimOperation(db: Queryable, leaseMs: number): Promise<ClaimedOperation | undefined> {
  const [row] = await db.query<ClaimedOperation>(
    `update bulk_operations o set lease_until = now() + make_interval(secs => $1 / 1000.0)
       from (select workspace_id, id from bulk_operations
              where status = 'running' and (lease_until is null or lease_until <= now())
              order by created_at limit 1 for update skip locked) c
      where o.workspace_id = c.workspace_id and o.id = c.id
      returning o.workspace_id, o.id, o.action, o.options, o.created_by`,
    [leaseMs],
  );
  return row;
}

/** Extends a held lease; false when the operation is no longer running (canceled meanwhile). */
export async function renewLease(db: Queryable, op: ClaimedOperation, leaseMs: number): Promise<boolean> {
  const rows = await db.query(
    `update bulk_operations set lease_until = now() + make_interval(secs => $3 / 1000.0)
      where workspace_id = $1 and id = $2 and status = 'running' returning 1`,
    [op.workspace_id, op.id, leaseMs],
  );
  return rows.length > 0;
}

/**
 * The next executions to act on, marked `acting`: first those a stopped runner left acting (resumed), then
 * pending ones in order.
 */
export async function takeItems(
  db: Queryable,
  op: ClaimedOperation,
  limit: number,
): Promise<OperationItem[]> {
  const resumed = await db.query<{ execution_id: string }>(
    `select execution_id from bulk_operation_items
      where workspace_id = $1 and operation_id = $2 and state = 'acting' order by seq limit $3`,
    [op.workspace_id, op.id, limit],
  );
  if (resumed.length > 0) return resumed.map((row) => ({ execution_id: row.execution_id, resumed: true }));
  const taken = await db.query<{ execution_id: string }>(
    `update bulk_operation_items i set state = 'acting'
       from (select execution_id from bulk_operation_items
              where workspace_id = $1 and operation_id = $2 and state = 'pending'
              order by seq limit $3) n
      where i.workspace_id = $1 and i.operation_id = $2 and i.execution_id = n.execution_id
      returning i.execution_id`,
    [op.workspace_id, op.id, limit],
  );
  return taken.map((row) => ({ execution_id: row.execution_id, resumed: false }));
}

export async function recordOutcome(
  db: Queryable,
  op: ClaimedOperation,
  executionId: string,
  outcome: { state: ItemOutcome; error?: { code: string; message: string }; resultExecutionId?: string },
): Promise<void> {
  await db.query(
    `update bulk_operation_items set state = $4, error_code = $5, error_message = $6, result_execution_id = $7
      where workspace_id = $1 and operation_id = $2 and execution_id = $3`,
    [
      op.workspace_id,
      op.id,
      executionId,
      outcome.state,
      outcome.error?.code ?? null,
      outcome.error?.message ?? null,
      outcome.resultExecutionId ?? null,
    ],
  );
}

/** Marks a running operation done: completed, or canceled (its pending executions are left alone). */
export async function finishOperation(
  db: Queryable,
  workspaceId: string,
  id: string,
  status: 'completed' | 'canceled',
): Promise<boolean> {
  const rows = await db.query(
    `update bulk_operations set status = $3, finished_at = now(), lease_until = null
      where workspace_id = $1 and id = $2 and status = 'running' returning 1`,
    [workspaceId, id, status],
  );
  return rows.length > 0;
}

/** The columns of a read: the row, and its items' counts and first errors. */
const OPERATION_COLUMNS = `o.id, o.action, o.filter, o.options, o.status, o.matched, o.created_at, o.finished_at,
  o.seq::text as seq,
  (select count(*)::int from bulk_operation_items i
    where i.workspace_id = o.workspace_id and i.operation_id = o.id and i.state = 'succeeded') as succeeded,
  (select count(*)::int from bulk_operation_items i
    where i.workspace_id = o.workspace_id and i.operation_id = o.id and i.state = 'failed') as failed,
  (select count(*)::int from bulk_operation_items i
    where i.workspace_id = o.workspace_id and i.operation_id = o.id and i.state = 'skipped') as skipped,
  coalesce((select json_agg(json_build_object('execution_id', e.execution_id, 'code', e.error_code,
                                              'message', e.error_message) order by e.seq)
              from (select execution_id, error_code, error_message, seq from bulk_operation_items
                     where workspace_id = o.workspace_id and operation_id = o.id and state = 'failed'
                     order by seq limit ${ERRORS_SHOWN}) e), '[]') as errors`;

export async function getOperation(
  db: Queryable,
  workspaceId: string,
  id: string,
): Promise<BulkOperationRecord | undefined> {
  const [row] = await db.query<BulkOperationRecord>(
    `select ${OPERATION_COLUMNS} from bulk_operations o where o.workspace_id = $1 and o.id = $2`,
    [workspaceId, id],
  );
  return row;
}

/** A page of the workspace's operations, newest first. */
export function listOperations(
  db: Queryable,
  workspaceId: string,
  page: PageRequest,
): Promise<BulkOperationRecord[]> {
  return pageByKey<BulkOperationRecord>(
    db,
    `select ${OPERATION_COLUMNS} from bulk_operations o where o.workspace_id = $1`,
    [workspaceId],
    { key: 'o.seq', type: 'bigint', descending: true },
    page,
  );
}
