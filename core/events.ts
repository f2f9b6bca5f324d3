/**
 * Events a workspace sends to the service (docs/events.md), as opposed to the execution events it sends
 * out (event-types.ts): what a name and an id may be, how large an event may be, and what an event
 * trigger's `if` sees of one.
 */

/** An event's name: `user.signup`, `payment.succeeded`, `orders:created`. */
export const EVENT_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;
export const EVENT_NAME_RULE =
  'must start with a letter or digit and hold only letters, digits, "_", ".", ":" and "-" (at most 128 characters)';

/** An event's id, given by the sender or generated (`evt_` + 24 base62 characters). */
export const EVENT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}$/;
export const EVENT_ID_RULE =
  'must start with a letter or digit and hold only letters, digits, "_", ".", ":" and "-" (at most 200 characters)';

/** The largest `data` of one event: its JSON, in UTF-8 bytes. */
export const MAX_EVENT_DATA_BYTES = 256 * 1024;

/** Events one request may carry. */
export const MAX_EVENTS_PER_REQUEST = 100;

/** An id seen in the workspace this recently is the same event again: accepted, acted on once. */
export const EVENT_ID_WINDOW_HOURS = 24;

/** What an event trigger's `if` is evaluated over (docs/events.md#event-triggers). */
export interface EventContext {
  id: string;
  name: string;
  data: Record<string, unknown>;
}
