/**
 * Workspace limits (docs/operations.md#workspace-limits): the operator's overrides (migration 009), the
 * limits in effect (an override, else the default from the environment), the counts they bound, and
 * creation within a count limit.
 *
 * Race safety: a creation that a limit bounds runs in one transaction that first takes an advisory lock
 * per (limit, workspace), then inserts, then counts; over the maximum, it throws and rolls back. The lock
 * makes concurrent creations of one workspace take turns, so N requests at the limit cannot all see room
 * and overshoot. An advisory lock rather than the workspace row's lock: FOR UPDATE on `workspaces` would
 * also block every insert that references the row (its foreign keys take KEY SHARE), and creations of
 * different kinds need not wait for each other.
 */
import { limitExceeded } from '../errors';
import {
  LIMIT_NAMES,
  LIMIT_UNITS,
  type CountedLimit,
  type LimitName,
  type LimitValue,
  type WorkspaceLimits,
} from '../../core/workspace-limits';
import { announceChange } from './changes';
import type { Database, Queryable } from './db';

/** One change an operator makes to a limit: a maximum, null (unlimited), or back to the default. */
export type LimitSetting = number | null | 'default';

/** The overrides set for a workspace: a maximum, or null (unlimited). Absent names follow the default. */
export async function readLimitOverrides(
  db: Queryable,
  workspaceId: string,
): Promise<Map<LimitName, LimitValue>> {
  const rows = await db.query<{ name: LimitName; maximum: string | number | null }>(
    'select name, maximum from workspace_limits where workspace_id = $1',
    [workspaceId],
  );
  // bigint columns arrive as strings from node-postgres.
  return new Map(rows.map((row) => [row.name, row.maximum === null ? null : Number(row.maximum)]));
}

/** The limits in effect for a workspace: its overrides over the defaults. */
export async function effectiveLimits(
  db: Queryable,
  workspaceId: string,
  defaults: WorkspaceLimits,
): Promise<WorkspaceLimits> {
  const overrides = await readLimitOverrides(db, workspaceId);
  return Object.fromEntries(
    LIMIT_NAMES.map((name) => [name, overrides.has(name) ? overrides.get(name)! : defaults[name]]),
  ) as WorkspaceLimits;
}

/** One limit in effect for a workspace: its override, else `defaultValue`. */
export async function effectiveLimit(
  db: Queryable,
  workspaceId: string,
  name: LimitName,
  defaultValue: LimitValue,
): Promise<LimitValue> {
  const [row] = await db.query<{ maximum: string | number | null }>(
    'select maximum from workspace_limits where workspace_id = $1 and name = $2',
    [workspaceId, name],
  );
  if (!row) return defaultValue;
  return row.maximum === null ? null : Number(row.maximum);
}

/**
 * Applies an operator's changes in one statement (all or nothing): a maximum or null (unlimited) is stored;
 * 'default' removes the override. Processes that cache the limits (cached-reads.ts) hear of it.
 */
export async function setLimitOverrides(
  db: Queryable,
  workspaceId: string,
  changes: ReadonlyMap<LimitName, LimitSetting>,
): Promise<void> {
  const entries = [...changes];
  await db.query(
    `with changes as (
       select * from unnest($2::text[], $3::bigint[], $4::boolean[]) as c (name, maximum, reset)
     ), removed as (
       delete from workspace_limits l using changes c
        where l.workspace_id = $1 and l.name = c.name and c.reset
     )
     insert into workspace_limits (workspace_id, name, maximum)
     select $1, name, maximum from changes where not reset
     on conflict (workspace_id, name) do update set maximum = excluded.maximum, updated_at = now()`,
    [
      workspaceId,
      entries.map(([name]) => name),
      entries.map(([, setting]) => (setting === 'default' ? null : setting)),
      entries.map(([, setting]) => setting === 'default'),
    ],
  );
  await announceChange(db, 'limits');
}

/** How each counted limit counts: what exists in the workspace (API keys: the active ones). */
const COUNT_SQL: Record<CountedLimit, string> = {
  workflows: 'select count(*)::int as n from workflows where workspace_id = $1',
  secrets: 'select count(*)::int as n from secrets where workspace_id = $1',
  webhook_endpoints: 'select count(*)::int as n from webhook_endpoints where workspace_id = $1',
  api_keys: 'select count(*)::int as n from api_keys where workspace_id = $1 and revoked_at is null',
};

/** The counts of a workspace's objects that count limits bound, in one statement. */
export async function countedUsage(
  db: Queryable,
  workspaceId: string,
): Promise<Record<CountedLimit, number>> {
  const [row] = await db.query<Record<CountedLimit, number>>(
    `select (${COUNT_SQL.workflows}) as workflows, (${COUNT_SQL.secrets}) as secrets,
            (${COUNT_SQL.webhook_endpoints}) as webhook_endpoints, (${COUNT_SQL.api_keys}) as api_keys`,
    [workspaceId],
  );
  return row!;
}

/** A count limit to create within: the workspace, which limit, and its maximum (null: unlimited). */
export interface CountLimit {
  workspaceId: string;
  name: CountedLimit;
  max: LimitValue;
}

/** Serializes creations bounded by `limit` in its workspace until the transaction ends (see the header). */
export async function lockCountLimit(tx: Queryable, limit: CountLimit): Promise<void> {
  if (limit.max === null) return;
  await tx.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [
    `switchyard-limit:${limit.name}:${limit.workspaceId}`,
  ]);
}

/** After an insert under lockCountLimit: throws 409 limit_exceeded when the workspace now has too many. */
export async function checkCountLimit(tx: Queryable, limit: CountLimit): Promise<void> {
  if (limit.max === null) return;
  const [row] = await tx.query<{ n: number }>(COUNT_SQL[limit.name], [limit.workspaceId]);
  if (row!.n > limit.max) throw limitExceeded(limit.name, limit.max, LIMIT_UNITS[limit.name]);
}

/**
 * Runs `insert` within `limit`: in a transaction, under the limit's lock, and rolled back with 409
 * limit_exceeded when the workspace then has more than its maximum. `created` says whether the insert
 * added one (an upsert that replaced an existing object never exceeds a limit).
 */
export async function createWithinLimit<T>(
  db: Database,
  limit: CountLimit,
  insert: (tx: Queryable) => Promise<T>,
  created: (result: T) => boolean = () => true,
): Promise<T> {
  return db.transaction(async (tx) => {
    await lockCountLimit(tx, limit);
    const result = await insert(tx);
    if (created(result)) await checkCountLimit(tx, limit);
    return result;
  });
}
