/**
 * Flow control's workspace cap (migration 016, docs/flow-control.md#workspace-cap): which top-level
 * executions of a workspace are open (running or waiting) and which are queued behind its
 * `open_executions` limit, in the order they are admitted (priority, then arrival).
 *
 * Race safety as for the key gates (admissions.ts): everything that changes a workspace's rows (a new run,
 * a release, a grant) runs in one transaction that first takes the workspace's advisory lock, so two workers
 * or API processes never both see a free place and take it. Each statement after the lock sees every commit
 * made under it before (PostgreSQL takes a new snapshot per statement at read committed).
 *
 * Cost: a run admitted at once is one statement (one round trip: migration 016's `workspace_admission_acquire`,
 * which takes the lock and inserts the row open), and its release one more (`workspace_admission_release`:
 * the lock, the delete, and a grant only when runs are queued). A volatile PL/pgSQL function takes a new
 * snapshot for each query after the lock, so it is as race-safe as a transaction of several statements.
 * Runs of one process that ask or end at the same moment share one statement (migration 018). On the
 * embedded database a place held only for one batch of steps is no row at all (batch-places.ts).
 */
import type { LimitValue } from '../../core/workspace-limits';
import type { Database, Queryable } from './db';
import { batchPlacesOf } from './batch-places';
import {
  groupedStatement,
  groupsInFlight,
  groupsPerDatabase,
  type GroupedStatement,
} from './statement-groups';

export type WorkspaceAdmissionState = 'open' | 'queued';

export interface NewWorkspaceAdmission {
  execution_id: string;
  workspace_id: string;
  priority: number;
  /** The workspace's `open_executions` limit now (null: unlimited, which queues nothing). */
  limit: LimitValue;
}

/** Rows admitted at once by one grant at most (a limit raised by thousands opens in several passes). */
const MAX_GRANT = 1000;

/** The most places a grant may open under `limit`, as SQL over the open count `open`. */
function freePlaces(limit: LimitValue, open: string): string {
  return limit === null ? `${MAX_GRANT}` : `least(${MAX_GRANT}, greatest(0, ${limit} - (${open})))`;
}

function checkLimit(limit: LimitValue): void {
  // Written into the statement text (LIMIT takes no parameter through every driver alike): an integer only.
  if (limit !== null && !Number.isSafeInteger(limit)) throw new Error(`Invalid workspace limit ${limit}`);
}

async function lockWorkspace(tx: Queryable, workspaceId: string): Promise<void> {
  await tx.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [`workspace-cap:${workspaceId}`]);
}

/**
 * Opens the workspace's free places to its queued rows, best first. Call with the workspace's lock held.
 * Returns the executions it opened.
 */
async function grantNext(tx: Queryable, workspaceId: string, limit: LimitValue): Promise<string[]> {
  checkLimit(limit);
  const open = `select count(*) from workspace_admissions where workspace_id = $1 and state = 'open'`;
  const rows = await tx.query<{ execution_id: string }>(
    `update workspace_admissions set state = 'open', admitted_at = now()
     where execution_id in (
       select execution_id from workspace_admissions where workspace_id = $1 and state = 'queued'
       order by priority desc, seq limit ${freePlaces(limit, open)}
     )
     returning execution_id`,
    [workspaceId],
  );
  return rows.map((row) => row.execution_id);
}

/**
 * A run asks for its place: open at once when the workspace has a free place and nobody queued before it,
 * else queued and the free places granted best first (a new run never passes queued ones). Idempotent: a
 * row the execution has already is answered as it is. `granted` are other executions opened on the way (a
 * place a release left unused, a limit raised), which the caller signals.
 */
export async function acquireWorkspacePlace(
  db: Database,
  admission: NewWorkspaceAdmission,
  options: {
    /**
     * The place is asked by a batch of steps that gives it back before it completes, or writes it first
     * (keepBatchPlace): on the embedded database it may be held in memory (batch-places.ts).
     */
    forBatch?: boolean;
  } = {},
): Promise<{ state: WorkspaceAdmissionState; granted: string[] }> {
  checkLimit(admission.limit);
  const { workspace_id: workspaceId, execution_id: executionId, limit } = admission;
  const places = options.forBatch && limit !== null ? batchPlacesOf(db) : undefined;
  if (
    places &&
    limit !== null &&
    (await places.take(workspaceId, executionId, limit, () => workspaceRowCounts(db, workspaceId)))
  )
    return { state: 'open', granted: [] };
  return underCap(db, workspaceId, limit, (rowLimit) => acquireRow(db, { ...admission, limit: rowLimit }));
}

/**
 * Runs `decide`, a statement that changes the workspace's rows under its cap, with what the rows may hold:
 * `limit`, less on the embedded database the places held for a batch (batch-places.ts), whose known counts
 * the change makes unknown.
 */
function underCap<T>(
  db: Database,
  workspaceId: string,
  limit: LimitValue,
  decide: (rowLimit: LimitValue) => Promise<T>,
): Promise<T> {
  const places = batchPlacesOf(db);
  return places
    ? places.changing(workspaceId, () => decide(places.capForRows(workspaceId, limit)))
    : decide(limit);
}

/** The ask as a row: `limit` is what the rows may hold. */
async function acquireRow(
  db: Database,
  admission: NewWorkspaceAdmission,
): Promise<{ state: WorkspaceAdmissionState; granted: string[] }> {
  const { limit } = admission;
  // One statement: under the workspace's lock, the existing row, or a new one that the workspace's queue and
  // open count make open or queued (migration 016's function).
  const row = await groupsOf(db).acquire(admission);
  if (row.state === 'open' || !row.created) return { state: row.state, granted: [] };
  // Queued behind others, or the workspace full: the free places (if any) go to the best rows, maybe this one.
  return db.transaction(async (tx) => {
    await lockWorkspace(tx, admission.workspace_id);
    const opened = await grantNext(tx, admission.workspace_id, limit);
    const own = opened.includes(admission.execution_id);
    // This run learns it is open from this answer: no signal to send it.
    if (own)
      await tx.query('update workspace_admissions set signaled_at = now() where execution_id = $1', [
        admission.execution_id,
      ]);
    return {
      state: own ? 'open' : 'queued',
      granted: opened.filter((id) => id !== admission.execution_id),
    };
  });
}

/**
 * A run ends (or its run is gone): its row goes, and the places free under `limit` go to the queued rows,
 * in the same statement. Returns the executions opened, which the caller signals. With `seq`: only that row
 * (the sweeper's check, which a retry's new row of the execution must survive).
 */
export async function releaseWorkspacePlace(
  db: Database,
  release: { execution_id: string; workspace_id: string; limit: LimitValue; seq?: string },
): Promise<string[]> {
  checkLimit(release.limit);
  const { workspace_id: workspaceId, execution_id: executionId } = release;
  const places = batchPlacesOf(db);
  // A place held for the batch has no row: given back here, unless runs may be queued for it.
  if (release.seq === undefined && places?.holds(executionId) && places.giveBack(workspaceId, executionId))
    return [];
  return underCap(db, workspaceId, release.limit, (rowLimit) =>
    releaseRow(db, { ...release, limit: rowLimit }),
  );
}

/**
 * A batch that took its place with `forBatch` and does not end its run writes the place as a row before it
 * completes: the run holds it past the batch, across a crash. Nothing to do for a place that is a row already.
 */
export async function keepBatchPlace(db: Database, workspaceId: string, executionId: string): Promise<void> {
  const places = batchPlacesOf(db);
  if (!places?.holds(executionId)) return;
  try {
    // Open whatever the count (a null limit): the place was the run's already.
    await places.changing(workspaceId, () =>
      groupsOf(db).acquire({
        execution_id: executionId,
        workspace_id: workspaceId,
        priority: 0,
        limit: null,
      }),
    );
  } finally {
    // Written, or not (the run then goes on uncounted, as when the database does not answer its ask).
    places.forget(workspaceId, executionId);
  }
}

/** A batch that failed before it gave back or kept its place: the retry asks again. */
export function dropBatchPlace(db: Database, workspaceId: string, executionId: string): void {
  batchPlacesOf(db)?.forget(workspaceId, executionId);
}

/** The release of a row: `limit` is what the rows may hold. */
async function releaseRow(
  db: Database,
  release: { execution_id: string; workspace_id: string; limit: LimitValue; seq?: string },
): Promise<string[]> {
  if (release.seq === undefined) return groupsOf(db).release(release);
  const rows = await db.query<{ execution_id: string }>(
    'select workspace_admission_release as execution_id from workspace_admission_release($1, $2, $3, $4)',
    [release.execution_id, release.workspace_id, release.limit, release.seq],
  );
  return rows.map((row) => row.execution_id);
}

/**
 * The one-statement acquire and release of migration 016, grouped (statement-groups.ts) through migration
 * 018's functions: the runs of this process that ask or end at the same moment share one statement.
 */
interface WorkspaceCapGroups {
  acquire: GroupedStatement<NewWorkspaceAdmission, { state: WorkspaceAdmissionState; created: boolean }>;
  /** A run's own release (no `seq`): the executions it opened. */
  release: GroupedStatement<{ execution_id: string; workspace_id: string; limit: LimitValue }, string[]>;
}

const groupsOf = groupsPerDatabase<WorkspaceCapGroups>((db) => ({
  acquire: groupedStatement(async (admissions) => {
    const rows = await db.query<{ ord: string | number; state: WorkspaceAdmissionState; created: boolean }>(
      `select ord, state, created from workspace_admission_acquire_many(
           $1::text[], $2::text[], $3::integer[], $4::integer[])`,
      [
        admissions.map((a) => a.execution_id),
        admissions.map((a) => a.workspace_id),
        admissions.map((a) => a.priority),
        admissions.map((a) => a.limit),
      ],
    );
    const answers: { state: WorkspaceAdmissionState; created: boolean }[] = [];
    for (const row of rows) answers[Number(row.ord) - 1] = { state: row.state, created: row.created };
    return answers;
  }, groupsInFlight(db)),
  release: groupedStatement(async (releases) => {
    const rows = await db.query<{ ord: string | number; execution_id: string }>(
      `select ord, execution_id from workspace_admission_release_many($1::text[], $2::text[], $3::integer[])`,
      [
        releases.map((r) => r.execution_id),
        releases.map((r) => r.workspace_id),
        releases.map((r) => r.limit),
      ],
    );
    const opened: string[][] = releases.map(() => []);
    for (const row of rows) opened[Number(row.ord) - 1]!.push(row.execution_id);
    return opened;
  }, groupsInFlight(db)),
}));

/** The workspace of an execution's row, or undefined when it has none. */
export async function workspaceOfAdmission(db: Queryable, executionId: string): Promise<string | undefined> {
  const [row] = await db.query<{ workspace_id: string }>(
    'select workspace_id from workspace_admissions where execution_id = $1',
    [executionId],
  );
  return row?.workspace_id;
}

/** Grants a workspace's free places (the sweeper: a limit raised, or a release that never ran). */
export async function grantWorkspace(
  db: Database,
  workspaceId: string,
  limit: LimitValue,
): Promise<string[]> {
  return underCap(db, workspaceId, limit, (rowLimit) =>
    db.transaction(async (tx) => {
      await lockWorkspace(tx, workspaceId);
      return grantNext(tx, workspaceId, rowLimit);
    }),
  );
}

/** The granted runs were told. */
export async function markWorkspaceSignaled(db: Queryable, executionIds: string[]): Promise<void> {
  if (executionIds.length === 0) return;
  await db.query(
    `update workspace_admissions set signaled_at = now() where execution_id = any($1) and state = 'open'`,
    [executionIds],
  );
}

/** Granted rows whose run was not told for `olderThanMs` (a release that died between commit and signal). */
export async function unsignaledWorkspaceAdmissions(
  db: Queryable,
  olderThanMs: number,
  limit: number,
): Promise<string[]> {
  const rows = await db.query<{ execution_id: string }>(
    `select execution_id from workspace_admissions
     where state = 'open' and signaled_at is null and admitted_at < now() - make_interval(secs => $1)
     order by admitted_at limit $2`,
    [olderThanMs / 1000, limit],
  );
  return rows.map((row) => row.execution_id);
}

/** Workspaces with runs queued for `olderThanMs` at least: the sweeper grants what places they have free. */
export async function workspacesWithQueue(
  db: Queryable,
  olderThanMs: number,
  limit: number,
): Promise<string[]> {
  const rows = await db.query<{ workspace_id: string }>(
    `select distinct workspace_id from workspace_admissions
     where state = 'queued' and enqueued_at < now() - make_interval(secs => $1)
     limit $2`,
    [olderThanMs / 1000, limit],
  );
  return rows.map((row) => row.workspace_id);
}

/**
 * Rows whose run the sweeper checks now (closed without releasing: terminated, timed out), longest unchecked
 * first, marked checked as they are taken so that processes share them.
 */
export async function takeWorkspaceRowsToCheck(
  db: Queryable,
  olderThanMs: number,
  limit: number,
): Promise<{ execution_id: string; workspace_id: string; seq: string }[]> {
  return db.query<{ execution_id: string; workspace_id: string; seq: string }>(
    `update workspace_admissions set checked_at = now()
     where execution_id in (
       select execution_id from workspace_admissions where checked_at < now() - make_interval(secs => $1)
       order by checked_at limit $2 for update skip locked
     )
     returning execution_id, workspace_id, seq::text`,
    [olderThanMs / 1000, limit],
  );
}

/**
 * A workspace's open and queued executions under its cap (exact at the moment of the read): its rows, and
 * on the embedded database the places held for a batch.
 */
export async function workspaceAdmissionCounts(
  db: Database,
  workspaceId: string,
): Promise<{ open: number; queued: number }> {
  const rows = await workspaceRowCounts(db, workspaceId);
  return { open: rows.open + (batchPlacesOf(db)?.heldIn(workspaceId) ?? 0), queued: rows.queued };
}

/** The workspace's rows alone (another process's view: places held for a batch are this process's). */
export async function workspaceRowCounts(
  db: Queryable,
  workspaceId: string,
): Promise<{ open: number; queued: number }> {
  const [row] = await db.query<{ open: number; queued: number }>(
    `select count(*) filter (where state = 'open')::int as open,
            count(*) filter (where state = 'queued')::int as queued
     from workspace_admissions where workspace_id = $1`,
    [workspaceId],
  );
  return row ?? { open: 0, queued: 0 };
}
