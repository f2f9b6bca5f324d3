/** Identifiers and keys: prefixed, random, base62 (URL- and shell-safe, easy to copy). */
import { randomBytes, createHash } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Uniform random base62 text (rejection sampling, so no character is more likely than another). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export const newExecutionId = (): string => `ex_${randomBase62(24)}`;
export const newApiKeyId = (): string => `key_${randomBase62(20)}`;
export const newWorkspaceId = (): string => `ws_${randomBase62(16)}`;
/** An API key: `sk_` + 40 base62 characters (about 238 bits). */
export const newApiKey = (): string => `sk_${randomBase62(40)}`;

/**
 * `length` (at most 32) base62 characters of the SHA-256 of `key`, one per byte: stable, and as
 * unguessable as `key` (a byte modulo 62 leans slightly towards the first characters: no matter here).
 */
function base62OfHash(key: string, length: number): string {
  const digest = createHash('sha256').update(key).digest();
  let out = '';
  for (let i = 0; i < length; i++) out += BASE62[digest[i]! % 62];
  return out;
}

/**
 * The execution id prefix of a schedule's runs: stable per `key` (the schedule), `ex_` + 20 base62
 * digits of its SHA-256 (about 119 bits). Temporal appends each run's nominal start time to it.
 */
export function scheduledExecutionIdPrefix(key: string): string {
  let n = BigInt(`0x${sha256Hex(key)}`);
  let out = '';
  for (let i = 0; i < 20; i++) {
    out += BASE62[Number(n % 62n)];
    n /= 62n;
  }
  return `ex_${out}`;
}

/**
 * The execution id of a signed inbound request (docs/webhooks.md#what-the-service-checks): the same for the
 * same signed content to the same workflow, so that a replay starts nothing new — Temporal refuses a second
 * run with the same workflow id — without a row per request. `ex_` + 24 base62 characters, like a trigger's
 * random ids.
 */
export function hookExecutionId(workspaceId: string, workflowId: string, replayKey: string): string {
  return `ex_${base62OfHash(`hook\u0000${workspaceId}\u0000${workflowId}\u0000${replayKey}`, 24)}`;
}

/** A generated event id (docs/events.md): `evt_` + 24 base62 characters. */
export const newEventId = (): string => `evt_${randomBase62(24)}`;

/**
 * The execution an event trigger starts for one event (docs/events.md#event-triggers): the same for the
 * same workspace, workflow and event id, so that however often the event is dispatched, Temporal (which
 * refuses a second run of a workflow id) starts at most one. `ex_` + 24 base62 characters.
 */
export function eventExecutionId(workspaceId: string, workflowId: string, eventId: string): string {
  return `ex_${base62OfHash(`event\u0000${workspaceId}\u0000${workflowId}\u0000${eventId}`, 24)}`;
}

/** The execution a bulk operation's rerun of `sourceId` starts: derived, so that doing it again starts nothing. */
export function rerunExecutionId(workspaceId: string, operationId: string, sourceId: string): string {
  return `ex_${base62OfHash(`rerun\u0000${workspaceId}\u0000${operationId}\u0000${sourceId}`, 24)}`;
}

/** A bulk operation's id: `op_` + 24 base62 characters. */
export function newBulkOperationId(): string {
  return `op_${randomBase62(24)}`;
}

/**
 * An execution id: `ex_` + base62 (a trigger's random id, or a schedule's prefix), optionally followed
 * by the suffix Temporal appends to a scheduled run's workflow id: `-` and the nominal start time in
 * RFC 3339, UTC, whole seconds (`ex_...-2026-11-21T21:40:00Z`).
 */
export const EXECUTION_ID_PATTERN =
  /^ex_[A-Za-z0-9]{1,64}(-[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]Z)?$/;
export const API_KEY_PATTERN = /^sk_[A-Za-z0-9]{32,128}$/;

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}
