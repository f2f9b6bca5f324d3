/**
 * Flow control's admission table (migration 013, docs/flow-control.md): which executions of a key are open
 * and which are queued, in the order they are admitted.
 *
 * Race safety: everything that changes a key's rows (admitting a new run, releasing one, granting queued
 * ones) runs in one transaction that first takes the key's advisory lock, so two workers or API processes
 * never both see a free place and take it. A lock of the key rather than of a row: the key has no row of its
 * own, and the lock serializes only that key's changes.
 */
import { metrics } from '../observability/metrics';
import { grantingTransaction, type Waits } from './admission-waits';
import type { Database, Queryable } from './db';
import {
  groupedStatement,
  groupsInFlight,
  groupsPerDatabase,
  type GroupedStatement,
} from './statement-groups';

/** One concurrency key of a workflow: `key` null when the definition has no key expression. */
export interface AdmissionKey {
  workspace_id: string;
  workflow_id: string;
  key: string | null;
}

export interface NewAdmission extends AdmissionKey {
  execution_id: string;
  limit: number;
  priority: number;
}

export type AdmissionState = 'open' | 'queued';

/** Rows admitted at once by one grant at most (a limit is at most 1,000: core/definitions/schema.ts). */
const MAX_GRANT = 1000;

/** The rows of one key: `key = $n`, or `key is null` (no index serves `is not distinct from`). */
function keyClause(key: string | null, param: number): string {
  return key === null ? 'key is null' : `key = $${param}`;
}

function keyParams(key: AdmissionKey): unknown[] {
  return key.key === null
    ? [key.workspace_id, key.workflow_id]
    : [key.workspace_id, key.workflow_id, key.key];
}

async function lockKey(tx: Queryable, key: AdmissionKey): Promise<void> {
  const name = `admission:${key.workspace_id}:${key.workflow_id}:${key.key === null ? '-' : `=${key.key}`}`;
  await tx.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [name]);
}

/**
 * Opens the key's free places to its queued rows, best first (priority, then arrival), under the limit of
 * the row first in line. Call with the key's lock held. Returns the executions it opened; adds to `waits`
 * how long each was queued.
 */
async function grantNext(tx: Queryable, key: AdmissionKey, waits: Waits): Promise<string[]> {
  const where = `workspace_id = $1 and workflow_id = $2 and ${keyClause(key.key, 3)}`;
  const params = keyParams(key);
  const [head] = await tx.query<{ concurrency_limit: number }>(
    `select concurrency_limit from admissions where ${where} and state = 'queued'
     order by priority desc, seq limit 1`,
    params,
  );
  if (!head) return [];
  const [{ open }] = (await tx.query<{ open: number }>(
    `select count(*)::int as open from admissions where ${where} and state = 'open'`,
    params,
  )) as [{ open: number }];
  const free = Math.min(head.concurrency_limit - open, MAX_GRANT);
  if (free <= 0) return [];
  const rows = await tx.query<{ execution_id: string; waited: number }>(
    `update admissions set state = 'open', admitted_at = now()
     where execution_id in (
       select execution_id from admissions where ${where} and state = 'queued'
       order by priority desc, seq limit ${free}
     )
     returning execution_id, extract(epoch from admitted_at - enqueued_at)::float8 as waited`,
    params,
  );
  for (const row of rows) waits.push(Number(row.waited));
  return rows.map((row) => row.execution_id);
}

/**
 * A run asks for its place: a row for it, queued, then the key's free places granted, so that a new run
 * never passes queued ones. Idempotent: a row the execution has already is answered as it is. `granted` are
 * other executions opened on the way (a place a release left unused), which the caller signals.
 */
export async function acquireAdmission(
  db: Database,
  admission: NewAdmission,
): Promise<{ state: AdmissionState; granted: string[] }> {
  // The common case in one statement (migration 017): the row the run has, or a free place and nobody queued.
  const row = [
    admission.execution_id,
    admission.workspace_id,
    admission.workflow_id,
    admission.key,
    admission.limit,
    admission.priority,
  ];
  const fast = await groupsOf(db).tryOpen(admission);
  if (fast === 'opened') {
    metrics.admitted('concurrency', [0]);
    return { state: 'open', granted: [] };
  }
  if (fast) return { state: fast, granted: [] };
  return grantingTransaction(db, 'concurrency', async (tx, waits) => {
    await lockKey(tx, admission);
    const [existing] = await tx.query<{ state: AdmissionState }>(
      'select state from admissions where execution_id = $1',
      [admission.execution_id],
    );
    if (existing) return { state: existing.state, granted: [] };
    await tx.query(
      `insert into admissions (execution_id, workspace_id, workflow_id, key, concurrency_limit, priority, state)
       values ($1, $2, $3, $4, $5, $6, 'queued')`,
      row,
    );
    const opened = await grantNext(tx, admission, waits);
    const own = opened.includes(admission.execution_id);
    // This run learns it is open from this answer: no signal to send it.
    if (own)
      await tx.query('update admissions set signaled_at = now() where execution_id = $1', [
        admission.execution_id,
      ]);
    return {
      state: own ? 'open' : 'queued',
      granted: opened.filter((id) => id !== admission.execution_id),
    };
  });
}

/** The key of an execution's row, or undefined when it has none. */
async function keyOf(db: Queryable, executionId: string): Promise<AdmissionKey | undefined> {
  const [row] = await db.query<AdmissionKey>(
    'select workspace_id, workflow_id, key from admissions where execution_id = $1',
    [executionId],
  );
  return row;
}

/**
 * A run ends (or its run is gone): its row goes, and its key's free places go to the queued rows. Returns
 * the executions opened, which the caller signals. Nothing to do for an execution without a row.
 */
export async function releaseAdmission(db: Database, executionId: string, seq?: string): Promise<string[]> {
  const key = await keyOf(db, executionId);
  if (!key) return [];
  return grantingTransaction(db, 'concurrency', async (tx, waits) => {
    await lockKey(tx, key);
    // With `seq`: only that row (the sweeper's check, which a retry's new row of the execution must survive).
    await tx.query(
      `delete from admissions where execution_id = $1${seq === undefined ? '' : ' and seq = $2'}`,
      seq === undefined ? [executionId] : [executionId, seq],
    );
    return grantNext(tx, key, waits);
  });
}

/**
 * A run ends: its throttle row and its admission row go, in one statement (migration 017), and when runs are
 * queued on its key, the key's free places go to them. Returns the executions opened, which the caller
 * signals.
 */
export async function releaseRunAdmission(db: Database, executionId: string): Promise<string[]> {
  const queued = await groupsOf(db).release(executionId);
  return queued ? grantKey(db, queued) : [];
}

/**
 * The two one-statement paths of migration 017, grouped (statement-groups.ts) through migration 018's
 * functions: the runs of this process that ask at the same moment share one statement.
 */
interface KeyGateGroups {
  /** admission_try_open: the row's state, `opened`, or null (the transaction decides). */
  tryOpen: GroupedStatement<NewAdmission, AdmissionState | 'opened' | null>;
  /** admission_release: the key when runs are queued on it, else undefined. */
  release: GroupedStatement<string, AdmissionKey | undefined>;
}

const groupsOf = groupsPerDatabase<KeyGateGroups>((db) => ({
  tryOpen: groupedStatement(async (admissions) => {
    const rows = await db.query<{ ord: string | number; state: AdmissionState | 'opened' | null }>(
      `select ord, state from admission_try_open_many(
           $1::text[], $2::text[], $3::text[], $4::text[], $5::integer[], $6::integer[])`,
      [
        admissions.map((a) => a.execution_id),
        admissions.map((a) => a.workspace_id),
        admissions.map((a) => a.workflow_id),
        admissions.map((a) => a.key),
        admissions.map((a) => a.limit),
        admissions.map((a) => a.priority),
      ],
    );
    const states: (AdmissionState | 'opened' | null)[] = admissions.map(() => null);
    for (const row of rows) states[Number(row.ord) - 1] = row.state;
    return states;
  }, groupsInFlight(db)),
  release: groupedStatement(async (executionIds) => {
    // Distinct executions (one may be released twice at once: its batch and its own activity).
    const rows = await db.query<AdmissionKey>(
      'select workspace_id, workflow_id, key from admission_release_many($1::text[])',
      [[...new Set(executionIds)]],
    );
    // Which execution freed a queued key does not matter: the key is granted once per answer.
    return executionIds.map((_, index) => rows[index]);
  }, groupsInFlight(db)),
}));

/** Grants a key's free places (the sweeper: a limit raised, or a release that never ran). */
export async function grantKey(db: Database, key: AdmissionKey): Promise<string[]> {
  return grantingTransaction(db, 'concurrency', async (tx, waits) => {
    await lockKey(tx, key);
    return grantNext(tx, key, waits);
  });
}

/** The granted runs were told. */
export async function markSignaled(db: Queryable, executionIds: string[]): Promise<void> {
  if (executionIds.length === 0) return;
  await db.query(
    `update admissions set signaled_at = now() where execution_id = any($1) and state = 'open'`,
    [executionIds],
  );
}

/** Granted rows whose run was not told for `olderThanMs` (a release that died between commit and signal). */
export async function unsignaledAdmissions(
  db: Queryable,
  olderThanMs: number,
  limit: number,
): Promise<string[]> {
  const rows = await db.query<{ execution_id: string }>(
    `select execution_id from admissions
     where state = 'open' and signaled_at is null and admitted_at < now() - make_interval(secs => $1)
     order by admitted_at limit $2`,
    [olderThanMs / 1000, limit],
  );
  return rows.map((row) => row.execution_id);
}

/** Keys with runs queued for `olderThanMs` at least: the sweeper grants what places they have free. */
export async function keysWithQueue(
  db: Queryable,
  olderThanMs: number,
  limit: number,
): Promise<AdmissionKey[]> {
  return db.query<AdmissionKey>(
    `select distinct workspace_id, workflow_id, key from admissions
     where state = 'queued' and enqueued_at < now() - make_interval(secs => $1)
     limit $2`,
    [olderThanMs / 1000, limit],
  );
}

/**
 * Rows whose run the sweeper checks now (it may have closed without releasing: terminated, timed out): the
 * ones checked longest ago, at least `olderThanMs` ago, marked checked as they are taken so that processes
 * share them.
 */
export async function takeRowsToCheck(
  db: Queryable,
  olderThanMs: number,
  limit: number,
): Promise<{ execution_id: string; seq: string }[]> {
  return db.query<{ execution_id: string; seq: string }>(
    `update admissions set checked_at = now()
     where execution_id in (
       select execution_id from admissions where checked_at < now() - make_interval(secs => $1)
       order by checked_at limit $2 for update skip locked
     )
     returning execution_id, seq::text`,
    [olderThanMs / 1000, limit],
  );
}

/** Keys a queue read shows at most, busiest first. */
export const QUEUE_KEYS_SHOWN = 20;

/** A workflow's queued and open executions, and its busiest keys (GET /v1/workflows/{id}/queue). */
export async function queueCounts(
  db: Queryable,
  workspaceId: string,
  workflowId: string,
): Promise<{ queued: number; open: number; keys: { key: string | null; queued: number; open: number }[] }> {
  const counts = `count(*) filter (where state = 'queued')::int as queued,
                  count(*) filter (where state = 'open')::int as open`;
  const [totals] = await db.query<{ queued: number; open: number }>(
    `select ${counts} from admissions where workspace_id = $1 and workflow_id = $2`,
    [workspaceId, workflowId],
  );
  const keys = await db.query<{ key: string | null; queued: number; open: number }>(
    `select key, ${counts} from admissions where workspace_id = $1 and workflow_id = $2
     group by key order by count(*) desc, key nulls first limit ${QUEUE_KEYS_SHOWN}`,
    [workspaceId, workflowId],
  );
  return { queued: totals?.queued ?? 0, open: totals?.open ?? 0, keys };
}
