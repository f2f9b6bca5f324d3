/**
 * Caches kept fresh by change notices (platform/store/changes.ts): a process serves what it read until a
 * write announces a change of that kind — in this process or in another one sharing the database — and
 * serves nothing from its caches while notices may be missed (its listening connection is lost).
 */
import { expect } from 'chai';
import { announceChange, ChangeFeed, ReadCache } from '../../platform/store/changes';
import { openDatabase, type Database } from '../../platform/store/db';
import { createPostgresDatabase, DB_KINDS, tempDir, testLogger } from '../support/stack';
import { waitFor } from '../support/wait';

for (const kind of DB_KINDS) {
  describe(`change notices and caches (${kind}) @integration`, function () {
    this.timeout(60_000);
    let db: Database;
    let other: Database | undefined;
    let drop: (() => Promise<void>) | undefined;
    let feed: ChangeFeed;
    let reads = 0;
    let cache: ReadCache<number>;
    const load = async () => ++reads;

    before(async () => {
      if (kind === 'postgres') {
        const database = await createPostgresDatabase();
        drop = () => database.drop();
        db = await openDatabase({ url: database.url, dataDir: tempDir() });
        other = await openDatabase({ url: database.url, dataDir: tempDir() });
      } else {
        db = await openDatabase({ url: undefined, dataDir: tempDir() });
      }
      feed = new ChangeFeed();
      cache = new ReadCache(feed, 'webhooks');
      await feed.start(db, testLogger);
    });
    after(async () => {
      await feed?.close();
      await db?.close();
      await other?.close();
      await drop?.();
    });

    it('serves a read from the cache until a change of its kind is announced', async () => {
      const first = await cache.get('k', load);
      expect(await cache.get('k', load)).to.equal(first);
      await announceChange(db, 'workflows');
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await cache.get('k', load), 'another kind changed').to.equal(first);
      await announceChange(db, 'webhooks');
      await waitFor(async () => (await cache.get('k', load)) !== first, { what: 'the cache to be emptied' });
    });

    it('hears of changes announced in a transaction only when it commits', async () => {
      const before = await cache.get('t', load);
      await db
        .transaction(async (tx) => {
          await announceChange(tx, 'webhooks');
          throw new Error('rolled back');
        })
        .catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await cache.get('t', load)).to.equal(before);
    });

    if (kind === 'postgres') {
      it('hears of changes another process announces', async () => {
        const before = await cache.get('o', load);
        await announceChange(other!, 'webhooks');
        await waitFor(async () => (await cache.get('o', load)) !== before, {
          what: 'the notice from the other process',
        });
      });

      it('serves nothing cached while its listening connection is lost, and caches again once it is back', async () => {
        await other!.query(
          "select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query ilike 'listen%'",
        );
        await waitFor(async () => !feed.live, { what: 'the feed to notice the loss' });
        const a = await cache.get('g', load);
        expect(await cache.get('g', load), 'a read while notices may be missed').not.to.equal(a);
        await waitFor(async () => feed.live, { what: 'the feed to listen again', timeoutMs: 30_000 });
        const b = await cache.get('g', load);
        expect(await cache.get('g', load)).to.equal(b);
      });
    }
  });
}
