/**
 * Autovacuum's stand-in for the embedded database. PGlite runs PostgreSQL in single-user mode, which has no
 * autovacuum: without this, every row the service deletes or updates stays in its table as a dead row for
 * good (each run inserts and deletes its workspace-cap row, for one), so the tables and their indexes on
 * disk grow with every run, and nothing refreshes the planner's statistics either. A PostgreSQL server runs
 * its own autovacuum; this runs only where the service opened PGlite.
 *
 * Every PGLITE_UPKEEP_SECONDS (60 by default, autovacuum's own naptime), the tables past autovacuum's
 * default thresholds are vacuumed or analyzed, one statement each, most dead rows first. PGlite runs one
 * statement at a time, so each table's vacuum holds up the service's other statements while it runs: passing
 * often keeps each one short (docs/operations.md#the-embedded-databases-upkeep).
 */
import type { Logger } from '../logger';
import type { Queryable } from './db';

/** A pass taking longer than this is logged as a warning: the service's statements waited that long. */
const SLOW_PASS_MS = 1_000;

export interface TableUpkeep {
  table: string;
  /** `vacuum`: dead rows to reclaim (or rows inserted since the last vacuum), analyzed too; `analyze` alone. */
  action: 'vacuum' | 'analyze';
  dead_rows: number;
}

/**
 * The tables of the service's schema past autovacuum's default thresholds: dead rows over 50 + 20% of the
 * live ones, rows inserted since the last vacuum over 1,000 + 20% (PostgreSQL 13's insert-driven vacuum),
 * or rows changed since the last analyze over 50 + 10% (analyze only). Most dead rows first.
 */
export async function tablesDueForUpkeep(db: Queryable): Promise<TableUpkeep[]> {
  return db.query<TableUpkeep>(
    `select relname as table,
            case when n_dead_tup > 50 + 0.2 * n_live_tup or n_ins_since_vacuum > 1000 + 0.2 * n_live_tup
                 then 'vacuum' else 'analyze' end as action,
            n_dead_tup::int as dead_rows
     from pg_stat_user_tables
     where schemaname = current_schema()
       and (n_dead_tup > 50 + 0.2 * n_live_tup
            or n_ins_since_vacuum > 1000 + 0.2 * n_live_tup
            or n_mod_since_analyze > 50 + 0.1 * n_live_tup)
     order by n_dead_tup desc, relname`,
  );
}

/** A table name as an SQL identifier. */
function identifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** One pass: vacuums (and analyzes) or analyzes each table due, one statement each. */
export async function upkeepPass(
  db: Queryable,
  stopped: () => boolean = () => false,
): Promise<(TableUpkeep & { ms: number })[]> {
  const done: (TableUpkeep & { ms: number })[] = [];
  for (const table of await tablesDueForUpkeep(db)) {
    if (stopped()) break;
    const started = performance.now();
    await db.query(
      `${table.action === 'vacuum' ? 'vacuum (analyze)' : 'analyze'} ${identifier(table.table)}`,
    );
    done.push({ ...table, ms: Math.round(performance.now() - started) });
  }
  return done;
}

/** Runs a pass every `intervalMs` (never two at once); the returned function stops and waits for the pass. */
export function startPgliteUpkeep(db: Queryable, logger: Logger, intervalMs: number): () => Promise<void> {
  let stopped = false;
  let running: Promise<void> | undefined;
  const pass = async () => {
    const started = performance.now();
    try {
      const done = await upkeepPass(db, () => stopped);
      if (done.length === 0) return;
      const ms = Math.round(performance.now() - started);
      const fields = { tables: done, ms };
      if (ms > SLOW_PASS_MS)
        logger.warn(fields, 'Embedded database upkeep took long: statements waited meanwhile');
      else logger.debug(fields, 'Embedded database upkeep');
    } catch (error) {
      // The next pass tries again; the database's own errors are the service's to report.
      logger.warn({ err: error }, 'Embedded database upkeep failed');
    }
  };
  const timer = setInterval(() => {
    if (!running) running = pass().finally(() => (running = undefined));
  }, intervalMs);
  timer.unref();
  return async () => {
    stopped = true;
    clearInterval(timer);
    await running;
  };
}
