/**
 * The floor of the events scenario (bench/scenarios/events.ts): a run that waits for one signal, as a
 * developer would write a wait for an external event on the raw SDK, with a timeout as wait_for_event
 * has (a timer beside the condition). The scenario signals it directly with the Temporal client, where
 * Switchyard stores the event, finds its waiter and signals the run from the dispatcher.
 *
 * Deterministic workflow code: only @temporalio/workflow.
 */
import { condition, defineSignal, setHandler } from '@temporalio/workflow';

export const EVENT_WAIT_FLOOR_WORKFLOW_TYPE = 'eventWaitFloor';
export const FLOOR_WOKE_SIGNAL = 'woke';

export interface EventWaitFloorInput {
  timeoutMs: number;
}

/** The id the signal carried (the event's), or null when the timeout came first. */
export async function eventWaitFloor({ timeoutMs }: EventWaitFloorInput): Promise<string | null> {
  let woke: string | undefined;
  setHandler(defineSignal<[string]>(FLOOR_WOKE_SIGNAL), (eventId) => {
    woke ??= eventId;
  });
  return (await condition(() => woke !== undefined, timeoutMs)) ? woke! : null;
}
