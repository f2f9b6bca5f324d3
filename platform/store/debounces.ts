/**
 * Flow control's debounce table (migration 015, docs/flow-control.md#debounce): per key, the one waiting
 * execution that triggers coalesce into, with the last trigger's input.
 *
 * Race safety: a trigger's look-up-then-insert-or-update and the run's end of its wait take the key's
 * advisory lock in one transaction, so two API processes never make two waiting executions of one key, and
 * a trigger either lands in the input the run starts with or (once the run took it) makes a new execution.
 */
import type { Database, Queryable } from './db';
import { claimIdempotencyKey, pointIdempotencyKey } from './idempotency';
import type { EndDebounceResult } from '../../core/flow-control';

export interface DebounceKey {
  workspace_id: string;
  workflow_id: string;
  /** Null when the definition has no key expression: the whole workflow is one key. */
  key: string | null;
}

export interface DebounceTrigger extends DebounceKey {
  /** The id a new execution takes. */
  candidate_id: string;
  input: unknown;
  body?: unknown;
  event?: { id: string; name: string };
  period_ms: number;
  max_wait_ms?: number;
  /** What a new execution's run is started with (kept until it is: the sweeper's repair). */
  start: unknown;
  /** The request's Idempotency-Key: a repeat answers the execution it named, and coalesces nothing. */
  idempotency_key?: string;
}

/**
 * What a trigger did: `created` a new waiting execution (the caller starts its run), `coalesced` into the
 * key's waiting one, or found its Idempotency-Key already used (`replay`).
 */
export type DebounceOutcome = { execution_id: string; outcome: 'created' | 'coalesced' | 'replay' };

function keyIdOf(key: DebounceKey): string {
  return JSON.stringify([key.workspace_id, key.workflow_id, key.key]);
}

async function lockKey(tx: Queryable, keyId: string): Promise<void> {
  await tx.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [`debounce:${keyId}`]);
}

/** JSON for a jsonb parameter (PGlite and node-postgres both take text). */
const json = (value: unknown): string | null => (value === undefined ? null : JSON.stringify(value));

export async function debounceTrigger(db: Database, trigger: DebounceTrigger): Promise<DebounceOutcome> {
  const keyId = keyIdOf(trigger);
  return db.transaction(async (tx) => {
    await lockKey(tx, keyId);
    const [waiting] = await tx.query<{ execution_id: string }>(
      `select execution_id from debounces where key_id = $1 and state = 'waiting'`,
      [keyId],
    );
    // A repeat of a signed hook's delivery derives the same id: it is the waiting execution already.
    if (waiting?.execution_id === trigger.candidate_id)
      return { execution_id: waiting.execution_id, outcome: 'replay' };
    const executionId = waiting?.execution_id ?? trigger.candidate_id;
    if (trigger.idempotency_key !== undefined) {
      // Claimed for this trigger's own new id, so that a key sent before (naming the waiting execution too)
      // shows as a repeat; a new key then names the execution the trigger joins.
      const idempotency = {
        workspaceId: trigger.workspace_id,
        workflowId: trigger.workflow_id,
        key: trigger.idempotency_key,
      };
      const claim = await claimIdempotencyKey(tx, { ...idempotency, candidateId: trigger.candidate_id });
      if (claim.replay) return { execution_id: claim.executionId, outcome: 'replay' };
      if (executionId !== trigger.candidate_id)
        await pointIdempotencyKey(tx, { ...idempotency, executionId });
    }
    if (waiting) {
      await tx.query(
        `update debounces set input = $2::jsonb, body = $3::jsonb, event = $4::jsonb, coalesced = coalesced + 1,
           last_at = now(),
           due_at = least(now() + period_ms * interval '1 millisecond',
                          coalesce(first_at + max_wait_ms * interval '1 millisecond', 'infinity'))
         where execution_id = $1`,
        [executionId, json(trigger.input), json(trigger.body), json(trigger.event)],
      );
      return { execution_id: executionId, outcome: 'coalesced' };
    }
    const inserted = await tx.query(
      `insert into debounces (execution_id, workspace_id, workflow_id, key, key_id, state, input, body, event,
         period_ms, max_wait_ms, start, due_at)
       values ($1, $2, $3, $4, $5, 'waiting', $6::jsonb, $7::jsonb, $8::jsonb, $9::integer, $10, $11::jsonb,
         now() + $9::integer * interval '1 millisecond')
       on conflict (execution_id) do nothing
       returning 1`,
      [
        executionId,
        trigger.workspace_id,
        trigger.workflow_id,
        trigger.key,
        keyId,
        json(trigger.input),
        json(trigger.body),
        json(trigger.event),
        trigger.period_ms,
        trigger.max_wait_ms ?? null,
        json(trigger.start),
      ],
    );
    // The id is taken by a run that left its wait (a signed hook's delivery repeated): nothing new.
    if (inserted.length === 0) return { execution_id: executionId, outcome: 'replay' };
    return { execution_id: executionId, outcome: 'created' };
  });
}

/** The execution's run was started: the sweeper leaves it alone, and the start input is not kept. */
export async function markDebounceStarted(db: Queryable, executionId: string): Promise<void> {
  await db.query('update debounces set run_started = true, start = null where execution_id = $1', [
    executionId,
  ]);
}

interface DebounceRow {
  key_id: string;
  state: 'waiting' | 'started';
  input: unknown;
  body: unknown;
  event: { id: string; name: string } | null;
  coalesced: number;
  /** Milliseconds until the key's quiet time (or max_wait) ends; zero or less: due. */
  wait_ms: number | string;
}

/**
 * The run's timer fired: when the key has been quiet for the period (or max_wait passed since the first
 * trigger), the row turns started and the last input is the run's; otherwise how long to wait still.
 * Idempotent: a started row answers the same again. Undefined when the execution has no row (it ended).
 */
export async function endDebounce(db: Database, executionId: string): Promise<EndDebounceResult | undefined> {
  const select = `select key_id, state, input, body, event, coalesced,
      extract(epoch from (due_at - now())) * 1000 as wait_ms
    from debounces where execution_id = $1`;
  const [first] = await db.query<{ key_id: string }>('select key_id from debounces where execution_id = $1', [
    executionId,
  ]);
  if (!first) return undefined;
  return db.transaction(async (tx) => {
    await lockKey(tx, first.key_id);
    const [row] = await tx.query<DebounceRow>(select, [executionId]);
    if (!row) return undefined;
    // numeric from extract(): a string from node-postgres, a number from PGlite.
    const waitMs = Math.ceil(Number(row.wait_ms));
    if (row.state === 'waiting' && waitMs > 0) return { state: 'waiting', wait_ms: waitMs };
    if (row.state === 'waiting')
      await tx.query(`update debounces set state = 'started' where execution_id = $1`, [executionId]);
    return {
      state: 'started',
      input: row.input,
      ...(row.body !== null && { body: row.body }),
      ...(row.event && { event: row.event }),
      coalesced: row.coalesced,
    };
  });
}

/** The run ended (or never will start): its row goes, and the key's next trigger makes a new execution. */
export async function closeDebounce(db: Queryable, executionId: string): Promise<void> {
  await db.query('delete from debounces where execution_id = $1', [executionId]);
}

/** Rows whose run was not started `olderThanMs` after their first trigger (the trigger's process died). */
export async function unstartedDebounces(
  db: Queryable,
  olderThanMs: number,
  limit = 100,
): Promise<{ execution_id: string; start: unknown }[]> {
  return db.query<{ execution_id: string; start: unknown }>(
    `select execution_id, start from debounces
     where not run_started and first_at < now() - $1 * interval '1 millisecond'
     order by first_at limit ${limit}`,
    [olderThanMs],
  );
}

/**
 * Waiting rows whose run should have taken them `lateMs` ago (due, plus that margin): their run may have
 * ended without a word (terminated in Temporal UI, timed out), which the sweeper checks.
 */
export async function overdueDebounces(db: Queryable, lateMs: number, limit = 100): Promise<string[]> {
  const rows = await db.query<{ execution_id: string }>(
    `select execution_id from debounces
     where state = 'waiting' and due_at < now() - $1 * interval '1 millisecond' and run_started
     order by due_at limit ${limit}`,
    [lateMs],
  );
  return rows.map((row) => row.execution_id);
}

/** A workflow's executions waiting for their debounce, in all and by key, busiest first (its queue). */
export async function debounceQueueCounts(
  db: Queryable,
  workspaceId: string,
  workflowId: string,
  keys: number,
): Promise<{ queued: number; keys: { key: string | null; queued: number }[] }> {
  const where = `workspace_id = $1 and workflow_id = $2 and state = 'waiting'`;
  const [total] = await db.query<{ queued: number }>(
    `select count(*)::int as queued from debounces where ${where}`,
    [workspaceId, workflowId],
  );
  if (!total?.queued) return { queued: 0, keys: [] };
  const rows = await db.query<{ key: string | null; queued: number }>(
    `select key, count(*)::int as queued from debounces where ${where}
     group by key order by count(*) desc, key nulls first limit ${keys}`,
    [workspaceId, workflowId],
  );
  return { queued: total.queued, keys: rows };
}
