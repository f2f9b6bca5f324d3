/**
 * `parallel` (docs/definitions.md#composition): every branch runs at once. A branch that fails fails the
 * step, and the other branches start no further step (frame.ts Halt), unless it says `on_error: "continue"`
 * (then its entry is null). Output: {<branch id>: <output of its last step that ran>}. A retry keeps the
 * branches that succeeded in the failed run (their outputs) and runs the others again.
 */
import type { ParallelStep } from '../../../core/definitions/schema';
import { childFrame, Halt, keptRunsOf, StepFailure, type Frame, type Runner } from '../frame';
import { settleAll } from './settle';

export async function runParallel(runner: Runner, frame: Frame, step: ParallelStep): Promise<unknown> {
  const halt = new Halt(frame.halt);
  const kept = new Map(keptRunsOf(runner.run, frame, step.id)?.runs.map((run) => [run.key, run]));
  const outputs = await settleAll(
    step.branches.map((branch) => async () => {
      const keptBranch = kept.get(branch.id);
      if (keptBranch) return keptBranch.output;
      try {
        const outcome = await runner.runList(childFrame(frame, step.id, branch.id, {}, halt), branch.steps);
        return outcome.output;
      } catch (error) {
        if (error instanceof StepFailure && branch.on_error === 'continue') return null;
        throw error;
      }
    }),
    // The first failure (or stop) ends the step: the other branches start nothing more.
    () => halt.stop(),
  );
  // Branch ids match the step id pattern: never `__proto__`, so plain assignment defines them.
  const output: Record<string, unknown> = {};
  step.branches.forEach((branch, i) => (output[branch.id] = outputs[i]));
  return output;
}
