/**
 * Inbound hooks (POST /v1/hooks/{workflow}): the sender signs the raw body with the workflow's hook
 * secret (`whsec_...`, used as UTF-8 bytes, not decoded):
 *
 *   X-Service-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">
 *
 * Several `v1=` values may be sent (one per secret) so a sender can roll its secret. The service accepts a
 * timestamp within 300 s of its clock, and answers the same signed request sent twice with the same
 * execution.
 */
import { createHmac } from 'node:crypto';

export const HOOK_SIGNATURE_HEADER = 'X-Service-Signature' as const;

/** The `X-Service-Signature` value for a raw body. `timestamp` is in Unix seconds (default: now). */
export function hookSignatureHeader(
  secret: string | readonly string[],
  rawBody: string | Uint8Array,
  timestamp: number = Math.floor(Date.now() / 1000),
): string {
  if (!Number.isInteger(timestamp) || timestamp < 0) throw new RangeError('timestamp: Unix seconds expected');
  const secrets = typeof secret === 'string' ? [secret] : secret;
  if (secrets.length === 0) throw new RangeError('secret: at least one secret expected');
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody);
  const signed = Buffer.concat([Buffer.from(`${timestamp}.`, 'utf8'), body]);
  const signatures = secrets.map(
    (s) => `v1=${createHmac('sha256', Buffer.from(s, 'utf8')).update(signed).digest('hex')}`,
  );
  return [`t=${timestamp}`, ...signatures].join(',');
}

/**
 * A complete signed request for any HTTP library: the body to send byte for byte, and its headers.
 * `input` is serialized once here, so the signature covers exactly what is sent.
 */
export function signHookRequest(
  secret: string | readonly string[],
  input: unknown,
  options: { timestamp?: number } = {},
): { body: string; headers: { 'Content-Type': 'application/json'; 'X-Service-Signature': string } } {
  const body = JSON.stringify(input ?? {});
  return {
    body,
    headers: {
      'Content-Type': 'application/json',
      [HOOK_SIGNATURE_HEADER]: hookSignatureHeader(secret, body, options.timestamp),
    },
  };
}
