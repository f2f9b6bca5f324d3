/**
 * Which step kinds are leaves and which hold steps. Apart from the schema (which imports zod), so that
 * workflow code can import it without bundling zod.
 */
import type { LeafStep, Step } from './schema';

const LEAF_KINDS: ReadonlySet<Step['kind']> = new Set(['rules', 'connector', 'ai', 'approval']);

/** Whether the `run_steps` local activity runs this step (as opposed to a container or a sub-workflow). */
export function isLeafStep(step: Step): step is LeafStep {
  return LEAF_KINDS.has(step.kind);
}

/** The step lists a step holds: a parallel step's branches, a map's or loop's steps, a switch's cases and default. */
export function innerStepLists(step: Step): Step[][] {
  switch (step.kind) {
    case 'parallel':
      return step.branches.map((branch) => branch.steps);
    case 'map':
    case 'loop':
      return [step.steps];
    case 'switch':
      return [...step.cases.map((c) => c.steps), ...(step.default ? [step.default] : [])];
    default:
      return [];
  }
}

/** The step with this id anywhere in `steps`, nested ones included (ids are unique across a definition). */
export function findStep(steps: Step[], id: string): Step | undefined {
  for (const step of steps) {
    if (step.id === id) return step;
    for (const list of innerStepLists(step)) {
      const found = findStep(list, id);
      if (found) return found;
    }
  }
  return undefined;
}
