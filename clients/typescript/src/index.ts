/** @switchyard/client: a typed client for the Switchyard API. See README.md. */
export {
  SwitchyardClient,
  SwitchyardApiClient,
  createSwitchyardClient,
  FINAL_EXECUTION_STATUSES,
  type SwitchyardClientOptions,
  type TriggerOptions,
  type WaitOptions,
  type Schemas,
  type WorkflowDefinition,
  type Workflow,
  type WorkflowListItem,
  type Execution,
  type ExecutionSummary,
  type ExecutionStatus,
  type Step,
  type Accepted,
  type RetryAccepted,
  type WebhookEndpoint,
  type CreatedWebhookEndpoint,
  type WebhookDelivery,
  type Secret,
  type ApiKey,
  type CreatedApiKey,
} from './client';
export {
  SwitchyardError,
  ExecutionWaitTimeoutError,
  parseRetryAfter,
  type ErrorCode,
  type ErrorDetail,
  type SwitchyardErrorCode,
} from './errors';
export { PageIterator, type Page } from './pagination';
export { retryingFetch, type RetryOptions } from './retry';
export {
  verifyWebhook,
  WebhookVerificationError,
  type WebhookEvent,
  type WebhookEventKind,
  type HeadersLike,
} from './webhooks';
export { hookSignatureHeader, signHookRequest, HOOK_SIGNATURE_HEADER } from './hooks';
export type { paths, components, operations } from './generated/schema';
