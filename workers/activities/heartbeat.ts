/**
 * Heartbeats while an activity waits on the network: they keep Temporal informed that the attempt is
 * alive, and they are how a cancellation reaches the activity (Context.cancellationSignal fires). A
 * local activity does not heartbeat (the worker itself runs and cancels it).
 */
import { CancelledFailure, Context } from '@temporalio/activity';

const HEARTBEAT_EVERY_MS = 1000;

export async function whileHeartbeating<T>(work: () => Promise<T>): Promise<T> {
  const context = Context.current();
  if (context.info.isLocal) return work();
  context.heartbeat();
  const timer = setInterval(() => context.heartbeat(), HEARTBEAT_EVERY_MS);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

/**
 * When the attempt was canceled (the execution was), the way out is the cancellation itself, so that
 * Temporal records the step as canceled rather than failed.
 */
export function rethrowIfCanceled(): void {
  const signal = Context.current().cancellationSignal;
  if (!signal.aborted) return;
  throw signal.reason instanceof CancelledFailure
    ? signal.reason
    : new CancelledFailure('The step was canceled.');
}
