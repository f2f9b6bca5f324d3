/**
 * The event dispatcher (ARCHITECTURE.md#events): every API process runs one. Events are committed to the
 * `events` table before POST /v1/events answers 202 (the outbox); the dispatcher claims undispatched rows
 * with a lease (FOR UPDATE SKIP LOCKED, so API processes share the work without taking the same row), runs
 * the event actions on each, and marks those it dispatched. The request that stored events kicks its own
 * process's dispatcher at once; a sweep every few seconds is the safety net, for the rows of a process
 * that died before (or while) dispatching them, and for events whose dispatch failed (Temporal or the
 * database away, backpressure), which wait a growing delay before they are tried again.
 *
 * A claim is dispatched in few statements whatever its size: each action reads what it needs for all of
 * the claim's events at once (the triggers' records, the waiters), and one statement marks every event
 * whose actions all succeeded. An event whose dispatch failed is deferred alone; the others are marked.
 *
 * Dispatch is at least once: a process can die after an action and before the row is marked. The actions
 * are idempotent, so an event's effects happen once.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../platform/logger';
import { claimEvents, deferEvent, markDispatched, type ClaimedEvent } from '../../platform/store/events';
import type { Services } from '../services';
import { Sweeper } from '../background/sweeper';
import { startEventTriggers } from './triggers';
import { wakeEventWaiters } from './wake';

/**
 * An action on a claim's events: it reads what it needs for all of them at once, and returns what acts on
 * one of them (each in turn, several at the same time). Acting must be idempotent.
 */
export type EventAction = (
  services: Services,
  events: readonly ClaimedEvent[],
) => Promise<(event: ClaimedEvent) => Promise<void>>;

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
  /**
   * The least time from one claim to the next when the first was not full. Under a stream of requests of
   * one event each, a claim then takes the events of several requests, and its few statements are shared;
   * a lone event, long after the last claim, waits for nothing.
   */
  claimIntervalMs: number;
}

export const DEFAULT_DISPATCHER_OPTIONS: DispatcherOptions = {
  sweepMs: 5_000,
  leaseMs: 30_000,
  batch: 50,
  concurrency: 4,
  maxRetryDelayMs: 30_000,
  claimIntervalMs: 10,
};

export class EventDispatcher extends Sweeper {
  private readonly logger: Logger;
  private readonly options: DispatcherOptions;
  /** When the last claim that was not full began (performance.now()). */
  private lastPartialClaim = -Infinity;

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
    const { batch, leaseMs } = this.options;
    try {
      while (!this.stopped) {
        const wait = this.lastPartialClaim + this.options.claimIntervalMs - performance.now();
        if (wait > 0) await sleep(wait);
        const began = performance.now();
        const events = await claimEvents(this.services.db, batch, leaseMs);
        if (events.length < batch) this.lastPartialClaim = began;
        if (events.length > 0) await this.dispatch(events);
        if (events.length < batch) return;
      }
    } catch (error) {
      // The database away: the sweep tries again; the claimed rows' leases run out meanwhile.
      this.logger.warn({ err: error }, 'Could not claim events to dispatch; the next sweep tries again');
    }
  }

  /** Runs the actions on a claim's events, marks those dispatched, and defers each one that failed. */
  private async dispatch(events: readonly ClaimedEvent[]): Promise<void> {
    const acts: ((event: ClaimedEvent) => Promise<void>)[] = [];
    try {
      for (const action of this.actions) acts.push(await action(this.services, events));
    } catch (error) {
      await Promise.all(events.map((event) => this.defer(event, error)));
      return;
    }
    const dispatched: ClaimedEvent[] = [];
    const { concurrency } = this.options;
    for (let i = 0; i < events.length; i += concurrency)
      await Promise.all(
        events.slice(i, i + concurrency).map(async (event) => {
          try {
            for (const act of acts) await act(event);
            dispatched.push(event);
          } catch (error) {
            await this.defer(event, error);
          }
        }),
      );
    try {
      await markDispatched(this.services.db, dispatched);
    } catch (error) {
      // Their leases run out and they are dispatched again, acting once (the actions are idempotent).
      this.logger.warn(
        { err: error, events: dispatched.length },
        'Could not mark dispatched events; they are dispatched again when their lease runs out',
      );
    }
  }

  /** Leaves an event whose dispatch failed for a delay growing with its attempts. */
  private async defer(event: ClaimedEvent, error: unknown): Promise<void> {
    const delayMs = Math.min(1000 * 2 ** (event.attempts - 1), this.options.maxRetryDelayMs);
    this.logger.warn(
      { err: error, workspaceId: event.workspace_id, eventId: event.id, attempts: event.attempts, delayMs },
      'Event dispatch failed; it is tried again later',
    );
    // When this fails too (the database away), the lease runs out and the sweep takes the event again.
    await deferEvent(this.services.db, event, delayMs).catch(() => undefined);
  }
}
