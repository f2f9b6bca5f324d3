/**
 * Outbound webhooks: the service signs every delivery per the Standard Webhooks specification
 * (`webhook-id`, `webhook-timestamp`, `webhook-signature`), so verification is the `standardwebhooks`
 * library's; this module only adapts header shapes and types the payload.
 */
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { components } from './generated/schema';

export { WebhookVerificationError };

/** The body of a delivery, as the OpenAPI document's `webhooks` section describes it. */
export type WebhookEvent = components['schemas']['EventPayload'];

/** `execution.started`, `execution.completed`, ...: the events an endpoint subscribes to. */
export type WebhookEventKind = WebhookEvent['event'];

/** Headers as Node's http module, fetch's `Headers` or a plain object give them. */
export type HeadersLike = Headers | Record<string, string | string[] | undefined>;

/**
 * Checks a delivery's signature and timestamp (5 minutes of tolerance) against the endpoint's `whsec_`
 * secret, and returns the parsed event. Pass the raw body exactly as received: a re-serialized JSON object
 * does not verify. Throws `WebhookVerificationError` when the delivery is not authentic.
 */
export function verifyWebhook(rawBody: string | Buffer, headers: HeadersLike, secret: string): WebhookEvent {
  return new Webhook(secret).verify(rawBody, standardHeaders(headers)) as WebhookEvent;
}

function standardHeaders(headers: HeadersLike): Record<string, string> {
  const out: Record<string, string> = {};
  const names = ['webhook-id', 'webhook-timestamp', 'webhook-signature'];
  if (typeof (headers as Headers).get === 'function') {
    for (const name of names) {
      const value = (headers as Headers).get(name);
      if (value !== null) out[name] = value;
    }
    return out;
  }
  for (const [name, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    const lower = name.toLowerCase();
    if (!names.includes(lower) || value === undefined) continue;
    out[lower] = Array.isArray(value) ? value.join(' ') : value;
  }
  return out;
}
