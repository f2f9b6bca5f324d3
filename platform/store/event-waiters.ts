/**
 * The wait_for_event steps now waiting (migration 011, docs/events.md#waiting-for-an-event): filed when a
 * wait begins, found by an event's name and key, claimed by the one event that wakes each, ended by the
 * run as it stops waiting, purged by the housekeeping job.
 */
import type { SecretCipher } from '../secrets/cipher';
import type { Database, Queryable } from './db';
import { deleteInBatches, PURGE_BATCH } from './delete-in-batches';

/** Which wait: the Temporal run that waits (a chunk's own, inside a large map) and the step's key. */
export interface WaiterId {
  workflow_id: string;
  run_id: string;
  step_key: string;
}

export interface NewWaiter extends WaiterId {
  workspace_id: string;
  execution_id: string;
  step_id: string;
  run: string;
  event_name: string;
  /** The event's side of the match's equality ('' when the match has none: tried on every event). */
  key_path: string;
  /** The other side's value when the wait began, as JSON; null: no event can equal it. */
  key_value: string | null;
  match: string | null;
  /** What `match` reads of the step's context, sealed (sealContext). */
  context: string;
  until: Date;
}

/** A waiter as the dispatcher tries it. */
export interface Waiter extends WaiterId {
  workspace_id: string;
  execution_id: string;
  step_id: string;
  run: string;
  match: string | null;
  /** Sealed: openContext. */
  context: string;
  /** Set when this event claimed it before (a dispatch that did not finish): signal it again. */
  woken_by: string | null;
}

/** A stored event, as a woken step's output shows it. */
export interface WakingEvent {
  id: string;
  name: string;
  data: Record<string, unknown> | null;
  received_at: Date;
}

/** Waiters the dispatcher reads at once. */
export const WAITERS_PAGE = 500;

/** A waiter's context at rest: sealed (as secrets are), bound to its wait, so a copied value will not open. */
export function sealContext(cipher: SecretCipher, id: WaiterId, context: Record<string, unknown>): string {
  return cipher.seal(JSON.stringify(context), contextBinding(id));
}

export function openContext(cipher: SecretCipher, id: WaiterId, sealed: string): Record<string, unknown> {
  return JSON.parse(cipher.open(sealed, contextBinding(id))) as Record<string, unknown>;
}

function contextBinding(id: WaiterId): string {
  return `event_waiter:${id.workflow_id}:${id.run_id}:${id.step_key}`;
}

/**
 * Files a wait, once: `run_steps` may run again for the same step (a worker died before its result was
 * recorded), and then finds the row it filed. Returns when the wait began (the database's clock, as the
 * events' `received_at`) and the event that woke it, if one did already.
 */
export async function fileWaiter(
  db: Queryable,
  waiter: NewWaiter,
): Promise<{ began_at: Date; woken_by: string | null }> {
  const [row] = await db.query<{ began_at: Date; woken_by: string | null }>(
    `with filed as (
       insert into event_waiters (workflow_id, run_id, step_key, workspace_id, execution_id, step_id, run,
                                  event_name, key_path, key_value, match, context, until)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
       on conflict do nothing
       returning began_at, woken_by)
     select began_at, woken_by from filed
     union all
     select began_at, woken_by from event_waiters where workflow_id = $1 and run_id = $2 and step_key = $3
     limit 1`,
    [
      waiter.workflow_id,
      waiter.run_id,
      waiter.step_key,
      waiter.workspace_id,
      waiter.execution_id,
      waiter.step_id,
      waiter.run,
      waiter.event_name,
      waiter.key_path,
      waiter.key_value,
      waiter.match,
      waiter.context,
      waiter.until,
    ],
  );
  return row!;
}

/**
 * Events of `name` received since `since`, oldest first: those a new wait may have missed, received while
 * it was being filed (their dispatch may have looked for waiters before the row was there).
 */
export function eventsSince(
  db: Queryable,
  workspaceId: string,
  name: string,
  since: Date,
  limit: number,
): Promise<WakingEvent[]> {
  return db.query<WakingEvent>(
    `select id, name, data, received_at from events
      where workspace_id = $1 and name = $2 and received_at >= $3
      order by received_at, seq limit $4`,
    [workspaceId, name, since, limit],
  );
}

/** The key paths the waiters of one event name use: a loose index scan, a few lookups whatever their count. */
export async function waiterKeyPaths(db: Queryable, workspaceId: string, name: string): Promise<string[]> {
  const rows = await db.query<{ key_path: string | null }>(
    `with recursive paths(key_path) as (
       (select key_path from event_waiters
         where workspace_id = $1 and event_name = $2 and ended_at is null
         order by key_path limit 1)
       union all
       select (select w.key_path from event_waiters w
                where w.workspace_id = $1 and w.event_name = $2 and w.ended_at is null and w.key_path > p.key_path
                order by w.key_path limit 1)
         from paths p where p.key_path is not null)
     select key_path from paths where key_path is not null`,
    [workspaceId, name],
  );
  return rows.map((row) => row.key_path!);
}

/**
 * A page of the waiters an event may wake under one key path: with `value` those filed under it, without
 * it all of them (the path's value is not one a key holds, or the path is ''). Only waits that began by
 * the event's arrival and have not ended, unclaimed or claimed by this very event; after `after` (paging).
 */
export function waitersFor(
  db: Queryable,
  event: { workspace_id: string; id: string; name: string; received_at: Date },
  keyPath: string,
  value: string | undefined,
  after: WaiterId | undefined,
): Promise<Waiter[]> {
  const params: unknown[] = [event.workspace_id, event.name, keyPath, event.received_at, event.id];
  let where = '';
  if (value !== undefined) {
    params.push(value);
    where += ` and key_value = $${params.length}`;
  }
  if (after) {
    params.push(after.workflow_id, after.run_id, after.step_key);
    const n = params.length;
    where += ` and (workflow_id, run_id, step_key) > ($${n - 2}, $${n - 1}, $${n})`;
  }
  return db.query<Waiter>(
    `select workflow_id, run_id, step_key, workspace_id, execution_id, step_id, run, match, context, woken_by
       from event_waiters
      where workspace_id = $1 and event_name = $2 and key_path = $3 and ended_at is null
        and began_at <= $4 and (woken_by is null or woken_by = $5)${where}
      order by workflow_id, run_id, step_key limit ${WAITERS_PAGE}`,
    params,
  );
}

/** One event's waiters under one key path, as waitersFor reads them: with `value`, those filed under it. */
export interface WaiterLookup {
  event: { workspace_id: string; id: string; name: string; received_at: Date };
  keyPath: string;
  value: string | undefined;
}

const WAITER_COLUMNS =
  'workflow_id, run_id, step_key, workspace_id, execution_id, step_id, run, match, context, woken_by';

/**
 * The first page of each lookup (waitersFor's, without `after`), in one statement: the dispatcher reads the
 * waiters of a whole claim of events at once. Page i is lookup i's.
 */
export async function waiterPages(db: Queryable, lookups: readonly WaiterLookup[]): Promise<Waiter[][]> {
  const pages = lookups.map((): Waiter[] => []);
  if (lookups.length === 0) return pages;
  const params: unknown[] = [];
  // Two parts, so that each has a plan of its own: an index lookup by key value, or every waiter of a path.
  const part = (keyed: boolean) => {
    const indexes = lookups.flatMap((lookup, n) => ((lookup.value !== undefined) === keyed ? [n] : []));
    const arrays: [unknown[], string][] = [
      [indexes, 'int'],
      [indexes.map((n) => lookups[n]!.event.workspace_id), 'text'],
      [indexes.map((n) => lookups[n]!.event.name), 'text'],
      [indexes.map((n) => lookups[n]!.keyPath), 'text'],
      [indexes.map((n) => new Date(lookups[n]!.event.received_at).toISOString()), 'timestamptz'],
      [indexes.map((n) => lookups[n]!.event.id), 'text'],
      ...(keyed ? [[indexes.map((n) => lookups[n]!.value), 'text'] as [unknown[], string]] : []),
    ];
    const columns = arrays.map(([values, type]) => {
      params.push(values);
      return `$${params.length}::${type}[]`;
    });
    return `select q.n, w.* from unnest(${columns.join(', ')})
                as q(n, workspace_id, name, key_path, received_at, event_id${keyed ? ', key_value' : ''})
       cross join lateral (
         select ${WAITER_COLUMNS} from event_waiters w
          where w.workspace_id = q.workspace_id and w.event_name = q.name and w.key_path = q.key_path
            and w.ended_at is null and w.began_at <= q.received_at
            and (w.woken_by is null or w.woken_by = q.event_id)${keyed ? ' and w.key_value = q.key_value' : ''}
          order by w.workflow_id, w.run_id, w.step_key limit ${WAITERS_PAGE}) w`;
  };
  const rows = await db.query<Waiter & { n: number }>(
    `${part(true)} union all ${part(false)} order by n, workflow_id, run_id, step_key`,
    params,
  );
  for (const { n, ...waiter } of rows) pages[n]!.push(waiter);
  return pages;
}

/**
 * Claims a waiter for an event and records the wake (event_wakes), in one transaction: true when this
 * event holds the claim (now, or from a dispatch before), false when another event took it first or the
 * wait ended meanwhile.
 */
export async function claimWaiter(db: Database, waiter: Waiter, eventId: string): Promise<boolean> {
  if (waiter.woken_by === eventId) return true;
  return db.transaction(async (tx) => {
    const claimed = await tx.query(
      `update event_waiters set woken_by = $4, woken_at = now()
        where workflow_id = $1 and run_id = $2 and step_key = $3 and woken_by is null and ended_at is null
        returning 1`,
      [waiter.workflow_id, waiter.run_id, waiter.step_key, eventId],
    );
    if (claimed.length === 0) return false;
    await tx.query(
      `insert into event_wakes (workspace_id, event_id, execution_id, step, run) values ($1, $2, $3, $4, $5)
       on conflict do nothing`,
      [waiter.workspace_id, eventId, waiter.execution_id, waiter.step_id, waiter.run],
    );
    return true;
  });
}

/**
 * Ends a wait (its run stops waiting): the event that claimed it, if one did; a wait ended already
 * (`end_event_wait` ran again) answers as it did. Unknown waits (purged): no event.
 */
export async function endWaiter(db: Queryable, id: WaiterId): Promise<WakingEvent | undefined> {
  const [row] = await db.query<{
    woken_by: string | null;
    woken_at: Date | null;
    workspace_id: string;
    event_name: string;
  }>(
    `update event_waiters set ended_at = coalesce(ended_at, now())
      where workflow_id = $1 and run_id = $2 and step_key = $3
      returning woken_by, woken_at, workspace_id, event_name`,
    [id.workflow_id, id.run_id, id.step_key],
  );
  if (!row?.woken_by) return undefined;
  const [event] = await db.query<WakingEvent>(
    'select id, name, data, received_at from events where workspace_id = $1 and id = $2',
    [row.workspace_id, row.woken_by],
  );
  // Gone since it woke the step (purged with its workspace): what the waiter knew of it, without its data.
  return event ?? { id: row.woken_by, name: row.event_name, data: null, received_at: row.woken_at! };
}

/** Forgets a wait whose run is gone (canceled, terminated, past retention): nothing will end it. */
export async function dropWaiter(db: Queryable, id: WaiterId): Promise<void> {
  await db.query('delete from event_waiters where workflow_id = $1 and run_id = $2 and step_key = $3', [
    id.workflow_id,
    id.run_id,
    id.step_key,
  ]);
}

/** Deletes waits that ended an hour ago, and those a day past their time (their run never ended them). */
export function purgeEndedWaiters(db: Queryable): Promise<number> {
  return deleteInBatches(
    db,
    `delete from event_waiters where (workflow_id, run_id, step_key) in (
       (select workflow_id, run_id, step_key from event_waiters
         where ended_at < now() - interval '1 hour' limit ${PURGE_BATCH})
       union
       (select workflow_id, run_id, step_key from event_waiters
         where until < now() - interval '1 day' limit ${PURGE_BATCH}))
     returning 1`,
  );
}
