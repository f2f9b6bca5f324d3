/**
 * Flow control (docs/flow-control.md): what the definition's `concurrency` and `priority` keys mean once
 * evaluated, shared by the worker's admission activities, the API's sweeper and reads. Pure.
 */
import type { ExecutionError } from './error-detail';

/** Signal a queued run waits for: its place was granted (workers/workflows/admission.ts). */
export const ADMITTED_SIGNAL = 'admitted';

/** Signal a run held back by its definition's `throttle` waits for: its start was granted. */
export const THROTTLE_ADMITTED_SIGNAL = 'throttle_admitted';

/** Signal a run held back by its workspace's cap on open executions waits for: its place was granted. */
export const WORKSPACE_ADMITTED_SIGNAL = 'workspace_admitted';

/** A throttle's `limit`: starts of one key in any window of `period`, at most. */
export const MAX_THROTTLE_LIMIT = 10_000;
/** A throttle's `period`: from one second to one day. */
export const MIN_THROTTLE_PERIOD_MS = 1_000;
export const MAX_THROTTLE_PERIOD_MS = 24 * 60 * 60 * 1000;

/** The longest key value kept: a longer one is cut (two keys alike up to there share their places). */
export const MAX_ADMISSION_KEY_LENGTH = 200;
export const MIN_PRIORITY = -100;
export const MAX_PRIORITY = 100;

/**
 * A concurrency key's value as stored and shown: a string as it is, a number or a boolean as its JSON
 * text, anything else (missing, null, an object or array) as "null"; cut to MAX_ADMISSION_KEY_LENGTH.
 */
export function admissionKeyOf(value: unknown): string {
  let text: string;
  if (typeof value === 'string') text = value;
  else if ((typeof value === 'number' && Number.isFinite(value)) || typeof value === 'boolean')
    text = JSON.stringify(value);
  else text = 'null';
  return text.length > MAX_ADMISSION_KEY_LENGTH ? text.slice(0, MAX_ADMISSION_KEY_LENGTH) : text;
}

/** A priority's value: a number rounded and clamped to MIN_PRIORITY..MAX_PRIORITY; anything else 0. */
export function priorityOf(value: unknown): number {
  if (typeof value !== 'number' || Number.isNaN(value)) return 0;
  return Math.min(MAX_PRIORITY, Math.max(MIN_PRIORITY, Math.round(value)));
}

/** Input of the `acquire_admission` local activity: the run asks for its place. */
export interface AdmissionRequest {
  workspace_id: string;
  workflow_id: string;
  execution_id: string;
  limit: number;
  /** The concurrency key expression; absent: the whole workflow is one key. */
  key?: string;
  /** The priority expression; absent: 0. */
  priority?: string;
  /** What the expressions see. */
  input: unknown;
}

/**
 * The place a run got: `open` (it runs now) or `queued` (it waits for the `admitted` signal); or the
 * evaluation error that fails the run before any step.
 */
export type AdmissionResult =
  { state: 'open' | 'queued'; key: string | null; priority: number } | { error: ExecutionError };

/** Input of the `acquire_throttle` local activity: the run asks for its start in its key's window. */
export interface ThrottleRequest {
  workspace_id: string;
  workflow_id: string;
  execution_id: string;
  limit: number;
  /** The throttle's period, in milliseconds. */
  period_ms: number;
  /** The throttle key expression; absent: the whole workflow is one key. */
  key?: string;
  /** The priority expression; absent: 0. */
  priority?: string;
  input: unknown;
}

/** Input of the `acquire_workspace_place` local activity: a top-level run asks for a place in its workspace. */
export interface WorkspacePlaceRequest {
  workspace_id: string;
  execution_id: string;
  /** The priority expression; absent: 0. */
  priority?: string;
  /** What the priority sees (only sent with `priority`). */
  input?: unknown;
}

/**
 * The place a run got in its workspace: `open`, `queued` (it waits for the `workspace_admitted` signal), or
 * `unlimited` (the workspace has no cap: no row, nothing to give back); or the priority's evaluation error.
 */
export type WorkspacePlaceResult = { state: 'open' | 'queued' | 'unlimited' } | { error: ExecutionError };

/** Input of the `release_admission` local activity: the run ends, whatever way. */
export interface ReleaseRequest {
  execution_id: string;
  /** false: the run passed no gate of its definition's (`concurrency`, `throttle`); absent: it did. */
  keys?: boolean;
  /** The run's workspace, when it holds (or asked for) a place under the workspace's cap. */
  workspace_id?: string;
}

/** GET /v1/workflows/{id}/queue (docs/flow-control.md#the-queue). */
export interface QueueView {
  queued: number;
  open: number;
  keys: { key: string | null; queued: number; open: number }[];
}

/** A debounce's `period` and `max_wait`: from one second to seven days. */
export const MIN_DEBOUNCE_MS = 1_000;
export const MAX_DEBOUNCE_MS = 7 * 24 * 60 * 60 * 1000;

/** Input of the `end_debounce` local activity: a debounced run's timer fired, it asks whether to start. */
export interface EndDebounceRequest {
  execution_id: string;
}

/**
 * What `end_debounce` answers: wait `wait_ms` more (a trigger came in since, and `max_wait` is not reached),
 * or start with the last trigger's input; `coalesced` is how many triggers the run took in. The same answer
 * again on a retry of the activity: the row keeps it.
 */
export type EndDebounceResult =
  | { state: 'waiting'; wait_ms: number }
  | {
      state: 'started';
      input: unknown;
      /** The last trigger's body as received, when the input_schema changed it (defaults). */
      body?: unknown;
      /** The last trigger's event, for an event trigger. */
      event?: { id: string; name: string };
      coalesced: number;
    };
