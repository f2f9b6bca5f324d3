/**
 * Flow control's throttle (migration 014, docs/flow-control.md#throttle): at most `limit` executions of a key
 * start in any window of `period`. A run asks for its start (`acquireThrottle`); the key's queued runs are
 * granted starts, best first (priority, then arrival), while the window has room; each grant records a
 * start. When the queue must wait for the window, the key's `next_at` (when its oldest start in the window
 * leaves it) is written to `throttle_keys`, which the API's throttle sweeper reads to grant then.
 *
 * Race safety as for concurrency (admissions.ts): every change to a key's rows runs in one transaction that
 * first takes the key's advisory lock, so processes never grant more starts than the window allows.
 */
import { grantingTransaction, type Waits } from './admission-waits';
import type { Database, Queryable } from './db';

/** One throttle key of a workflow: `key` null when the definition has no key expression. */
export interface ThrottleKey {
  workspace_id: string;
  workflow_id: string;
  key: string | null;
}

export interface NewThrottleWait extends ThrottleKey {
  execution_id: string;
  limit: number;
  period_ms: number;
  priority: number;
}

export type ThrottleState = 'queued' | 'granted';

/** Starts granted at once by one grant at most (a limit is at most 10,000: core/flow-control.ts). */
const MAX_GRANT = 1000;

/** A key's identity as one text: the tables' `key_id`. */
export function throttleKeyId(key: ThrottleKey): string {
  return JSON.stringify([key.workspace_id, key.workflow_id, key.key]);
}

async function lockKey(tx: Queryable, keyId: string): Promise<void> {
  await tx.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [`throttle:${keyId}`]);
}

/**
 * Grants the key's queued runs the starts its window has room for, best first, under the period and limit
 * of the run first in line; records their starts; and notes when the queue can go on if some must wait.
 * Call with the key's lock held. Returns the executions granted; adds to `waits` how long each waited.
 */
async function grantNext(tx: Queryable, keyId: string, workspaceId: string, waits: Waits): Promise<string[]> {
  const [head] = await tx.query<{ throttle_limit: number; period_ms: number }>(
    `select throttle_limit, period_ms from throttle_waits where key_id = $1 and state = 'queued'
     order by priority desc, seq limit 1`,
    [keyId],
  );
  if (!head) {
    await tx.query('delete from throttle_keys where key_id = $1', [keyId]);
    return [];
  }
  const window = `now() - make_interval(secs => $2::double precision / 1000)`;
  // Starts that left every window: only the key's last `limit` within the period count.
  await tx.query(`delete from throttle_starts where key_id = $1 and started_at <= ${window}`, [
    keyId,
    head.period_ms,
  ]);
  const [{ started }] = (await tx.query<{ started: number }>(
    `select count(*)::int as started from throttle_starts where key_id = $1`,
    [keyId],
  )) as [{ started: number }];
  const free = Math.min(head.throttle_limit - started, MAX_GRANT);
  let granted: string[] = [];
  if (free > 0) {
    const rows = await tx.query<{ execution_id: string; waited: number }>(
      `update throttle_waits set state = 'granted', granted_at = now()
       where execution_id in (
         select execution_id from throttle_waits where key_id = $1 and state = 'queued'
         order by priority desc, seq limit ${free}
       )
       returning execution_id, extract(epoch from granted_at - enqueued_at)::float8 as waited`,
      [keyId],
    );
    for (const row of rows) waits.push(Number(row.waited));
    granted = rows.map((row) => row.execution_id);
    if (granted.length > 0)
      await tx.query(
        `insert into throttle_starts (key_id, workspace_id, started_at)
         select $1, $2, now() from generate_series(1, $3::int)`,
        [keyId, workspaceId, granted.length],
      );
  }
  const [waiting] = await tx.query<{ execution_id: string }>(
    `select execution_id from throttle_waits where key_id = $1 and state = 'queued' limit 1`,
    [keyId],
  );
  if (!waiting) {
    await tx.query('delete from throttle_keys where key_id = $1', [keyId]);
    return granted;
  }
  // The queue goes on when the window's oldest start leaves it (the window is full now).
  await tx.query(
    `insert into throttle_keys (key_id, workspace_id, next_at)
     select $1, $2, min(started_at) + make_interval(secs => $3::double precision / 1000)
       from throttle_starts where key_id = $1
     on conflict (key_id) do update set next_at = excluded.next_at`,
    [keyId, workspaceId, head.period_ms],
  );
  return granted;
}

/**
 * A run asks for its start: a row for it, queued, then the key's window granted, so that a new run never
 * passes queued ones. Idempotent: a run that has its row already is answered as it is. `granted` are other
 * executions granted on the way, which the caller signals.
 */
export async function acquireThrottle(
  db: Database,
  wait: NewThrottleWait,
): Promise<{ state: ThrottleState; granted: string[] }> {
  const keyId = throttleKeyId(wait);
  return grantingTransaction(db, 'throttle', async (tx, waits) => {
    await lockKey(tx, keyId);
    const [existing] = await tx.query<{ state: ThrottleState }>(
      'select state from throttle_waits where execution_id = $1',
      [wait.execution_id],
    );
    if (existing) return { state: existing.state, granted: [] };
    await tx.query(
      `insert into throttle_waits
         (execution_id, workspace_id, workflow_id, key, key_id, throttle_limit, period_ms, priority, state)
       values ($1, $2, $3, $4, $5, $6, $7, $8, 'queued')`,
      [
        wait.execution_id,
        wait.workspace_id,
        wait.workflow_id,
        wait.key,
        keyId,
        wait.limit,
        wait.period_ms,
        wait.priority,
      ],
    );
    const opened = await grantNext(tx, keyId, wait.workspace_id, waits);
    const own = opened.includes(wait.execution_id);
    // This run learns of its start from this answer: no signal to send it.
    if (own)
      await tx.query('update throttle_waits set signaled_at = now() where execution_id = $1', [
        wait.execution_id,
      ]);
    return { state: own ? 'granted' : 'queued', granted: opened.filter((id) => id !== wait.execution_id) };
  });
}

/** A run ends: its row goes (a start it was granted stays counted in its window). */
export async function releaseThrottle(db: Queryable, executionId: string): Promise<void> {
  await db.query('delete from throttle_waits where execution_id = $1', [executionId]);
}

/** Keys whose window frees a start by now (the throttle sweeper), at most `limit`. */
export async function dueThrottleKeys(
  db: Queryable,
  limit: number,
): Promise<{ key_id: string; workspace_id: string }[]> {
  return db.query<{ key_id: string; workspace_id: string }>(
    `select key_id, workspace_id from throttle_keys where next_at <= now() order by next_at limit $1`,
    [limit],
  );
}

/** Grants a key's window (the sweeper, once its `next_at` passed). */
export async function grantThrottleKey(db: Database, keyId: string, workspaceId: string): Promise<string[]> {
  return grantingTransaction(db, 'throttle', async (tx, waits) => {
    await lockKey(tx, keyId);
    return grantNext(tx, keyId, workspaceId, waits);
  });
}

/** The granted runs were told. */
export async function markThrottleSignaled(db: Queryable, executionIds: string[]): Promise<void> {
  if (executionIds.length === 0) return;
  await db.query(
    `update throttle_waits set signaled_at = now() where execution_id = any($1) and state = 'granted'`,
    [executionIds],
  );
}

/** Granted rows whose run was not told for `olderThanMs` (a grant that died between commit and signal). */
export async function unsignaledThrottleWaits(
  db: Queryable,
  olderThanMs: number,
  limit: number,
): Promise<string[]> {
  const rows = await db.query<{ execution_id: string }>(
    `select execution_id from throttle_waits
     where state = 'granted' and signaled_at is null and granted_at < now() - make_interval(secs => $1)
     order by granted_at limit $2`,
    [olderThanMs / 1000, limit],
  );
  return rows.map((row) => row.execution_id);
}

/**
 * A workflow's runs waiting for their throttle: all of them, and the `keys` keys that hold the most
 * (GET /v1/workflows/{id}/queue).
 */
export async function throttleQueueCounts(
  db: Queryable,
  workspaceId: string,
  workflowId: string,
  keys: number,
): Promise<{ queued: number; keys: { key: string | null; queued: number }[] }> {
  const where = `workspace_id = $1 and workflow_id = $2 and state = 'queued'`;
  const [total] = await db.query<{ queued: number }>(
    `select count(*)::int as queued from throttle_waits where ${where}`,
    [workspaceId, workflowId],
  );
  const rows = await db.query<{ key: string | null; queued: number }>(
    `select key, count(*)::int as queued from throttle_waits where ${where}
     group by key order by count(*) desc, key nulls first limit ${keys}`,
    [workspaceId, workflowId],
  );
  return { queued: total?.queued ?? 0, keys: rows };
}

/** Granted rows a day old: their runs took their start long ago, and nothing asks for them again. */
export async function forgetOldThrottleWaits(db: Queryable): Promise<void> {
  await db.query(
    `delete from throttle_waits where execution_id in (
       select execution_id from throttle_waits
       where state = 'granted' and signaled_at is not null and granted_at < now() - interval '1 day'
       limit 1000)`,
  );
}
