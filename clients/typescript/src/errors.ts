/** The errors the client throws: the service's error body as a typed error, and a wait that ran out. */
import type { components } from './generated/schema';

/** The service's machine-readable error codes, as its OpenAPI document lists them. */
export type ErrorCode = components['schemas']['Error']['error']['code'];

/**
 * A `SwitchyardError`'s code: one of the service's codes, or `http_<status>` for an answer without the
 * error body. New codes may be added to the service before a client is regenerated, hence the open end
 * (`string & {}` keeps editor completion for the known ones).
 */
export type SwitchyardErrorCode = ErrorCode | `http_${number}` | (string & {});

/**
 * One entry of `error.details`: where the problem is (a JSON pointer) and what it is; on a 409
 * `limit_exceeded`, also the workspace limit that was reached and its maximum.
 */
export interface ErrorDetail {
  path: string;
  message: string;
  limit?: string;
  max?: number;
}

/**
 * Any answer of the service that is not a 2xx. `code` is the contract's machine-readable code
 * (`workflow_not_found`, `invalid_input`, `rate_limited`, ...); `requestId` is the `X-Request-Id` to quote
 * when asking for help. An answer without the error body (a proxy's page, an empty 431) still yields one:
 * its code is `http_<status>` and its message the body's first characters.
 */
export class SwitchyardError extends Error {
  override readonly name = 'SwitchyardError';
  /** The HTTP status of the answer. */
  readonly status: number;
  readonly code: SwitchyardErrorCode;
  readonly requestId: string | undefined;
  readonly details: ErrorDetail[];
  /** Seconds the service asked to wait (429, 503), when it said. */
  readonly retryAfterSeconds: number | undefined;

  constructor(options: {
    status: number;
    code: SwitchyardErrorCode;
    message: string;
    requestId?: string | undefined;
    details?: ErrorDetail[];
    retryAfterSeconds?: number | undefined;
  }) {
    super(options.message);
    this.status = options.status;
    this.code = options.code;
    this.requestId = options.requestId;
    this.details = options.details ?? [];
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  /** `request_id` as the error body spells it. */
  get request_id(): string | undefined {
    return this.requestId;
  }

  /** The error of an answer, from its body as openapi-fetch parsed it (JSON, or text when not JSON). */
  static fromResponse(response: Response, body: unknown): SwitchyardError {
    const requestId = response.headers.get('x-request-id') ?? undefined;
    const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
    const error = isErrorBody(body) ? body.error : undefined;
    if (error) {
      return new SwitchyardError({
        status: response.status,
        code: error.code,
        message: error.message,
        requestId: error.request_id ?? requestId,
        details: Array.isArray(error.details) ? error.details : [],
        retryAfterSeconds: retryAfter,
      });
    }
    const text = typeof body === 'string' ? body.trim().slice(0, 200) : '';
    return new SwitchyardError({
      status: response.status,
      code: `http_${response.status}`,
      message: text || `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`,
      requestId,
      retryAfterSeconds: retryAfter,
    });
  }
}

/** waitForExecution ran out of time; the execution goes on. */
export class ExecutionWaitTimeoutError extends Error {
  override readonly name = 'ExecutionWaitTimeoutError';
  constructor(
    readonly executionId: string,
    /** The status last read. */
    readonly lastStatus: string | undefined,
    readonly timeoutMs: number,
  ) {
    super(
      `Execution ${executionId} did not reach a final status within ${timeoutMs} ms (last status: ${lastStatus ?? 'unknown'}).`,
    );
  }
}

interface ErrorBody {
  error: { code: string; message: string; request_id?: string; details?: ErrorDetail[] };
}

function isErrorBody(body: unknown): body is ErrorBody {
  if (typeof body !== 'object' || body === null || !('error' in body)) return false;
  const error = body.error;
  return (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as { code?: unknown }).code === 'string' &&
    typeof (error as { message?: unknown }).message === 'string'
  );
}

/** `Retry-After` in seconds: either delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}
