/**
 * Waking waiting executions (docs/events.md#waiting-for-an-event), an event action of the dispatcher: for one
 * stored event, the wait_for_event steps of its workspace waiting for its name, since before it arrived,
 * whose `match` holds over their context plus the event. Each such wait is claimed for the event (one event
 * per wait, recorded in event_wakes for the event's `woke`), then its run is signalled; the run ends the wait
 * and takes the event (workers/workflows/event-wait.ts).
 *
 * The cost of an event grows with the waiters of its name, not with all waiters: its name's key paths are
 * found by a loose index scan, and under each path only the waiters filed under the event's value there are
 * read (platform/store/event-waiters.ts). Waiters whose match has no such equality are tried one by one.
 *
 * Dispatch is at least once: after a crash the event is dispatched again, finds the waits it claimed (they
 * have not ended) and signals them again; a run keeps only the first wake of a step.
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import {
  EVENT_WOKE_SIGNAL,
  type EventWokeSignal,
  type ExpressionContext,
  type WokenByEvent,
} from '../../core/execution-types';
import { ExpressionError } from '../../core/expressions/errors';
import { keyValueOf } from '../../core/expressions/match-key';
import { isTruthy } from '../../core/expressions/evaluate';
import { pausingBudget, workspaceEvaluator } from '../../platform/compute/evaluation';
import {
  claimWaiter,
  dropWaiter,
  openContext,
  waiterKeyPaths,
  waiterPages,
  waitersFor,
  WAITERS_PAGE,
  type Waiter,
  type WaiterLookup,
} from '../../platform/store/event-waiters';
import type { ClaimedEvent } from '../../platform/store/events';
import type { Services } from '../services';

/** Runs signalled at once while one event wakes many. */
const SIGNALS_AT_ONCE = 16;

/**
 * Wakes the waits each event of a claim matches. The claim's waiters are read at once: its names' key paths
 * (once per name), then the first page of every event's waiters under each path in one statement; only a
 * path with a page's worth of waiters for one event reads on, page by page. Throws what may pass (Temporal
 * or the database away): the event is dispatched again.
 */
export async function wakeEventWaiters(
  services: Services,
  events: readonly ClaimedEvent[],
): Promise<(event: ClaimedEvent) => Promise<void>> {
  const pathsOf = new Map<string, Promise<string[]>>();
  const lookups: WaiterLookup[] = [];
  /** Each event's lookups, by their index in `lookups`. */
  const lookupsOf = new Map<ClaimedEvent, number[]>();
  for (const event of events) {
    const name = `${event.workspace_id}\u0000${event.name}`;
    if (!pathsOf.has(name)) pathsOf.set(name, waiterKeyPaths(services.db, event.workspace_id, event.name));
    const view = viewOf(event);
    const mine: number[] = [];
    for (const path of await pathsOf.get(name)!) {
      const value = path === '' ? undefined : keyValueAt(view, path);
      // Nothing at the path (or a value no key holds, such as an array, which may still match another way).
      if (value !== null) mine.push(lookups.push({ event, keyPath: path, value }) - 1);
    }
    lookupsOf.set(event, mine);
  }
  const pages = await waiterPages(services.db, lookups);
  const logger = services.logger.child({ component: 'events' });
  return async (event) => {
    const mine = lookupsOf.get(event) ?? [];
    if (mine.length === 0) return;
    const view = viewOf(event);
    const evaluate = workspaceEvaluator(services.compute, event.workspace_id);
    for (const n of mine) {
      const lookup = lookups[n]!;
      let waiters = pages[n]!;
      for (;;) {
        const woken: Waiter[] = [];
        for (const waiter of waiters) {
          if (await matchHolds(services, waiter, view, evaluate, logger)) {
            if (await claimWaiter(services.db, waiter, event.id)) woken.push(waiter);
          }
        }
        for (let i = 0; i < woken.length; i += SIGNALS_AT_ONCE)
          await Promise.all(
            woken.slice(i, i + SIGNALS_AT_ONCE).map((waiter) => signal(services, waiter, event.id)),
          );
        if (waiters.length < WAITERS_PAGE) break;
        waiters = await waitersFor(services.db, event, lookup.keyPath, lookup.value, waiters.at(-1));
      }
    }
  };
}

/** The event as a wait's match and a woken step's output see it. */
function viewOf(event: ClaimedEvent): WokenByEvent {
  return {
    id: event.id,
    name: event.name,
    data: event.data,
    received_at: new Date(event.received_at).toISOString(),
  };
}

/**
 * The index value of the event at a key path (core/expressions/match-key.ts: "`data`.`order_id`"): the JSON
 * of a string, number, boolean or null there; undefined when something else is there (an object, an array:
 * read every waiter of the path); null when nothing is there (no waiter of the path can match: `=` with a
 * missing value never holds).
 */
export function keyValueAt(event: WokenByEvent, keyPath: string): string | undefined | null {
  let value: unknown = event;
  for (const name of keyPath.split('.').map((part) => part.slice(1, -1))) {
    if (Array.isArray(value)) return undefined;
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, name)) return null;
    value = (value as Record<string, unknown>)[name];
  }
  return keyValueOf(value);
}

/**
 * The waiter's `match` over its context plus the event, evaluated as a step's expressions are. A match
 * that fails (an expression error) does not hold: the wait goes on until an event matches or it times out.
 */
async function matchHolds(
  services: Services,
  waiter: Waiter,
  event: WokenByEvent,
  evaluate: ReturnType<typeof workspaceEvaluator>,
  logger: Services['logger'],
): Promise<boolean> {
  if (waiter.match === null) return true;
  const context = {
    ...openContext(services.cipher, waiter, waiter.context),
    event,
  } as unknown as ExpressionContext;
  const budget = pausingBudget();
  try {
    return isTruthy(await evaluate(waiter.match, context, {}, budget));
  } catch (error) {
    if (!(error instanceof ExpressionError)) throw error;
    logger.info(
      { eventId: event.id, executionId: waiter.execution_id, step: waiter.step_id, err: error.message },
      'A wait_for_event match failed over an event; the wait goes on',
    );
    return false;
  }
}

/** Tells the waiting run; a run that is gone (canceled, terminated) leaves a waiter nothing will end. */
async function signal(services: Services, waiter: Waiter, eventId: string): Promise<void> {
  const wake: EventWokeSignal = { key: waiter.step_key, event_id: eventId };
  try {
    await services.temporal.client.workflow
      .getHandle(waiter.workflow_id, waiter.run_id)
      .signal(EVENT_WOKE_SIGNAL, wake);
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
    await dropWaiter(services.db, waiter);
  }
}
