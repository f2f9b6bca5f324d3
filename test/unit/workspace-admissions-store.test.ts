/**
 * Flow control's workspace cap (platform/store/workspace-admissions.ts) on embedded PGlite and on the
 * PostgreSQL server (TEST_DATABASE_URL) with every migration: runs open at once under the cap and queue past
 * it; freed places go by priority, then arrival; a run asking twice gets the state it has; a release grants in
 * the same transaction; a raised cap is granted; and concurrent acquires and releases never open more than
 * the cap (on PostgreSQL, over a pool of connections: the workspace's advisory lock serializes them).
 */
import { expect } from 'chai';
import { openDatabase, type Database } from '../../platform/store/db';
import { countingStatements } from '../support/database';
import { migrate } from '../../platform/store/migrate';
import { createWorkspace } from '../../platform/store/workspaces';
import {
  acquireWorkspacePlace,
  grantWorkspace,
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
  });
}
