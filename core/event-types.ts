/**
 * Execution events (docs/webhooks.md#events-and-payload): what the execution workflow emits and delivery
 * workflows carry.
 */
import type { ExecutionError } from './error-detail';

export const EVENT_KINDS = [
  'execution.started',
  'execution.waiting',
  'execution.completed',
  'execution.failed',
  'execution.canceled',
] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

/** Events about a closed execution: their first delivery attempt waits until the run is closed. */
export const CLOSING_EVENTS: readonly EventKind[] = [
  'execution.completed',
  'execution.failed',
  'execution.canceled',
];

/** The JSON body receivers get. */
export interface EventPayload {
  id: string;
  event: EventKind;
  created_at: string;
  execution_id: string;
  workflow: string;
  workflow_version: number;
  status: string;
  error: ExecutionError | null;
  /** execution.completed: the execution's output. */
  output?: unknown;
}

/** An event as the workflow emits it: the payload plus where it belongs. */
export interface EmittedEvent {
  payload: EventPayload;
  workspace_id: string;
  /** The run that emitted it: a closing event waits for this run to close. */
  run_id: string;
}

export interface DeliveryWorkflowInput {
  event: EmittedEvent;
  delivery_ids: string[];
  /** Attempts in all per delivery: the first one plus the retry schedule. */
  max_attempts: number;
  /** A redelivery on request: the execution closed long ago, no need to wait for it. */
  skip_close_wait?: boolean;
  /**
   * Each endpoint's first attempt (and the wait for the close) as a local activity. Set by every start
   * since this build; histories started earlier lack it and replay on their activities-only path.
   */
  local_first_attempt?: boolean;
  /**
   * The database was away when the event was emitted: `delivery_ids` is empty and the workflow records
   * the deliveries itself (record_deliveries) before anything else.
   */
  deliveries_unrecorded?: boolean;
}

export const DELIVERY_WORKFLOW_TYPE = 'delivery';

/** The workflow id of an event's deliveries (their first series of attempts). */
export function deliveryWorkflowId(eventId: string): string {
  return `dlv_${eventId}`;
}

/** The workflow id of a delivery sent again on request: one series at a time per delivery. */
export function redeliveryWorkflowId(deliveryId: string): string {
  return `dlv_${deliveryId}_redelivery`;
}
