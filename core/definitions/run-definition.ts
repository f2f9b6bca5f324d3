/**
 * What a run keeps of its definition version: the snapshot in its workflow input (ExecutionInput.workflow),
 * which the start event of every run's history stores again. It leaves out what nothing reads after the
 * start: the definition's `description`, its `input_schema` (the API and the sub-workflow step check the
 * input before the start; a retry with a corrected input reads the version from the database:
 * src/executions/retry.ts), its `trigger` (the run's own trigger is ExecutionInput.trigger) and each step's
 * `description`. Long descriptions and large schemas then cost nothing per run. Histories written before
 * keep all of it; the code that reads a run ignores what it does not use.
 */
import type { Definition, Step } from './schema';

export function runDefinition(definition: Definition): Definition {
  const { description: _description, input_schema: _schema, trigger: _trigger, ...kept } = definition;
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
