/**
 * Runs container tasks (branches, items) at once and waits for all of them. The first task that fails
 * calls `onFirstFailure` (the container halts the others: frame.ts Halt); once every task has settled,
 * that failure is thrown. A task that stopped because of the halt is not a failure of its own; a
 * cancellation from outside (the execution canceled) is thrown as it is.
 */
import { isCancellation } from '@temporalio/workflow';
import { Halted } from '../frame';

export async function settleAll<T>(tasks: (() => Promise<T>)[], onFirstFailure: () => void): Promise<T[]> {
  let failure: { error: unknown } | undefined;
  let cancellation: { error: unknown } | undefined;
  let halted: { error: unknown } | undefined;
  const results = await Promise.all(
    tasks.map(async (task) => {
      try {
        return await task();
      } catch (error) {
        if (error instanceof Halted) {
          halted ??= { error };
        } else if (isCancellation(error)) {
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
  // Halted by a container around this one: pass it on.
  if (halted) throw halted.error;
  return results;
}
