/**
 * The inbound hook signature (docs/webhooks.md#signing-a-request):
 *
 *   X-Service-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">
 *
 * keyed with the workflow's whole hook secret (`whsec_...`) as UTF-8 bytes. Several `v1=` values may be
 * sent (one match suffices, so a sender can roll its secret); unknown schemes (`v0=`, ...) are ignored.
 * The timestamp must be within 300 s of now, either way. Every comparison is constant-time over bytes.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'X-Service-Signature';
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/** Longer headers are malformed: bounds the work an unauthenticated request can cause. */
const MAX_HEADER_LENGTH = 8192;
const TIMESTAMP = /^\d{1,15}$/;
const HEX = /^(?:[0-9a-fA-F]{2})+$/;

export interface ParsedSignature {
  /** The `t` value exactly as sent: it is part of the signed content. */
  timestamp: string;
  /** The decoded `v1` values (hex that is not well-formed is dropped: it can match nothing). */
  signatures: Buffer[];
}

/** Parses the header; undefined when it is missing or malformed (no single numeric `t`, no `v1`). */
export function parseSignatureHeader(header: string | undefined): ParsedSignature | undefined {
  if (header === undefined || header.length === 0 || header.length > MAX_HEADER_LENGTH) return undefined;
  let timestamp: string | undefined;
  let v1Count = 0;
  const signatures: Buffer[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) return undefined;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      if (timestamp !== undefined || !TIMESTAMP.test(value)) return undefined;
      timestamp = value;
    } else if (key === 'v1') {
      v1Count += 1;
      if (HEX.test(value)) signatures.push(Buffer.from(value, 'hex'));
    }
  }
  if (timestamp === undefined || v1Count === 0) return undefined;
  return { timestamp, signatures };
}

/** The content that is signed: "<t>.<raw body>". */
export function signedContent(timestamp: string, rawBody: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${timestamp}.`, 'utf8'), rawBody]);
}

/** The hex HMAC-SHA256 a sender puts in `v1=`. */
export function computeSignature(secret: string, timestamp: string, rawBody: Buffer): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(signedContent(timestamp, rawBody))
    .digest('hex');
}

/** A complete header value for a body (used by tests and examples). */
export function signatureHeader(secret: string, rawBody: Buffer | string, timestamp: number): string {
  const raw = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
  return `t=${timestamp},v1=${computeSignature(secret, String(timestamp), raw)}`;
}

/**
 * Constant-time equality of two byte strings. Different lengths are unequal (the expected length, 32
 * bytes, is public), still after a comparison of the same cost so the answer's timing says nothing else.
 */
export function constantTimeEqual(a: Buffer, b: Buffer): boolean {
  if (a.length !== b.length) {
    timingSafeEqual(a, a);
    return false;
  }
  return timingSafeEqual(a, b);
}

export type VerifyResult =
  | { ok: true; /** Index of the secret that matched. */ index: number; timestamp: string }
  | { ok: false; reason: 'missing' | 'malformed' | 'stale' | 'mismatch' };

/**
 * Checks a header against the raw body for each candidate secret (a workflow id may exist in several
 * workspaces: the signature decides which one is meant). Every candidate and every `v1` is compared, so
 * the time taken does not depend on which one matched.
 */
export function verifySignature(options: {
  header: string | undefined;
  rawBody: Buffer;
  secrets: string[];
  /** Unix seconds. */
  now?: number;
  toleranceSeconds?: number;
}): VerifyResult {
  if (options.header === undefined || options.header === '') return { ok: false, reason: 'missing' };
  const parsed = parseSignatureHeader(options.header);
  if (!parsed) return { ok: false, reason: 'malformed' };
  const now = options.now ?? Math.floor(Date.now() / 1000);
  const tolerance = options.toleranceSeconds ?? SIGNATURE_TOLERANCE_SECONDS;
  if (Math.abs(now - Number(parsed.timestamp)) > tolerance) return { ok: false, reason: 'stale' };
  const content = signedContent(parsed.timestamp, options.rawBody);
  let index = -1;
  options.secrets.forEach((secret, i) => {
    const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(content).digest();
    for (const candidate of parsed.signatures) {
      if (constantTimeEqual(expected, candidate) && index < 0) index = i;
    }
  });
  return index < 0 ? { ok: false, reason: 'mismatch' } : { ok: true, index, timestamp: parsed.timestamp };
}

/**
 * The idempotency key of a signed request: the same signed content is the same event, so a replay within
 * the tolerance window answers with the first request's execution (keys are scoped per workflow).
 */
export function replayKey(timestamp: string, rawBody: Buffer): string {
  return `hook:${createHash('sha256').update(signedContent(timestamp, rawBody)).digest('hex')}`;
}
