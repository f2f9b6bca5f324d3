/**
 * Flow control's throttle tables (platform/store/throttles.ts) on embedded PGlite with every migration: a
 * key's window grants `limit` starts, the rest queue with the time the window frees a start noted for the
 * sweeper, a grant once that time passed takes the best queued run, and a run asking twice gets the state it
 * already has.
 */
import { expect } from 'chai';
import { openDatabase, type Database } from '../../platform/store/db';
import { migrate } from '../../platform/store/migrate';
import {
  acquireThrottle,
  dueThrottleKeys,
  grantThrottleKey,
  throttleKeyId,
  type NewThrottleWait,
  type ThrottleKey,
} from '../../platform/store/throttles';
import { createWorkspace } from '../../platform/store/workspaces';
import { tempDir } from '../support/stack';

describe('flow control: the throttle tables', function () {
  this.timeout(120_000);
  let db: Database;
  let keys = 0;

  before(async () => {
    db = await openDatabase({ url: undefined, dataDir: tempDir('sy-throttles-') });
    await migrate(db);
    await createWorkspace(db, 'ws', 'ws');
  });
  after(async () => db?.close());

  /** A key of its own per test: tests share the tables. */
  const newKey = (): ThrottleKey => ({ workspace_id: 'ws', workflow_id: 'wf', key: `k${++keys}` });

  const wait = (
    key: ThrottleKey,
    id: string,
    limit: number,
    periodMs: number,
    priority = 0,
  ): NewThrottleWait => ({
    ...key,
    execution_id: id,
    limit,
    period_ms: periodMs,
    priority,
  });

  const nextAt = async (key: ThrottleKey): Promise<Date | undefined> =>
    (
      await db.query<{ next_at: Date }>('select next_at from throttle_keys where key_id = $1', [
        throttleKeyId(key),
      ])
    )[0]?.next_at;

  it('grants `limit` starts in a window, queues the rest and notes when the window frees one', async () => {
    const key = newKey();
    for (const n of [0, 1])
      expect((await acquireThrottle(db, wait(key, `${key.key}-${n}`, 2, 60_000))).state, `run ${n}`).to.equal(
        'granted',
      );
    expect(await nextAt(key), 'nothing queued yet').to.equal(undefined);
    const third = await acquireThrottle(db, wait(key, `${key.key}-2`, 2, 60_000));
    expect(third).to.deep.equal({ state: 'queued', granted: [] });
    const next = await nextAt(key);
    expect(next, 'when the oldest start leaves the window').to.be.instanceOf(Date);
    const inMs = next!.getTime() - Date.now();
    expect(inMs, 'about a period from the first start').to.be.within(50_000, 61_000);
    expect(
      (await dueThrottleKeys(db, 100)).map((due) => due.key_id),
      'not due before its time',
    ).to.not.include(throttleKeyId(key));
    expect(await grantThrottleKey(db, throttleKeyId(key), 'ws'), 'the window is still full').to.deep.equal(
      [],
    );
  });

  it('once the window moved on, grants the best queued run, highest priority first, then arrival', async () => {
    const key = newKey();
    const periodMs = 1_000;
    expect((await acquireThrottle(db, wait(key, `${key.key}-holder`, 1, periodMs))).state).to.equal(
      'granted',
    );
    for (const [n, priority] of [0, 5, 5].entries())
      expect(
        (await acquireThrottle(db, wait(key, `${key.key}-a${n}`, 1, periodMs, priority))).state,
      ).to.equal('queued');
    const order: string[] = [];
    for (let n = 0; n < 3; n++) {
      const next = await nextAt(key);
      expect(next, `a time noted before grant ${n}`).to.be.instanceOf(Date);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, next!.getTime() - Date.now()) + 20));
      expect((await dueThrottleKeys(db, 100)).map((due) => due.key_id)).to.include(throttleKeyId(key));
      const granted = await grantThrottleKey(db, throttleKeyId(key), 'ws');
      expect(granted, `grant ${n}: one start per window`).to.have.length(1);
      order.push(granted[0]!.slice(`${key.key}-`.length));
    }
    expect(order).to.deep.equal(['a1', 'a2', 'a0']);
    expect(await nextAt(key), 'no queue left: no time noted').to.equal(undefined);
  });

  it('answers a run asking twice with the state it has, without a second row or start', async () => {
    const key = newKey();
    const granted = wait(key, `${key.key}-g`, 1, 60_000);
    const queued = wait(key, `${key.key}-q`, 1, 60_000);
    expect((await acquireThrottle(db, granted)).state).to.equal('granted');
    expect((await acquireThrottle(db, queued)).state).to.equal('queued');
    expect(await acquireThrottle(db, granted), 'granted, asked again').to.deep.equal({
      state: 'granted',
      granted: [],
    });
    expect(await acquireThrottle(db, queued), 'queued, asked again').to.deep.equal({
      state: 'queued',
      granted: [],
    });
    const [{ rows }] = (await db.query<{ rows: number }>(
      'select count(*)::int as rows from throttle_waits where key_id = $1',
      [throttleKeyId(key)],
    )) as [{ rows: number }];
    expect(rows).to.equal(2);
    const [{ starts }] = (await db.query<{ starts: number }>(
      'select count(*)::int as starts from throttle_starts where key_id = $1',
      [throttleKeyId(key)],
    )) as [{ starts: number }];
    expect(starts).to.equal(1);
  });
});
