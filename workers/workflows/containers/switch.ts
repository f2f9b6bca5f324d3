/**
 * `switch` (docs/definitions.md#composition): the first case whose `when` holds runs its steps (evaluate_control
 * chose it); none: `default`, or nothing. Output: {case: <case id> | "default" | null, output: <its last step's output>}.
 */
import type { SwitchStep } from '../../../core/definitions/schema';
import { childFrame, type Frame, type Runner } from '../frame';

export async function runSwitch(
  runner: Runner,
  frame: Frame,
  step: SwitchStep,
  chosen: string | null,
): Promise<{ case: string | null; output: unknown }> {
  if (chosen === null) return { case: null, output: null };
  const steps = chosen === 'default' ? step.default : step.cases.find((c) => c.id === chosen)?.steps;
  if (!steps) throw new Error(`Switch "${step.id}" has no case "${chosen}"`);
  const outcome = await runner.runList(childFrame(frame, step.id, chosen), steps);
  return { case: chosen, output: outcome.output };
}
