/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): `webhook-signature: v1,<base64 of
 * HMAC-SHA256("{id}.{timestamp}.{body}")>`, keyed by the base64 part of the endpoint's `whsec_` secret.
 */
import { createHmac, randomBytes } from 'node:crypto';

/**
 * A new `whsec_` signing secret (24 random bytes, base64): an outbound endpoint's and an inbound hook's
 * alike. Only the HMAC key made from it differs (docs/webhooks.md#signatures,
 * docs/webhooks.md#signing-a-request).
 */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

export function signatureOf(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The three headers of one attempt: the same id on every attempt, a fresh timestamp and signature. */
export function webhookHeaders(
  secret: string,
  id: string,
  body: string,
  now: Date = new Date(),
): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatureOf(secret, id, timestamp, body),
  };
}
