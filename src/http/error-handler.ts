/**
 * The one place errors become responses (docs/api.md#errors): AppErrors render as they are; anything else is
 * a 500 `internal_error` whose details stay in the log, never in the body.
 */
import type Koa from 'koa';
import { AppError, type ErrorDetail } from '../../platform/errors';
import type { Logger } from '../../platform/logger';

export interface ErrorBody {
  error: { code: string; message: string; request_id: string; details: ErrorDetail[] };
}

function fromHttpError(error: unknown): AppError | undefined {
  const { status, expose, message } = (error ?? {}) as {
    status?: unknown;
    expose?: unknown;
    message?: unknown;
  };
  if (typeof status !== 'number' || status < 400 || status > 599 || status >= 500) return undefined;
  // Errors from Koa or Node's HTTP parsing (e.g. a malformed request) that carry a client status.
  const code =
    status === 404
      ? 'not_found'
      : status === 405
        ? 'method_not_allowed'
        : status === 413
          ? 'payload_too_large'
          : status === 415
            ? 'unsupported_media_type'
            : 'invalid_request';
  return new AppError(
    code === 'invalid_request' ? 400 : status,
    code,
    expose && typeof message === 'string' ? message : 'The request is invalid.',
  );
}

export function errorHandler(logger: Logger): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      const appError =
        error instanceof AppError
          ? error
          : (fromHttpError(error) ??
            new AppError(
              500,
              'internal_error',
              'Something went wrong on our side; quote the request id to support.',
            ));
      const requestId = String(ctx.state['requestId'] ?? '');
      if (appError.status >= 500) {
        logger.error(
          { err: appError.cause ?? error, requestId, method: ctx.method, path: ctx.path },
          appError.message,
        );
      }
      ctx.status = appError.status;
      ctx.set(appError.headers);
      // Every 429 and 503 says when to come back (the OpenAPI document promises Retry-After on both).
      if ((appError.status === 429 || appError.status === 503) && !ctx.response.get('Retry-After'))
        ctx.set('Retry-After', '1');
      const body: ErrorBody = {
        error: {
          code: appError.code,
          message: appError.message,
          request_id: requestId,
          details: appError.details,
        },
      };
      ctx.body = body;
    }
  };
}
