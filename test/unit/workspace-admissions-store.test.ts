/**
 * Flow control's workspace cap (platform/store/workspace-admissions.ts) on embedded PGlite and on the
 * PostgreSQL server (TEST_DATABASE_URL) with every migration: runs open at once under the cap and queue past
 * it; freed places go by priority, then arrival; a run asking twice gets the state it has; a release grants in
 * the same transaction; a raised cap is granted; and concurrent acquires and releases never open more than
 * the cap (on PostgreSQL, over a pool of connections: the workspace's advisory lock serializes them); on
 * PGlite a place asked for a batch of steps is held in memory, counted with the rows, and written when kept.
 */
import { expect } from 'chai';
import { openDatabase, type Database } from '../../platform/store/db';
import { countingStatements } from '../support/database';
import { migrate } from '../../platform/store/migrate';
import { createWorkspace } from '../../platform/store/workspaces';
import {
  acquireWorkspacePlace,
  dropBatchPlace,
  grantWorkspace,
  keepBatchPlace,
  releaseWorkspacePlace,
  workspaceAdmissionCounts,
} from '../../platform/store/workspace-admissions';
import { createPostgresDatabase, DB_KINDS, tempDir } from '../support/stack';

for (const kind of DB_KINDS) {
  describe(`flow control: the workspace cap's table (${kind})`, function () {
    this.timeout(120_000);
    let db: Database;
    let drop: (() => Promise<void>) | undefined;
    let workspaces = 0;

    before(async () => {
      if (kind === 'postgres') {
        const database = await createPostgresDatabase();
        drop = () => database.drop();
        db = await openDatabase({ url: database.url, dataDir: tempDir('sy-ws-admissions-') });
      } else {
        db = await openDatabase({ url: undefined, dataDir: tempDir('sy-ws-admissions-') });
      }
      await migrate(db);
    });
    after(async () => {
      await db?.close();
      await drop?.();
    });

    /** A workspace of its own per test: tests share the table. */
    async function newWorkspace(): Promise<string> {
      const id = `ws${++workspaces}`;
      await createWorkspace(db, id, id);
      return id;
    }

    const acquire = (workspace_id: string, execution_id: string, limit: number | null, priority = 0) =>
      acquireWorkspacePlace(db, { workspace_id, execution_id, limit, priority });
    const release = (workspace_id: string, execution_id: string, limit: number | null) =>
      releaseWorkspacePlace(db, { workspace_id, execution_id, limit });

    it('opens runs at once under the cap, queues the rest, and a release grants the next in line', async () => {
      const ws = await newWorkspace();
      for (const n of [1, 2, 3])
        expect(await acquire(ws, `${ws}-r${n}`, 3), `r${n}`).to.deep.equal({ state: 'open', granted: [] });
      expect(await acquire(ws, `${ws}-r4`, 3)).to.deep.equal({ state: 'queued', granted: [] });
      expect(await workspaceAdmissionCounts(db, ws)).to.deep.equal({ open: 3, queued: 1 });
      expect(await release(ws, `${ws}-r2`, 3), 'the freed place goes to r4').to.deep.equal([`${ws}-r4`]);
      expect(await workspaceAdmissionCounts(db, ws)).to.deep.equal({ open: 3, queued: 0 });
      expect(await release(ws, `${ws}-r4`, 3), 'nothing queued').to.deep.equal([]);
      expect(await release(ws, `${ws}-r4`, 3), 'a second release changes nothing').to.deep.equal([]);
      expect(await workspaceAdmissionCounts(db, ws)).to.deep.equal({ open: 2, queued: 0 });
    });

    it('grants freed places by priority, highest first, then by arrival; a new run never passes queued ones', async () => {
      const ws = await newWorkspace();
      await acquire(ws, `${ws}-holder`, 1);
      const priorities = [0, 10, 5, 10, -3, 0];
      for (const [n, priority] of priorities.entries())
        expect((await acquire(ws, `${ws}-a${n}`, 1, priority)).state).to.equal('queued');
      const order: string[] = [];
      let holder = `${ws}-holder`;
      for (let n = 0; n < priorities.length; n++) {
        const granted = await release(ws, holder, 1);
        expect(granted, `one place freed by ${holder}`).to.have.length(1);
        holder = granted[0]!;
        order.push(holder.slice(`${ws}-`.length));
      }
      expect(order).to.deep.equal(['a1', 'a3', 'a2', 'a0', 'a5', 'a4']);
    });

    it('answers a run that asks again with the state it has, adding no row', async () => {
      const ws = await newWorkspace();
      expect((await acquire(ws, `${ws}-open`, 1)).state).to.equal('open');
      expect((await acquire(ws, `${ws}-open`, 1)).state, 'asked again').to.equal('open');
      expect((await acquire(ws, `${ws}-queued`, 1)).state).to.equal('queued');
      expect((await acquire(ws, `${ws}-queued`, 1)).state, 'asked again').to.equal('queued');
      expect(await workspaceAdmissionCounts(db, ws)).to.deep.equal({ open: 1, queued: 1 });
    });

    it('grants a raised cap, and with a lowered one admits no more until fewer are open', async () => {
      const ws = await newWorkspace();
      for (let n = 0; n < 5; n++) await acquire(ws, `${ws}-r${n}`, 2);
      expect(await workspaceAdmissionCounts(db, ws)).to.deep.equal({ open: 2, queued: 3 });
      expect((await grantWorkspace(db, ws, 4)).sort(), 'the cap raised to 4').to.deep.equal([
        `${ws}-r2`,
        `${ws}-r3`,
      ]);
      expect(await release(ws, `${ws}-r0`, 2), 'the cap lowered to 2, 3 open').to.deep.equal([]);
      expect(await release(ws, `${ws}-r1`, 2), '2 open').to.deep.equal([]);
      expect(await release(ws, `${ws}-r2`, 2), '1 open').to.deep.equal([`${ws}-r4`]);
      expect(await grantWorkspace(db, ws, null), 'unlimited: nothing queued is left').to.deep.equal([]);
    });

    it("a release with another row's seq (the sweeper racing a retry) leaves the row", async () => {
      const ws = await newWorkspace();
      await acquire(ws, `${ws}-r`, 1);
      await releaseWorkspacePlace(db, { workspace_id: ws, execution_id: `${ws}-r`, limit: 1, seq: '0' });
      expect(await workspaceAdmissionCounts(db, ws)).to.deep.equal({ open: 1, queued: 0 });
    });

    it('never opens more than the cap under concurrent acquires and releases', async () => {
      const ws = await newWorkspace();
      const cap = 3;
      const runs = Array.from({ length: 40 }, (_, n) => `${ws}-c${n}`);
      const open = new Set<string>();
      let most = 0;
      const check = async () => {
        const { open: n } = await workspaceAdmissionCounts(db, ws);
        most = Math.max(most, n);
      };
      const results = await Promise.all(
        runs.map(async (id) => {
          const { state, granted } = await acquire(ws, id, cap, id.length % 3);
          for (const other of granted) open.add(other);
          if (state === 'open') open.add(id);
          await check();
          return state;
        }),
      );
      expect(results.filter((state) => state === 'open').length).to.be.at.most(cap);
      expect(most, 'open at once').to.be.at.most(cap);
      // Release the open runs concurrently, each grant taking the place of the released one, until done.
      const done = new Set<string>();
      while (done.size < runs.length) {
        const now = [...open].filter((id) => !done.has(id));
        expect(now.length, 'open runs while some are queued').to.be.within(1, cap);
        await Promise.all(
          now.map(async (id) => {
            done.add(id);
            for (const other of await release(ws, id, cap)) open.add(other);
            await check();
          }),
        );
        expect(most, 'open at once').to.be.at.most(cap);
      }
      expect(await workspaceAdmissionCounts(db, ws)).to.deep.equal({ open: 0, queued: 0 });
    });

    it('sends the acquires and releases of runs that ask at the same moment in shared statements', async () => {
      // A Database of its own (its own statement groups), counting what is sent through it.
      const { db: counted, statements } = countingStatements(db);
      const spaces = await Promise.all(Array.from({ length: 10 }, () => newWorkspace()));
      const runs = spaces.flatMap((ws) => [`${ws}-a`, `${ws}-b`].map((id) => ({ ws, id })));
      const answers = await Promise.all(
        runs.map(({ ws, id }) =>
          acquireWorkspacePlace(counted, { workspace_id: ws, execution_id: id, limit: 1, priority: 0 }),
        ),
      );
      expect(answers.map((a) => a.state)).to.deep.equal(
        runs.map((_, n) => (n % 2 === 0 ? 'open' : 'queued')),
      );
      expect(statements.length, '20 acquires').to.be.below(20);

      const before = statements.length;
      const firsts = runs.filter((_, n) => n % 2 === 0);
      const granted = await Promise.all(
        firsts.map(({ ws, id }) =>
          releaseWorkspacePlace(counted, { workspace_id: ws, execution_id: id, limit: 1 }),
        ),
      );
      expect(granted, 'each release grants its workspace`s queued run').to.deep.equal(
        firsts.map(({ ws }) => [`${ws}-b`]),
      );
      expect(statements.length - before, '10 releases').to.be.below(10);
    });

    // On embedded PGlite a place a batch of steps asks for (platform/store/batch-places.ts) is counted in
    // memory, with no statement, and counts with the rows under the cap; on a server every place is a row.
    describe('places held for a batch', () => {
      const forBatch = (on: Database, workspace_id: string, execution_id: string, limit: number) =>
        acquireWorkspacePlace(on, { workspace_id, execution_id, limit, priority: 0 }, { forBatch: true });
      const releaseOn = (on: Database, workspace_id: string, execution_id: string, limit: number) =>
        releaseWorkspacePlace(on, { workspace_id, execution_id, limit });
      const rowsOf = async (workspaceId: string) =>
        (
          await db.query<{ n: number }>(
            'select count(*)::int as n from workspace_admissions where workspace_id = $1',
            [workspaceId],
          )
        )[0]!.n;

      if (kind === 'pglite') {
        it('holds a batch place without a statement once the counts are known, and gives it back without one', async () => {
          const ws = await newWorkspace();
          const { db: counted, statements } = countingStatements(db);
          expect(await forBatch(counted, ws, `${ws}-a`, 5)).to.deep.equal({ state: 'open', granted: [] });
          expect(statements, 'the first ask reads the counts').to.have.length(1);
          expect(await releaseOn(counted, ws, `${ws}-a`, 5)).to.deep.equal([]);
          expect(await forBatch(counted, ws, `${ws}-b`, 5)).to.deep.equal({ state: 'open', granted: [] });
          expect(await workspaceAdmissionCounts(counted, ws), 'the held place counts as open').to.deep.equal({
            open: 1,
            queued: 0,
          });
          expect(await rowsOf(ws), 'no row for it').to.equal(0);
          const before = statements.length;
          expect(await releaseOn(counted, ws, `${ws}-b`, 5)).to.deep.equal([]);
          expect(statements.length - before, 'the release sends nothing').to.equal(0);
        });

        it('counts held places with the rows: past the cap a run queues, and a freed held place grants it', async () => {
          const ws = await newWorkspace();
          expect((await forBatch(db, ws, `${ws}-a`, 2)).state).to.equal('open');
          expect((await forBatch(db, ws, `${ws}-b`, 2)).state).to.equal('open');
          expect((await forBatch(db, ws, `${ws}-c`, 2)).state, 'a third past the cap of 2').to.equal(
            'queued',
          );
          expect(await workspaceAdmissionCounts(db, ws)).to.deep.equal({ open: 2, queued: 1 });
          expect((await forBatch(db, ws, `${ws}-d`, 2)).state, 'no run passes a queued one').to.equal(
            'queued',
          );
          expect(
            await releaseOn(db, ws, `${ws}-a`, 2),
            'the freed place goes to the first queued',
          ).to.deep.equal([`${ws}-c`]);
          expect(await workspaceAdmissionCounts(db, ws)).to.deep.equal({ open: 2, queued: 1 });
          expect(await grantWorkspace(db, ws, 2), 'the sweeper sees the held place too').to.deep.equal([]);
        });

        it('never opens more than the cap when batches and rows ask and end at once', async () => {
          const ws = await newWorkspace();
          const limit = 4;
          let open = 0;
          let most = 0;
          const run = async (n: number) => {
            const id = `${ws}-r${n}`;
            // Every third run asks as a row (a run whose first act is no batch): the two kinds share the cap.
            const answer =
              n % 3 === 0
                ? await acquireWorkspacePlace(db, { workspace_id: ws, execution_id: id, limit, priority: 0 })
                : await forBatch(db, ws, id, limit);
            if (answer.state === 'open') {
              open += 1;
              most = Math.max(most, open);
              await new Promise((resolve) => setTimeout(resolve, 5));
              open -= 1;
            }
            await releaseOn(db, ws, id, limit);
          };
          await Promise.all(Array.from({ length: 40 }, (_, n) => run(n)));
          expect(most, 'at most the cap open at once').to.be.at.most(limit);
          expect(most, 'the cap was reached').to.equal(limit);
          // Every run gave its place (or its queued row) back: nothing is left held or written.
          expect(await workspaceAdmissionCounts(db, ws)).to.deep.equal({ open: 0, queued: 0 });
        });

        it('writes a place as a row when its batch does not end the run', async () => {
          const ws = await newWorkspace();
          expect((await forBatch(db, ws, `${ws}-a`, 1)).state).to.equal('open');
          await keepBatchPlace(db, ws, `${ws}-a`);
          expect(await rowsOf(ws), 'the run holds its place across a crash now').to.equal(1);
          expect(await workspaceAdmissionCounts(db, ws), 'counted once').to.deep.equal({
            open: 1,
            queued: 0,
          });
          expect((await forBatch(db, ws, `${ws}-b`, 1)).state).to.equal('queued');
          expect(await releaseOn(db, ws, `${ws}-a`, 1)).to.deep.equal([`${ws}-b`]);
        });

        it('forgets the place of a batch that failed: its retry asks again', async () => {
          const ws = await newWorkspace();
          expect((await forBatch(db, ws, `${ws}-a`, 1)).state).to.equal('open');
          dropBatchPlace(db, ws, `${ws}-a`);
          expect(await workspaceAdmissionCounts(db, ws)).to.deep.equal({ open: 0, queued: 0 });
          expect((await forBatch(db, ws, `${ws}-a`, 1)).state, 'the retry').to.equal('open');
        });
      } else {
        it('writes every place as a row: other processes count them', async () => {
          const ws = await newWorkspace();
          expect((await forBatch(db, ws, `${ws}-a`, 2)).state).to.equal('open');
          expect(await rowsOf(ws)).to.equal(1);
          expect(await releaseOn(db, ws, `${ws}-a`, 2)).to.deep.equal([]);
          expect(await rowsOf(ws)).to.equal(0);
        });
      }
    });
  });
}
