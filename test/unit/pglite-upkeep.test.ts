/**
 * The embedded database's upkeep (platform/store/pglite-vacuum.ts): PGlite has no autovacuum, so the rows
 * each run inserts and deletes (its workspace-cap row) stay as dead rows and its tables grow with every run
 * unless the service vacuums them. On embedded PGlite, with every migration, through the store's own calls.
 */
import { expect } from 'chai';
import { openDatabase, type Database } from '../../platform/store/db';
import { migrate } from '../../platform/store/migrate';
import { tablesDueForUpkeep, upkeepPass } from '../../platform/store/pglite-vacuum';
import { acquireWorkspacePlace, releaseWorkspacePlace } from '../../platform/store/workspace-admissions';
import { createWorkspace } from '../../platform/store/workspaces';
import { tempDir } from '../support/stack';

describe("the embedded database's upkeep (PGlite has no autovacuum)", function () {
  this.timeout(120_000);
  let db: Database;
  let runs = 0;

  before(async () => {
    db = await openDatabase({ url: undefined, dataDir: tempDir('sy-pglite-upkeep-') });
    await migrate(db);
    await createWorkspace(db, 'ws1', 'ws1');
    await upkeepPass(db);
  });
  after(async () => {
    await db?.close();
  });

  /** `count` runs that each take their workspace-cap place and give it back, as every run does. */
  async function runAndEnd(count: number): Promise<void> {
    for (let i = 0; i < count; i += 1) {
      const execution_id = `ex-${++runs}`;
      await acquireWorkspacePlace(db, { execution_id, workspace_id: 'ws1', priority: 0, limit: 1000 });
      await releaseWorkspacePlace(db, { execution_id, workspace_id: 'ws1', limit: 1000 });
    }
    // The statistics this pass reads are flushed when the backend goes idle, at most once a second.
    await db.query('select pg_stat_force_next_flush()');
    await db.query('select 1');
  }

  const tableStats = async () => {
    const [row] = await db.query<{ dead: number; bytes: number }>(
      `select n_dead_tup::int as dead, pg_total_relation_size(relid)::int as bytes
       from pg_stat_user_tables where relname = 'workspace_admissions'`,
    );
    return row!;
  };

  it('finds the dead rows that runs leave behind, and a pass vacuums them away', async () => {
    await runAndEnd(300);
    expect((await tableStats()).dead, 'dead rows after 300 runs').to.be.at.least(300);
    const due = await tablesDueForUpkeep(db);
    expect(due.map((t) => `${t.table} ${t.action}`)).to.include('workspace_admissions vacuum');

    const done = await upkeepPass(db);
    expect(done.map((t) => t.table)).to.include('workspace_admissions');
    await db.query('select pg_stat_force_next_flush()');
    await db.query('select 1');
    expect((await tableStats()).dead, 'dead rows after the pass').to.equal(0);
  });

  it('keeps the table and its indexes from growing with the runs when it passes between them', async () => {
    const sizes: number[] = [];
    for (let cycle = 0; cycle < 5; cycle += 1) {
      await runAndEnd(600);
      await upkeepPass(db);
      sizes.push((await tableStats()).bytes);
    }
    // Vacuumed space is used again: 3,000 runs take no more room than the first 1,200 did.
    expect(sizes[4], `sizes after each cycle of 600 runs: ${sizes.join(', ')}`).to.be.at.most(sizes[1]!);
  });

  it('has nothing to do on a quiet database', async () => {
    await upkeepPass(db);
    expect(await tablesDueForUpkeep(db)).to.deep.equal([]);
  });
});
