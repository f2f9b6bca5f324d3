/**
 * `parallel` (docs/definitions.md#composition): every branch runs at once, each in a cancellation scope of
 * its own. A branch that fails fails the step and cancels the others, unless it says `on_error: "continue"`
 * (then its entry is null). Output: {<branch id>: <output of its last step that ran>}.
 */
import { CancellationScope } from '@temporalio/workflow';
import type { ParallelStep } from '../../../core/definitions/schema';
import { childFrame, StepFailure, type Frame, type Runner } from '../frame';
import { settleAll } from './settle';

export async function runParallel(runner: Runner, frame: Frame, step: ParallelStep): Promise<unknown> {
  const scopes = step.branches.map(() => new CancellationScope());
  const outputs = await settleAll(
    step.branches.map((branch, i) => async () => {
      try {
        const outcome = await scopes[i]!.run(() =>
          runner.runList(childFrame(frame, step.id, branch.id), branch.steps),
        );
        return outcome.output;
      } catch (error) {
        if (error instanceof StepFailure && branch.on_error === 'continue') return null;
        throw error;
      }
    }),
    // The first failure (or stop) ends the step: the other branches are canceled.
    () => scopes.forEach((scope) => scope.cancel()),
  );
  // Branch ids match the step id pattern: never `__proto__`, so plain assignment defines them.
  const output: Record<string, unknown> = {};
  step.branches.forEach((branch, i) => (output[branch.id] = outputs[i]));
  return output;
}
