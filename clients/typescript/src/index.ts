/**
 * @switchyard/client: a typed client for the Switchyard API. See README.md. Everything of the browser
 * entry, plus what needs Node: `SwitchyardClient` (with inbound-hook signing) and webhook verification.
 */
export * from './browser';
export { SwitchyardClient, createSwitchyardClient } from './client';
export {
  verifyWebhook,
  WebhookVerificationError,
  type WebhookEvent,
  type WebhookEventKind,
  type HeadersLike,
} from './webhooks';
export { hookSignatureHeader, signHookRequest, HOOK_SIGNATURE_HEADER } from './hooks';
