/**
 * Storing the events of POST /v1/events together (a group commit): the requests that arrive while a store
 * statement runs are stored by the next one, all at once (platform/store/events.ts `storeEvents`, one
 * multi-row insert). A stream of small requests then costs one statement per group rather than one per
 * request, which on the embedded database (one thread for the API, the worker and every statement) is
 * most of what a request of one event costs. Each request still answers once its own events are committed.
 *
 * A group whose statement fails is stored again request by request, so that what one request holds (text
 * the database refuses) fails that request alone, as it would have on its own.
 */
import { storeEvents, type EventsOfRequest } from '../../platform/store/events';
import type { Queryable } from '../../platform/store/db';

/** The most events one statement stores (ten requests of the most a request holds). */
export const MAX_GROUP_EVENTS = 1000;

interface Waiting extends EventsOfRequest {
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class EventStoreQueue {
  private waiting: Waiting[] = [];
  private draining = false;

  constructor(private readonly db: Queryable) {}

  /** Stores a request's events (all or none), with those of the requests waiting beside it. */
  store(request: EventsOfRequest): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ ...request, resolve, reject });
      if (this.draining) return;
      this.draining = true;
      // The requests read in the same turn of the event loop join this one's statement.
      setImmediate(() => void this.drain());
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.waiting.length > 0) await this.storeGroup(this.nextGroup());
    } finally {
      this.draining = false;
    }
  }

  /** The requests waiting first, up to MAX_GROUP_EVENTS events (at least one request). */
  private nextGroup(): Waiting[] {
    let events = 0;
    let count = 0;
    while (count < this.waiting.length) {
      events += this.waiting[count]!.events.length;
      if (count > 0 && events > MAX_GROUP_EVENTS) break;
      count += 1;
    }
    return this.waiting.splice(0, count);
  }

  private async storeGroup(group: Waiting[]): Promise<void> {
    try {
      await storeEvents(this.db, group);
      for (const request of group) request.resolve();
    } catch (error) {
      if (group.length === 1) {
        group[0]!.reject(error);
        return;
      }
      for (const request of group)
        await storeEvents(this.db, [request]).then(request.resolve, request.reject);
    }
  }
}
