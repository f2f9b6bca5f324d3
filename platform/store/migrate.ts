/**
 * Versioned schema migrations (postgrator, SQL files in /migrations), applied at start by every
 * process that opens the database. On a PostgreSQL server an advisory lock serializes processes that
 * start together, so two API replicas never race on the same migration.
 */
import Postgrator from 'postgrator';
import { migrationsDirectory } from '../paths';
import type { Database, Queryable } from './db';

/** Arbitrary constant: the advisory lock id that guards migrations. */
const MIGRATION_LOCK_ID = 827_315_004;

export interface MigrationResult {
  from: number;
  to: number;
}

export async function migrate(db: Database): Promise<MigrationResult> {
  if (db.kind === 'pglite') return runMigrations(db, db);
  return db.transaction(async (tx) => {
    // DATABASE_STATEMENT_TIMEOUT_MS bounds requests' statements, not schema changes (nor the wait for
    // another process's migration): lifted for this transaction only.
    await tx.query('set local statement_timeout = 0');
    // Transaction-scoped lock: released at commit even if this process dies mid-way.
    await tx.query('select pg_advisory_xact_lock($1)', [MIGRATION_LOCK_ID]);
    return runMigrations(db, tx);
  });
}

async function runMigrations(db: Database, q: Queryable): Promise<MigrationResult> {
  const postgrator = new Postgrator({
    migrationPattern: `${migrationsDirectory}/*.sql`,
    driver: 'pg',
    schemaTable: 'schema_migrations',
    execQuery: async (sql: string) => ({ rows: await q.query(sql) }),
    execSqlScript:
      db.kind === 'pglite'
        ? (sql: string) => db.execScript(sql)
        : async (sql: string) => void (await q.query(sql)),
  });
  const from = await postgrator.getDatabaseVersion();
  const applied = await postgrator.migrate();
  const to = applied.length > 0 ? Math.max(...applied.map((m) => m.version)) : from;
  return { from, to };
}
