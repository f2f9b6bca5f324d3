/** A migrated database of its own for a test: PGlite in a temporary folder, or a new PostgreSQL database. */
import { openDatabase, type Database } from '../../platform/store/db';
import { migrate } from '../../platform/store/migrate';
import { createPostgresDatabase, tempDir, type DbKind } from './stack';

export async function openTestDatabase(kind: DbKind): Promise<{ db: Database; close: () => Promise<void> }> {
  const server = kind === 'postgres' ? await createPostgresDatabase() : undefined;
  const db = await openDatabase({ url: server?.url, dataDir: tempDir() });
  await migrate(db);
  return {
    db,
    close: async () => {
      await db.close();
      await server?.drop();
    },
  };
}

/** The statements run through `db`, counted (their SQL), for tests of how many a piece of work takes. */
export function countingStatements(db: Database): { db: Database; statements: string[] } {
  const statements: string[] = [];
  return {
    statements,
    db: {
      ...db,
      query: (sql, params) => {
        statements.push(sql);
        return db.query(sql, params);
      },
    },
  };
}
