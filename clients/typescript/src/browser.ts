/**
 * @switchyard/client/browser: the client for web pages (the workspace console). Everything of the main
 * entry but what needs Node: inbound-hook signing (node:crypto) and webhook verification, which belong
 * on servers anyway. `SwitchyardApiClient` is `SwitchyardClient` without `hooks`.
 */
export {
  SwitchyardApiClient,
  EXECUTION_STATUSES,
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
  type StepRun,
  type StepRunStatus,
  type Accepted,
  type RetryAccepted,
  type WebhookEndpoint,
  type CreatedWebhookEndpoint,
  type WebhookDelivery,
  type Secret,
  type ApiKey,
  type CreatedApiKey,
  type WorkflowVersion,
  type WorkflowQueue,
  type Workspace,
  type Event,
  type EventInput,
  type EventsAccepted,
  type Schedule,
  type BackfillAccepted,
  type BulkOperation,
  type BulkOperationRequest,
  type BulkOperationAccepted,
  type BulkOperationDryRun,
} from './api-client';
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
export type { paths, components, operations } from './generated/schema';
