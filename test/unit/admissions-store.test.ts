/**
 * Flow control's admission table (platform/store/admissions.ts) on embedded PGlite and on the PostgreSQL
 * server (TEST_DATABASE_URL) with every migration: the order in which a key's queued runs are granted places
 * (priority, highest first, then arrival); a run asking twice for its place gets the state it already has; a
 * run's release (one statement, migration 017) takes its throttle row too and grants the next in line; and
 * concurrent acquires and releases never open more than the limit (on PostgreSQL, over a pool of
 * connections: the key's advisory lock serializes the one-statement paths and the transactions alike). Runs
 * that ask or end at the same moment share one statement (migration 018, platform/store/statement-groups.ts),
 * and one run's failing request fails only that run.
 */
import { expect } from 'chai';
import {
  acquireAdmission,
  releaseAdmission,
  releaseRunAdmission,
  type AdmissionKey,
  type NewAdmission,
} from '../../platform/store/admissions';
import { openDatabase, type Database } from '../../platform/store/db';
import { countingStatements } from '../support/database';
import { migrate } from '../../platform/store/migrate';
import { createWorkspace } from '../../platform/store/workspaces';
import { createPostgresDatabase, DB_KINDS, tempDir } from '../support/stack';

for (const kind of DB_KINDS)
  describe(`flow control: the admission table (${kind})`, function () {
    this.timeout(120_000);
    let db: Database;
    let drop: (() => Promise<void>) | undefined;
    let keys = 0;

    before(async () => {
      if (kind === 'postgres') {
        const database = await createPostgresDatabase();
        drop = () => database.drop();
        db = await openDatabase({ url: database.url, dataDir: tempDir('sy-admissions-') });
      } else {
        db = await openDatabase({ url: undefined, dataDir: tempDir('sy-admissions-') });
      }
      await migrate(db);
      await createWorkspace(db, 'ws', 'ws');
    });
    after(async () => {
      await db?.close();
      await drop?.();
    });

    const openCount = async (key: AdmissionKey): Promise<number> => {
      const [row] = await db.query<{ n: number }>(
        `select count(*)::int as n from admissions
       where workspace_id = $1 and workflow_id = $2 and key is not distinct from $3 and state = 'open'`,
        [key.workspace_id, key.workflow_id, key.key],
      );
      return row!.n;
    };

    /** A key of its own per test: tests share the table. */
    const newKey = (): AdmissionKey => ({ workspace_id: 'ws', workflow_id: 'wf', key: `k${++keys}` });

    const admission = (key: AdmissionKey, id: string, limit: number, priority = 0): NewAdmission => ({
      ...key,
      execution_id: id,
      limit,
      priority,
    });

    it('grants freed places by priority, highest first, then by arrival', async () => {
      const key = newKey();
      const first = await acquireAdmission(db, admission(key, `${key.key}-holder`, 1, 100));
      expect(first, 'the first run of an empty key').to.deep.equal({ state: 'open', granted: [] });
      // Arrival order: a0 .. a5, with these priorities.
      const priorities = [0, 10, 5, 10, -3, 0];
      for (const [n, priority] of priorities.entries()) {
        const queued = await acquireAdmission(db, admission(key, `${key.key}-a${n}`, 1, priority));
        expect(queued.state, `a${n} behind the holder`).to.equal('queued');
      }
      const order: string[] = [];
      let holder = `${key.key}-holder`;
      for (let n = 0; n < priorities.length; n++) {
        const granted = await releaseAdmission(db, holder);
        expect(granted, `one place freed by ${holder}: one run granted`).to.have.length(1);
        holder = granted[0]!;
        order.push(holder.slice(`${key.key}-`.length));
      }
      expect(order).to.deep.equal(['a1', 'a3', 'a2', 'a0', 'a5', 'a4']);
      expect(await releaseAdmission(db, holder), 'nothing left to grant').to.deep.equal([]);
    });

    it('answers a run that asks again for its queued place with its state, adding no row', async () => {
      const key = newKey();
      await acquireAdmission(db, admission(key, `${key.key}-holder`, 1));
      const request = admission(key, `${key.key}-again`, 1);
      expect(await acquireAdmission(db, request)).to.deep.equal({ state: 'queued', granted: [] });
      expect(await acquireAdmission(db, request), 'the second ask').to.deep.equal({
        state: 'queued',
        granted: [],
      });
      const rows = await db.query<{ n: number }>(
        'select count(*)::int as n from admissions where execution_id = $1',
        [request.execution_id],
      );
      expect(rows[0]!.n, 'rows of the execution').to.equal(1);
    });

    it('answers a run that asks again for its open place with open, taking no second place', async () => {
      const key = newKey();
      const request = admission(key, `${key.key}-open`, 2);
      expect(await acquireAdmission(db, request)).to.deep.equal({ state: 'open', granted: [] });
      expect(await acquireAdmission(db, request), 'the second ask').to.deep.equal({
        state: 'open',
        granted: [],
      });
      // One place of two taken: the next run still gets the other, the one after queues.
      expect((await acquireAdmission(db, admission(key, `${key.key}-b`, 2))).state).to.equal('open');
      expect((await acquireAdmission(db, admission(key, `${key.key}-c`, 2))).state).to.equal('queued');
    });
    it("gives back a run's place and its throttle row in one release, and grants the next in line", async () => {
      const key = newKey();
      expect((await acquireAdmission(db, admission(key, `${key.key}-a`, 1))).state).to.equal('open');
      expect((await acquireAdmission(db, admission(key, `${key.key}-b`, 1))).state).to.equal('queued');
      await db.query(
        `insert into throttle_waits
         (execution_id, workspace_id, workflow_id, key, key_id, throttle_limit, period_ms, state)
       values ($1, 'ws', 'wf', $2, $3, 1, 1000, 'granted')`,
        [`${key.key}-a`, key.key, `tk-${key.key}`],
      );
      expect(await releaseRunAdmission(db, `${key.key}-a`), 'the queued run granted').to.deep.equal([
        `${key.key}-b`,
      ]);
      const throttleRows = await db.query('select 1 from throttle_waits where execution_id = $1', [
        `${key.key}-a`,
      ]);
      expect(throttleRows, 'its throttle row gone too').to.have.length(0);
      expect(await releaseRunAdmission(db, `${key.key}-b`), 'nobody queued').to.deep.equal([]);
      expect(await releaseRunAdmission(db, `${key.key}-b`), 'a second release: nothing').to.deep.equal([]);
      expect(await openCount(key)).to.equal(0);
    });

    it('keeps the limit of a workflow without a key expression (one key for all, null)', async () => {
      const key: AdmissionKey = { workspace_id: 'ws', workflow_id: `nokey${++keys}`, key: null };
      expect((await acquireAdmission(db, admission(key, `${key.workflow_id}-a`, 1))).state).to.equal('open');
      expect((await acquireAdmission(db, admission(key, `${key.workflow_id}-b`, 1))).state).to.equal(
        'queued',
      );
      expect(await releaseRunAdmission(db, `${key.workflow_id}-a`)).to.deep.equal([`${key.workflow_id}-b`]);
      expect(await openCount(key)).to.equal(1);
    });

    it('never opens more than the limit under concurrent acquires and releases', async () => {
      const key = newKey();
      const limit = 3;
      const runs = Array.from({ length: 40 }, (_, n) => `${key.key}-c${n}`);
      const open = new Set<string>();
      let most = 0;
      const check = async () => {
        most = Math.max(most, await openCount(key));
      };
      await Promise.all(
        runs.map(async (id, n) => {
          const { state, granted } = await acquireAdmission(db, admission(key, id, limit, n % 3));
          for (const other of granted) open.add(other);
          if (state === 'open') open.add(id);
          await check();
        }),
      );
      expect(most, 'open at once').to.be.at.most(limit);
      const done = new Set<string>();
      while (done.size < runs.length) {
        const now = [...open].filter((id) => !done.has(id));
        expect(now.length, 'open runs while some are queued').to.be.within(1, limit);
        await Promise.all(
          now.map(async (id) => {
            done.add(id);
            for (const other of await releaseRunAdmission(db, id)) open.add(other);
            await check();
          }),
        );
        expect(most, 'open at once').to.be.at.most(limit);
      }
      expect(await openCount(key)).to.equal(0);
    });

    it('sends the acquires and releases of runs that ask at the same moment in shared statements', async () => {
      // A Database of its own (its own statement groups), counting what is sent through it.
      const { db: counted, statements } = countingStatements(db);
      const runs = Array.from({ length: 20 }, (_, n) => ({ key: newKey(), id: `group-${keys}-${n}` }));
      const answers = await Promise.all(
        runs.map((run) => acquireAdmission(counted, admission(run.key, run.id, 1))),
      );
      expect(answers.map((a) => a.state)).to.deep.equal(runs.map(() => 'open'));
      for (const run of runs) expect(await openCount(run.key), run.id).to.equal(1);
      expect(statements.length, '20 acquires').to.be.below(20);

      const before = statements.length;
      const granted = await Promise.all(runs.map((run) => releaseRunAdmission(counted, run.id)));
      expect(granted.flat()).to.deep.equal([]);
      for (const run of runs) expect(await openCount(run.key), run.id).to.equal(0);
      expect(statements.length - before, '20 releases').to.be.below(20);
    });

    it('answers each run of a shared statement as it would alone, a queued key included', async () => {
      const busy = newKey();
      await acquireAdmission(db, admission(busy, `${busy.key}-holder`, 1));
      const free = newKey();
      const [queued, open, again] = await Promise.all([
        acquireAdmission(db, admission(busy, `${busy.key}-next`, 1)),
        acquireAdmission(db, admission(free, `${free.key}-first`, 1)),
        acquireAdmission(db, admission(busy, `${busy.key}-holder`, 1)),
      ]);
      expect(queued.state, 'behind the holder').to.equal('queued');
      expect(open.state, 'a free key').to.equal('open');
      expect(again.state, 'the holder asking again').to.equal('open');
      expect(await releaseRunAdmission(db, `${busy.key}-holder`)).to.deep.equal([`${busy.key}-next`]);
    });

    it('fails only the run whose request the database refuses, not the others of its statement', async () => {
      const key = newKey();
      const unknownWorkspace = { ...newKey(), workspace_id: 'no-such-workspace' };
      const [refused, open] = await Promise.allSettled([
        acquireAdmission(db, admission(unknownWorkspace, `${key.key}-nowhere`, 1)),
        acquireAdmission(db, admission(key, `${key.key}-fine`, 1)),
      ]);
      expect(refused.status, 'a run of a workspace that does not exist').to.equal('rejected');
      expect(open).to.deep.equal({ status: 'fulfilled', value: { state: 'open', granted: [] } });
    });
  });
