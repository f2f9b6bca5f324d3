/**
 * Walking a definition's steps into the containers that hold them (docs/definitions.md#composition). Apart
 * from the schema (which imports zod), like step-kinds.ts.
 */
import type { Step } from './schema';

/** The step lists a step holds: a parallel's branches, a map's or loop's steps, a switch's cases and default. */
export function childStepLists(step: Step): Step[][] {
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

/** The step of this id anywhere in the list, nested ones included (ids are unique across a definition). */
export function findStep(steps: readonly Step[], id: string): Step | undefined {
  for (const step of steps) {
    if (step.id === id) return step;
    for (const list of childStepLists(step)) {
      const found = findStep(list, id);
      if (found) return found;
    }
  }
  return undefined;
}

/** Whether an approval step is among these steps, nested ones included. */
export function holdsApproval(steps: readonly Step[]): boolean {
  return steps.some((step) => step.kind === 'approval' || childStepLists(step).some(holdsApproval));
}
