/**
 * Typed errors of the public API (docs/api.md#errors). Everything the API answers with a non-2xx status
 * is an AppError by the time it reaches the error middleware, which is the one place that renders them.
 */

import type { ErrorDetail } from '../core/error-detail';

export type { ErrorDetail };

/** Every error code the API answers with (docs/api.md#errors); the OpenAPI document lists them as an enum. */
export const ERROR_CODES = [
  'invalid_request',
  'invalid_input',
  'invalid_definition',
  'invalid_webhook_url',
  'unauthorized',
  'invalid_signature',
  'forbidden',
  'workflow_not_found',
  'execution_not_found',
  'webhook_not_found',
  'step_not_found',
  'api_key_not_found',
  'event_not_found',
  'schedule_not_found',
  'bulk_operation_not_found',
  'not_found',
  'method_not_allowed',
  'execution_not_failed',
  'execution_not_running',
  'delivery_in_progress',
  'step_not_waiting',
  'workflow_exists',
  'no_webhook_trigger',
  'limit_exceeded',
  'payload_too_large',
  'unsupported_media_type',
  'rate_limited',
  'internal_error',
  'temporal_unavailable',
  'database_unavailable',
  'worker_unavailable',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export interface AppErrorOptions {
  details?: ErrorDetail[];
  headers?: Record<string, string>;
  cause?: unknown;
}

export class AppError extends Error {
  readonly details: ErrorDetail[];
  readonly headers: Record<string, string>;

  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    options: AppErrorOptions = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'AppError';
    this.details = options.details ?? [];
    this.headers = options.headers ?? {};
  }
}

export function invalidRequest(message: string, details: ErrorDetail[] = []): AppError {
  return new AppError(400, 'invalid_request', message, { details });
}

export function notFound(
  code: Extract<
    ErrorCode,
    | 'workflow_not_found'
    | 'execution_not_found'
    | 'webhook_not_found'
    | 'step_not_found'
    | 'api_key_not_found'
    | 'event_not_found'
    | 'bulk_operation_not_found'
    | 'not_found'
  >,
  message: string,
): AppError {
  return new AppError(404, code, message);
}

/**
 * 409 `limit_exceeded`: creating one more of `limit` would pass the workspace's maximum
 * (docs/operations.md#workspace-limits). The detail names the limit and its maximum for programs.
 */
export function limitExceeded(limit: string, max: number, what: string): AppError {
  return new AppError(
    409,
    'limit_exceeded',
    `This workspace has its maximum of ${max} ${what}; delete one first, or ask the operator to raise the limit '${limit}'.`,
    { details: [{ path: '', message: `at most ${max} ${what}`, limit, max }] },
  );
}

export function databaseUnavailable(cause: unknown): AppError {
  return new AppError(
    503,
    'database_unavailable',
    'The database is unavailable; the request did nothing. Try again shortly.',
    {
      cause,
      headers: { 'Retry-After': '1' },
    },
  );
}

export function temporalUnavailable(cause: unknown): AppError {
  return new AppError(
    503,
    'temporal_unavailable',
    'Temporal is unavailable; the request did nothing. Try again shortly.',
    {
      cause,
      headers: { 'Retry-After': '1' },
    },
  );
}

/**
 * Seconds a client waits before asking again when no worker serves a run: starting a worker takes an
 * operator, so asking again at once only adds load.
 */
const WORKER_RETRY_AFTER_S = 10;

/**
 * 503 `worker_unavailable`: no worker of the build a run needs is running, or none took the request in
 * time (docs/api.md#when-no-worker-serves-a-run). `message` names the build and says what became of the
 * request; the detail carries the build for programs.
 */
export function workerUnavailable(buildId: string | undefined, message: string): AppError {
  return new AppError(503, 'worker_unavailable', message, {
    details: buildId
      ? [{ path: '', message: `the request needs a worker of build ${buildId}`, build_id: buildId }]
      : [],
    headers: { 'Retry-After': String(WORKER_RETRY_AFTER_S) },
  });
}
