/**
 * No database statement runs unbounded. On a PostgreSQL server every pool connection
 * has statement_timeout = DATABASE_STATEMENT_TIMEOUT_MS (15 s by default), so the server cancels a
 * statement that runs longer (and frees its locks and connection) instead of letting it hold them.
 */
import { expect } from 'chai';
import { loadConfig } from '../../platform/config';
import { openDatabase, type Database } from '../../platform/store/db';
import { createPostgresDatabase, tempDir } from '../support/stack';

describe('security (medium): database statement timeout @integration', () => {
  let database: Awaited<ReturnType<typeof createPostgresDatabase>>;
  let db: Database;
  before(async () => {
    database = await createPostgresDatabase();
    const config = loadConfig({ DATABASE_URL: database.url, DATABASE_STATEMENT_TIMEOUT_MS: '300' });
    db = await openDatabase({
      url: config.databaseUrl,
      dataDir: tempDir(),
      statementTimeoutMs: config.databaseStatementTimeoutMs,
    });
  });
  after(async () => {
    await db?.close();
    await database?.drop();
  });

  it('cancels a statement running past DATABASE_STATEMENT_TIMEOUT_MS on the server', async () => {
    const started = Date.now();
    const error = await db.query('select pg_sleep(5)').then(
      () => undefined,
      (e: unknown) => e as { code?: string; message?: string },
    );
    expect(error, 'a 5 s statement with a 300 ms timeout').to.not.equal(undefined);
    expect(error?.code, error?.message).to.equal('57014'); // query_canceled: statement timeout
    expect(Date.now() - started, 'cancelled at the timeout, not after the statement').to.be.below(4_000);
    expect(await db.query<{ ok: number }>('select 1 as ok'), 'the connection still works').to.deep.equal([
      { ok: 1 },
    ]);
    expect(loadConfig({}).databaseStatementTimeoutMs, 'the default').to.equal(15_000);
  });
});
