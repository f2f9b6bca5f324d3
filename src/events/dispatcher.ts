/**
 * The event dispatcher (ARCHITECTURE.md#events): every API process runs one. Events are committed to the
 * `events` table before POST /v1/events answers 202 (the outbox); the dispatcher claims undispatched rows
 * with a lease (FOR UPDATE SKIP LOCKED, so API processes share the work without taking the same row), runs
 * the event actions on each, and marks it dispatched. The request that stored events kicks its own
 * process's dispatcher at once; a sweep every few seconds is the safety net, for the rows of a process
 * that died before (or while) dispatching them, and for events whose dispatch failed (Temporal or the
 * database away, backpressure), which wait a growing delay before they are tried again.
 *
 * Dispatch is at least once: a process can die after an action and before the row is marked. The actions
 * are idempotent, so an event's effects happen once.
 */
import type { Logger } from '../../platform/logger';
import { claimEvents, deferEvent, markDispatched, type ClaimedEvent } from '../../platform/store/events';
import type { Services } from '../services';
import { Sweeper } from '../background/sweeper';
import { startEventTriggers } from './triggers';
import { wakeEventWaiters } from './wake';

export type EventAction = (services: Services, event: ClaimedEvent) => Promise<void>;

/**
 * What dispatching an event does, in order; each action must be idempotent. Waking the executions that
 * wait for the event (wait_for_event, wake.ts) comes after the triggers, recording each execution it woke
 * in `event_wakes` (which the event's read lists as `woke`).
 */
export const EVENT_ACTIONS: readonly EventAction[] = [startEventTriggers, wakeEventWaiters];

export interface DispatcherOptions {
  /** How often the safety-net sweep looks for undispatched events. */
  sweepMs: number;
  /** How long a claim holds an event; past it (its process died), another claim may take it. */
  leaseMs: number;
  /** Events claimed at once. */
  batch: number;
  /** Events of a batch dispatched at the same time. */
  concurrency: number;
  /** The longest wait before an event whose dispatch failed is tried again. */
  maxRetryDelayMs: number;
}

export const DEFAULT_DISPATCHER_OPTIONS: DispatcherOptions = {
  sweepMs: 5_000,
  leaseMs: 30_000,
  batch: 50,
  concurrency: 4,
  maxRetryDelayMs: 30_000,
};

export class EventDispatcher extends Sweeper {
  private readonly logger: Logger;
  private readonly options: DispatcherOptions;

  constructor(
    private readonly services: Services,
    private readonly actions: readonly EventAction[] = EVENT_ACTIONS,
    options: Partial<DispatcherOptions> = {},
  ) {
    const settings = { ...DEFAULT_DISPATCHER_OPTIONS, ...options };
    super(settings.sweepMs);
    this.options = settings;
    this.logger = services.logger.child({ component: 'events' });
  }

  protected async pass(): Promise<void> {
    const { batch, leaseMs, concurrency } = this.options;
    try {
      while (!this.stopped) {
        const events = await claimEvents(this.services.db, batch, leaseMs);
        for (let i = 0; i < events.length; i += concurrency)
          await Promise.all(events.slice(i, i + concurrency).map((event) => this.dispatch(event)));
        if (events.length < batch) return;
      }
    } catch (error) {
      // The database away: the sweep tries again; the claimed rows' leases run out meanwhile.
      this.logger.warn({ err: error }, 'Could not claim events to dispatch; the next sweep tries again');
    }
  }

  private async dispatch(event: ClaimedEvent): Promise<void> {
    try {
      for (const action of this.actions) await action(this.services, event);
      await markDispatched(this.services.db, event);
    } catch (error) {
      const delayMs = Math.min(1000 * 2 ** (event.attempts - 1), this.options.maxRetryDelayMs);
      this.logger.warn(
        { err: error, workspaceId: event.workspace_id, eventId: event.id, attempts: event.attempts, delayMs },
        'Event dispatch failed; it is tried again later',
      );
      // When this fails too (the database away), the lease runs out and the sweep takes the event again.
      await deferEvent(this.services.db, event, delayMs).catch(() => undefined);
    }
  }
}
