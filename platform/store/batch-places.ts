/**
 * Workspace-cap places held only for one batch of steps, on the embedded database (docs/flow-control.md#workspace-cap).
 *
 * A run whose first batch of steps also ends it (the common short run: a rules step and a call) takes its
 * place under the workspace cap and gives it back inside one `run_steps` local activity. On PGlite this
 * process is the database's only client, so such a place need not be a row: it is counted here, in memory,
 * and the two statements per run it would cost (the ask and the release, about a millisecond of the main
 * thread per run, where PGlite runs) are saved. Nothing is lost by a crash: the batch that held the place
 * had not completed, so Temporal runs it again and it asks again. A batch that does not end its run writes
 * its place as a row before it completes (`keep`), so that a place outliving the batch is durable, as before.
 *
 * The rows and these places count together: every statement that decides under the cap (an ask, a release's
 * grants, the sweeper's grants) is given the cap less the places held here, and a place is taken here only
 * while the workspace's row counts are known (read with no change to its rows under way since) and it has no
 * run queued, so a new run never passes a queued one and the cap is never passed. On a PostgreSQL server,
 * where several processes share the rows, nothing is held here and every place is a row.
 */
import type { LimitValue } from '../../core/workspace-limits';
import type { Database } from './db';

interface WorkspaceLedger {
  /** Executions holding a place for their batch, not written. */
  held: Set<string>;
  /** The workspace's rows, as read when no change to them was under way; undefined: not known. */
  rows: { open: number; queued: number } | undefined;
  /** Statements changing the workspace's rows now in flight. */
  changing: number;
  /** Bumped as each change begins and ends: a read that saw another generation may be stale. */
  generation: number;
}

export interface BatchPlaces {
  /**
   * Takes a place for `executionId`'s batch when the workspace has one free and nobody queued; false: ask the
   * database. `readRows` reads the workspace's open and queued rows.
   */
  take(
    workspaceId: string,
    executionId: string,
    limit: number,
    readRows: () => Promise<{ open: number; queued: number }>,
  ): Promise<boolean>;
  /** Whether the execution holds a place here. */
  holds(executionId: string): boolean;
  /**
   * Gives a held place back: `true` when that settles it, `false` when runs may be queued in the workspace
   * (or a change is under way), so a release statement must grant them the freed place.
   */
  giveBack(workspaceId: string, executionId: string): boolean;
  /** Forgets a held place without deciding anything (its row now holds it, or its batch failed). */
  forget(workspaceId: string, executionId: string): void;
  /** The cap a statement decides under: `limit` less the places held here in the workspace. */
  capForRows(workspaceId: string, limit: LimitValue): LimitValue;
  /** The places held here in the workspace (the usage's open count adds them to the rows). */
  heldIn(workspaceId: string): number;
  /** Runs `change` (a statement that may change the workspace's rows) with the counts marked unknown. */
  changing<T>(workspaceId: string, change: () => Promise<T>): Promise<T>;
}

/** The embedded database's places held for a batch: one ledger per database, none on a server. */
const byDatabase = new WeakMap<Database, BatchPlaces>();

export function batchPlacesOf(db: Database): BatchPlaces | undefined {
  if (db.kind !== 'pglite') return undefined;
  let places = byDatabase.get(db);
  if (!places) {
    places = createBatchPlaces();
    byDatabase.set(db, places);
  }
  return places;
}

function createBatchPlaces(): BatchPlaces {
  const ledgers = new Map<string, WorkspaceLedger>();
  /** Which workspace each held execution is in. */
  const workspaceOf = new Map<string, string>();
  const ledger = (workspaceId: string): WorkspaceLedger => {
    let found = ledgers.get(workspaceId);
    if (!found) {
      found = { held: new Set(), rows: undefined, changing: 0, generation: 0 };
      ledgers.set(workspaceId, found);
    }
    return found;
  };
  const heldIn = (workspaceId: string) => ledgers.get(workspaceId)?.held.size ?? 0;
  const settled = (l: WorkspaceLedger) => l.changing === 0 && l.rows !== undefined && l.rows.queued === 0;
  const forget = (workspaceId: string, executionId: string) => {
    const l = ledgers.get(workspaceId);
    // The ledger stays (its known counts spare the next run a read): one per workspace, which operators create.
    if (l?.held.delete(executionId)) workspaceOf.delete(executionId);
  };
  return {
    async take(workspaceId, executionId, limit, readRows) {
      const l = ledger(workspaceId);
      if (l.held.has(executionId)) return true;
      if (l.rows === undefined) {
        if (l.changing > 0) return false;
        const generation = l.generation;
        const rows = await readRows();
        // A change began or ended while the rows were read: the read may miss it.
        if (l.generation !== generation || l.changing > 0) return false;
        l.rows = rows;
      }
      if (!settled(l) || l.rows.open + l.held.size >= limit) return false;
      l.held.add(executionId);
      workspaceOf.set(executionId, workspaceId);
      return true;
    },
    holds: (executionId) => workspaceOf.has(executionId),
    giveBack(workspaceId, executionId) {
      const l = ledgers.get(workspaceId);
      const quiet = l !== undefined && settled(l);
      forget(workspaceId, executionId);
      return quiet;
    },
    forget,
    capForRows: (workspaceId, limit) => (limit === null ? null : Math.max(0, limit - heldIn(workspaceId))),
    heldIn,
    async changing(workspaceId, change) {
      const l = ledger(workspaceId);
      l.changing += 1;
      l.generation += 1;
      l.rows = undefined;
      try {
        return await change();
      } finally {
        l.changing -= 1;
        l.generation += 1;
      }
    },
  };
}
