/**
 * Runs container tasks (branches, items) at once and waits for all of them. The first task that fails
 * calls `onFirstFailure` (the container cancels the rest); once every task has settled, that failure is
 * thrown. A task canceled by that call is not a failure of its own; a cancellation from outside (the
 * execution canceled) is thrown as it is.
 */
import { isCancellation } from '@temporalio/workflow';

export async function settleAll<T>(tasks: (() => Promise<T>)[], onFirstFailure: () => void): Promise<T[]> {
  let failure: { error: unknown } | undefined;
  let cancellation: { error: unknown } | undefined;
  const results = await Promise.all(
    tasks.map(async (task) => {
      try {
        return await task();
      } catch (error) {
        if (isCancellation(error)) {
          cancellation ??= { error };
        } else if (!failure) {
          failure = { error };
          onFirstFailure();
        }
        return undefined as T;
      }
    }),
  );
  if (failure) throw failure.error;
  if (cancellation) throw cancellation.error;
  return results;
}
