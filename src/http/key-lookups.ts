/**
 * The API key lookups of the requests read in one turn of the event loop, made by one statement
 * (`key_hash = any(...)`): under many small requests at once (a stream of POST /v1/events of one event
 * each), the lookup is one of the two statements a request costs, and on the embedded database each
 * statement has a fixed price on the process's one thread. Nothing is cached: every request's key is read
 * after the request arrived, so a revoked key answers 401 at once, as before.
 */
import { findApiKeysByKeys, type ApiKeyRecord } from '../../platform/store/api-keys';
import type { Queryable } from '../../platform/store/db';

interface Pending {
  resolve: (record: ApiKeyRecord | undefined) => void;
  reject: (error: unknown) => void;
}

export class KeyLookups {
  private pending = new Map<string, Pending[]>();

  constructor(private readonly db: Queryable) {}

  /** The key's record, revoked or not; undefined when unknown. */
  find(key: string): Promise<ApiKeyRecord | undefined> {
    return new Promise((resolve, reject) => {
      if (this.pending.size === 0) setImmediate(() => void this.flush());
      const waiting = this.pending.get(key);
      if (waiting) waiting.push({ resolve, reject });
      else this.pending.set(key, [{ resolve, reject }]);
    });
  }

  private async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = new Map();
    try {
      const records = await findApiKeysByKeys(this.db, [...batch.keys()]);
      for (const [key, waiting] of batch) for (const { resolve } of waiting) resolve(records.get(key));
    } catch (error) {
      for (const waiting of batch.values()) for (const { reject } of waiting) reject(error);
    }
  }
}
