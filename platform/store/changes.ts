/**
 * Change notices between the processes that share a database (PostgreSQL LISTEN/NOTIFY), and the
 * read-through caches they keep fresh. What every trigger and every run reads but users rarely change —
 * a workflow's versions and hook secret, a workspace's webhook subscriptions — is read once and kept,
 * until a write announces a change of that kind; the write's transaction sends the notice, so every
 * process hears of it within milliseconds. While a process may be missing notices (its listening
 * connection to a PostgreSQL server is down), its caches are bypassed and emptied, never trusted.
 */
import type { Logger } from '../logger';
import type { Database, Queryable } from './db';

export const CHANGES_CHANNEL = 'switchyard_changes';

/**
 * What changed: a workspace's webhook endpoints, a workflow (versions, trigger, hook secret), or a
 * workspace's limits (an operator's `npm run admin -- set-limits`).
 */
export type ChangeKind = 'webhooks' | 'workflows' | 'limits';

/** Tells every process that data of this kind changed (at commit, when `db` is a transaction). */
export async function announceChange(db: Queryable, kind: ChangeKind): Promise<void> {
  await db.query('select pg_notify($1, $2)', [CHANGES_CHANNEL, kind]);
}

/** A cache of reads of one kind, emptied by every change of that kind. */
export class ReadCache<V> {
  private readonly entries = new Map<string, Promise<V>>();
  /** Bumped by every change: a read that began before one is not kept. */
  private generation = 0;

  constructor(
    private readonly feed: ChangeFeed,
    readonly kind: ChangeKind,
    private readonly maxEntries = 10_000,
  ) {
    feed.register(this);
  }

  /** The cached value of `key`, or `load()`'s (kept unless a change came meanwhile). */
  get(key: string, load: () => Promise<V>): Promise<V> {
    if (!this.feed.live) return load();
    const cached = this.entries.get(key);
    if (cached) return cached;
    const generation = this.generation;
    const loading = load();
    this.entries.set(key, loading);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    loading.then(
      () => {
        if (this.generation !== generation) this.forget(key, loading);
      },
      () => this.forget(key, loading),
    );
    return loading;
  }

  clear(): void {
    this.generation += 1;
    this.entries.clear();
  }

  private forget(key: string, entry: Promise<V>): void {
    if (this.entries.get(key) === entry) this.entries.delete(key);
  }
}

/** The notices of one process: they empty its caches. */
export class ChangeFeed {
  private readonly caches: ReadCache<unknown>[] = [];
  private listening = false;
  private stop: (() => Promise<void>) | undefined;

  /** False while notices may be missed: caches are not used then. */
  get live(): boolean {
    return this.listening;
  }

  register(cache: ReadCache<unknown>): void {
    this.caches.push(cache);
  }

  async start(db: Database, logger: Logger): Promise<void> {
    let gap = false;
    this.stop = await db.listen(CHANGES_CHANNEL, {
      onNotice: (payload) => this.changed(payload as ChangeKind),
      onGap: () => {
        gap = true;
        this.listening = false;
        this.changed(undefined);
        logger.warn('Lost the database change notices: caches are off until they are back');
      },
      onLive: () => {
        this.changed(undefined);
        this.listening = true;
        logger.info('Database change notices are back: caches are on');
      },
    });
    // A first attempt that failed reported a gap (and retries): listening only if it did not.
    if (!gap) this.listening = true;
  }

  async close(): Promise<void> {
    this.listening = false;
    await this.stop?.();
  }

  /** Empties the caches of that kind; all of them when notices may have been missed (undefined). */
  private changed(kind: ChangeKind | undefined): void {
    for (const cache of this.caches) if (kind === undefined || cache.kind === kind) cache.clear();
  }
}
