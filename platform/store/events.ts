/**
 * Events a workspace sent (docs/events.md) and what was done with them (migration 010): stored before the
 * request answers, claimed by a dispatcher with a lease (the outbox), marked dispatched, read and listed,
 * and purged after EVENT_RETENTION_DAYS.
 */
import { EVENT_ID_WINDOW_HOURS } from '../../core/events';
import type { Queryable } from './db';
import { deleteInBatches, PURGE_BATCH } from './delete-in-batches';
import { pageByKey, type PageRequest } from './keyset-pages';

export interface NewEvent {
  id: string;
  name: string;
  data: Record<string, unknown>;
  source?: string | undefined;
  subject?: string | undefined;
}

/** A trigger that matched the event but started nothing, and why. */
export interface EventTriggerError {
  workflow: string;
  code: string;
  message: string;
}

export interface EventRecord {
  id: string;
  name: string;
  data: Record<string, unknown>;
  source: string | null;
  subject: string | null;
  received_at: Date;
  /** The list's order (newest first) and its cursors' position: a bigint, as text. */
  seq: string;
  /** The executions the event's triggers started, in the order they did. */
  started: string[];
  /** The waiting executions it woke, in the order it did. */
  woke: string[];
  errors: EventTriggerError[];
}

/** An event a dispatcher holds the lease of. `attempts` (this claim's number) fences its later updates. */
export interface ClaimedEvent {
  workspace_id: string;
  id: string;
  name: string;
  data: Record<string, unknown>;
  received_at: Date;
  attempts: number;
}

/** At most this many started and woken executions are listed with an event. */
export const EXECUTIONS_LISTED = 1000;

/** A request's events, all of one workspace. */
export interface EventsOfRequest {
  workspaceId: string;
  events: readonly NewEvent[];
}

/**
 * Stores the events of one or more requests in one statement: all of them or none. An id the workspace
 * sent less than EVENT_ID_WINDOW_HOURS ago is the same event again and changes nothing; an older one is a
 * new event under an old id: the row takes it (and is dispatched again), keeping the executions its
 * triggers started (each trigger starts at most one per event id, ever) but not their refusals. An id
 * twice in one statement is the first of them sent again: the first is kept. Rows are inserted in order
 * (their `seq`).
 */
export async function storeEvents(db: Queryable, requests: readonly EventsOfRequest[]): Promise<void> {
  // One row may not be upserted twice by one statement: an id's later events are the same event again,
  // as they were when each event was a statement of its own.
  const seen = new Set<string>();
  const rows = requests.flatMap(({ workspaceId, events }) =>
    events.flatMap((event) => {
      const key = eventKey(workspaceId, event.id);
      if (seen.has(key)) return [];
      seen.add(key);
      return [{ workspaceId, event }];
    }),
  );
  if (rows.length === 0) return;
  await db.query(
    `with stored as (
       insert into events (workspace_id, id, name, data, source, subject)
       select e.workspace_id, e.id, e.name, e.data::jsonb, e.source, e.subject
         from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
                with ordinality as e(workspace_id, id, name, data, source, subject, n)
        order by e.n
       on conflict (workspace_id, id) do update
         set name = excluded.name, data = excluded.data, source = excluded.source, subject = excluded.subject,
             seq = nextval(pg_get_serial_sequence('events', 'seq')), received_at = now(),
             dispatched_at = null, lease_until = null, attempts = 0
       where events.received_at < now() - make_interval(hours => ${EVENT_ID_WINDOW_HOURS})
       returning workspace_id, id, xmax::text <> '0' as reused)
     delete from event_triggers t using stored s
      where s.reused and t.workspace_id = s.workspace_id and t.event_id = s.id and t.error_code is not null`,
    [
      rows.map((row) => row.workspaceId),
      rows.map((row) => row.event.id),
      rows.map((row) => row.event.name),
      rows.map((row) => JSON.stringify(row.event.data)),
      rows.map((row) => row.event.source ?? null),
      rows.map((row) => row.event.subject ?? null),
    ],
  );
}

/**
 * Takes the lease of up to `limit` undispatched events whose lease is free (never taken, or run out: its
 * holder died or gave up), oldest first. Rows another process is claiming at this moment are skipped.
 */
export function claimEvents(db: Queryable, limit: number, leaseMs: number): Promise<ClaimedEvent[]> {
  return db.query<ClaimedEvent>(
    `update events e set lease_until = now() + make_interval(secs => $2 / 1000.0), attempts = e.attempts + 1
       from (select workspace_id, id from events
              where dispatched_at is null and (lease_until is null or lease_until <= now())
              order by received_at limit $1
              for update skip locked) c
      where e.workspace_id = c.workspace_id and e.id = c.id
      returning e.workspace_id, e.id, e.name, e.data, e.received_at, e.attempts`,
    [limit, leaseMs],
  );
}

/**
 * Marks claimed events dispatched, in one statement; an event whose lease went to another claim since (or
 * whose row went to a new event) is left alone.
 */
export async function markDispatched(db: Queryable, events: readonly ClaimedEvent[]): Promise<void> {
  if (events.length === 0) return;
  await db.query(
    `update events e set dispatched_at = now(), lease_until = null
       from unnest($1::text[], $2::text[], $3::int[]) as c(workspace_id, id, attempts)
      where e.workspace_id = c.workspace_id and e.id = c.id and e.attempts = c.attempts
        and e.dispatched_at is null`,
    [events.map((e) => e.workspace_id), events.map((e) => e.id), events.map((e) => e.attempts)],
  );
}

/** Leaves a claimed event undispatched for `delayMs` (its dispatch failed; it is tried again then). */
export async function deferEvent(db: Queryable, event: ClaimedEvent, delayMs: number): Promise<void> {
  await db.query(
    `update events set lease_until = now() + make_interval(secs => $4 / 1000.0)
      where workspace_id = $1 and id = $2 and attempts = $3 and dispatched_at is null`,
    [event.workspace_id, event.id, event.attempts, delayMs],
  );
}

/**
 * The workflows the triggers of each event already acted on (started an execution for, or refused), in
 * one statement: by eventKey.
 */
export async function triggeredWorkflows(
  db: Queryable,
  events: readonly Pick<ClaimedEvent, 'workspace_id' | 'id'>[],
): Promise<Map<string, Set<string>>> {
  const done = new Map<string, Set<string>>();
  if (events.length === 0) return done;
  const rows = await db.query<{ workspace_id: string; event_id: string; workflow_id: string }>(
    `select t.workspace_id, t.event_id, t.workflow_id
       from unnest($1::text[], $2::text[]) as e(workspace_id, id)
       join event_triggers t on t.workspace_id = e.workspace_id and t.event_id = e.id`,
    [events.map((e) => e.workspace_id), events.map((e) => e.id)],
  );
  for (const row of rows) {
    const key = eventKey(row.workspace_id, row.event_id);
    const workflows = done.get(key) ?? new Set<string>();
    done.set(key, workflows.add(row.workflow_id));
  }
  return done;
}

/** An event's key in maps over events of several workspaces. */
export function eventKey(workspaceId: string, eventId: string): string {
  return `${workspaceId}\u0000${eventId}`;
}

/** What one workflow's trigger did with an event: the execution it started, or why it started none. */
export type TriggerOutcome = { executionId: string } | { error: { code: string; message: string } };

/** Records an outcome once: a later record for the same workflow and event changes nothing. */
export async function recordTriggerOutcome(
  db: Queryable,
  key: { workspaceId: string; eventId: string; workflowId: string },
  outcome: TriggerOutcome,
): Promise<void> {
  const started = 'executionId' in outcome;
  await db.query(
    `insert into event_triggers (workspace_id, event_id, workflow_id, execution_id, error_code, error_message)
     values ($1, $2, $3, $4, $5, $6) on conflict do nothing`,
    [
      key.workspaceId,
      key.eventId,
      key.workflowId,
      started ? outcome.executionId : null,
      started ? null : outcome.error.code,
      started ? null : outcome.error.message,
    ],
  );
}

/** The columns of a read: the row, and what was done with it (started, woke, errors) as JSON arrays. */
const EVENT_COLUMNS = `e.id, e.name, e.data, e.source, e.subject, e.received_at, e.seq::text as seq,
  coalesce((select json_agg(t.execution_id order by t.created_at, t.workflow_id)
              from (select execution_id, created_at, workflow_id from event_triggers
                     where workspace_id = e.workspace_id and event_id = e.id and execution_id is not null
                     order by created_at, workflow_id limit ${EXECUTIONS_LISTED}) t), '[]') as started,
  coalesce((select json_agg(w.execution_id order by w.first, w.execution_id)
              from (select execution_id, min(woke_at) as first from event_wakes
                     where workspace_id = e.workspace_id and event_id = e.id
                     group by execution_id order by first, execution_id limit ${EXECUTIONS_LISTED}) w), '[]') as woke,
  coalesce((select json_agg(json_build_object('workflow', t.workflow_id, 'code', t.error_code,
                                              'message', t.error_message) order by t.created_at, t.workflow_id)
              from event_triggers t
             where t.workspace_id = e.workspace_id and t.event_id = e.id and t.error_code is not null), '[]') as errors`;

export async function getEvent(db: Queryable, workspaceId: string, id: string) {
  const [row] = await db.query<EventRecord>(
    `select ${EVENT_COLUMNS} from events e where e.workspace_id = $1 and e.id = $2`,
    [workspaceId, id],
  );
  return row;
}

/** A page of the workspace's events, newest first; `name` keeps those of one name. */
export function listEvents(
  db: Queryable,
  workspaceId: string,
  filter: { name?: string | undefined },
  page: PageRequest,
): Promise<EventRecord[]> {
  const byName = filter.name !== undefined;
  return pageByKey<EventRecord>(
    db,
    `select ${EVENT_COLUMNS} from events e where e.workspace_id = $1${byName ? ' and e.name = $2' : ''}`,
    byName ? [workspaceId, filter.name] : [workspaceId],
    { key: 'e.seq', type: 'bigint', descending: true },
    page,
  );
}

/** Deletes events older than the retention, with what was recorded of them (the housekeeping job). */
export function purgeExpiredEvents(db: Queryable, retentionDays: number): Promise<number> {
  return deleteInBatches(
    db,
    `delete from events where (workspace_id, id) in (
       select workspace_id, id from events where received_at < now() - make_interval(days => $1)
        limit ${PURGE_BATCH})
     returning 1`,
    [retentionDays],
  );
}
