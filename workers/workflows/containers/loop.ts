/**
 * `loop` (docs/definitions.md#composition): runs its steps, then asks evaluate_control whether `until` holds
 * (over that iteration's steps); repeats until it does, with `iteration` (0-based) in the context. Reaching
 * `max_iterations` fails the step with `loop_limit_exceeded`.
 * Output: {iterations: <how many ran>, output: <last iteration's last step output>}.
 */
import type { LoopStep } from '../../../core/definitions/schema';
import { STEP_ERROR_CODES } from '../../../core/execution-types';
import { childFrame, errorPath, StepFailure, type Frame, type Runner } from '../frame';

export async function runLoop(
  runner: Runner,
  frame: Frame,
  step: LoopStep,
): Promise<{ iterations: number; output: unknown }> {
  let output: unknown = null;
  for (let iteration = 0; iteration < step.max_iterations; iteration++) {
    const iterationFrame = childFrame(frame, step.id, String(iteration), { iteration });
    output = (await runner.runList(iterationFrame, step.steps)).output;
    const control = await runner.control(iterationFrame, step, 'until');
    if (control.error)
      throw new StepFailure({ step: step.id, path: errorPath(frame, step.id), ...control.error });
    if (control.done) return { iterations: iteration + 1, output };
  }
  throw new StepFailure({
    step: step.id,
    path: errorPath(frame, step.id),
    code: STEP_ERROR_CODES.loopLimitExceeded,
    message: `Step "${step.id}" ran ${step.max_iterations} iterations (its max_iterations) and \`until\` still did not hold.`,
  });
}
