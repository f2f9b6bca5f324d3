/**
 * Flow control's admission table (platform/store/admissions.ts) on embedded PGlite with every migration: the
 * order in which a key's queued runs are granted places (priority, highest first, then arrival), and that a
 * run asking twice for its place gets the state it already has.
 */
import { expect } from 'chai';
import {
  acquireAdmission,
  releaseAdmission,
  type AdmissionKey,
  type NewAdmission,
} from '../../platform/store/admissions';
import { openDatabase, type Database } from '../../platform/store/db';
import { migrate } from '../../platform/store/migrate';
import { createWorkspace } from '../../platform/store/workspaces';
import { tempDir } from '../support/stack';

describe('flow control: the admission table', function () {
  this.timeout(120_000);
  let db: Database;
  let keys = 0;

  before(async () => {
    db = await openDatabase({ url: undefined, dataDir: tempDir('sy-admissions-') });
    await migrate(db);
    await createWorkspace(db, 'ws', 'ws');
  });
  after(async () => db?.close());

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
});
