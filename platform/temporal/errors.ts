/**
 * Temporal failures as contract errors: a server that is down, overloaded or too slow answers 503
 * `temporal_unavailable` (never a hang: every call runs under a deadline), anything else propagates.
 */
import { isGrpcServiceError, WorkflowNotFoundError, type ConnectionLike } from '@temporalio/client';
import { status as grpcStatus } from '@grpc/grpc-js';
import { temporalUnavailable } from '../errors';

const UNAVAILABLE_CODES = new Set<number>([
  grpcStatus.UNAVAILABLE,
  grpcStatus.DEADLINE_EXCEEDED,
  grpcStatus.RESOURCE_EXHAUSTED,
  grpcStatus.CANCELLED,
]);
const UNAVAILABLE_MESSAGE =
  /UNAVAILABLE|DEADLINE_EXCEEDED|Connection refused|transport error|tcp connect error|failed to connect|connection reset|broken pipe/i;

export function isTemporalUnavailable(error: unknown): boolean {
  if (error instanceof WorkflowNotFoundError) return false;
  if (isGrpcServiceError(error)) return UNAVAILABLE_CODES.has(error.code);
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'number' && UNAVAILABLE_CODES.has(code)) return true;
  const cause = (error as { cause?: unknown } | null)?.cause;
  if (cause && cause !== error && isTemporalUnavailable(cause)) return true;
  return error instanceof Error && UNAVAILABLE_MESSAGE.test(error.message);
}

/** True for "no such workflow" however the client reports it (typed error, or a bare gRPC NOT_FOUND). */
export function isWorkflowNotFound(error: unknown): boolean {
  return error instanceof WorkflowNotFoundError || grpcCodeOf(error) === grpcStatus.NOT_FOUND;
}

/** gRPC status of a Temporal error, when it has one. */
export function grpcCodeOf(error: unknown): number | undefined {
  for (let e: unknown = error; e; e = (e as { cause?: unknown }).cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'number') return code;
    if (e === (e as { cause?: unknown }).cause) break;
  }
  return undefined;
}

/**
 * Default deadline of one API call to Temporal. The client retries an unreachable server inside this
 * window (so a short blip is invisible), then the API answers 503.
 */
export const TEMPORAL_CALL_TIMEOUT_MS = 5_000;

/** Runs Temporal calls under a deadline and turns "Temporal is not there" into 503. */
export async function callTemporal<T>(
  connection: ConnectionLike,
  fn: () => Promise<T>,
  timeoutMs = TEMPORAL_CALL_TIMEOUT_MS,
): Promise<T> {
  try {
    return await connection.withDeadline(Date.now() + timeoutMs, fn);
  } catch (error) {
    if (isTemporalUnavailable(error)) throw temporalUnavailable(error);
    throw error;
  }
}
