/**
 * What a run keeps of its definition version: the snapshot in its workflow input (ExecutionInput.workflow),
 * which the start event of every run's history stores again. It leaves out what nothing reads after the
 * start: the definition's `description` and `trigger` (the run's own trigger is ExecutionInput.trigger) and
 * each step's `description`, so that long descriptions cost nothing per run. The `input_schema` stays: a
 * retry checks a corrected input against it (src/executions/retry.ts), also once the version is deleted.
 * Histories written before keep all of it; the code that reads a run ignores what it does not use.
 */
import type { Definition, Step } from './schema';

export function runDefinition(definition: Definition): Definition {
  const { description: _description, trigger: _trigger, ...kept } = definition;
  return { ...kept, steps: kept.steps.map(runStep) };
}

function runStep(step: Step): Step {
  const { description: _description, ...kept } = step;
  switch (kept.kind) {
    case 'parallel':
      return {
        ...kept,
        branches: kept.branches.map((branch) => ({ ...branch, steps: branch.steps.map(runStep) })),
      };
    case 'map':
    case 'loop':
      return { ...kept, steps: kept.steps.map(runStep) };
    case 'switch':
      return {
        ...kept,
        cases: kept.cases.map((c) => ({ ...c, steps: c.steps.map(runStep) })),
        ...(kept.default && { default: kept.default.map(runStep) }),
      };
    default:
      return kept;
  }
}
