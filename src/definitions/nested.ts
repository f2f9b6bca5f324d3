/**
 * The steps of a definition wherever they are nested (docs/definitions.md#composition), each with its JSON
 * pointer and its place among the step lists, and which steps an expression at a place may read.
 *
 * A place is a trail of levels from the definition's own list down to the step's list: at each level the
 * list's JSON pointer and a position in it. An expression reads what ran before it in its own list and,
 * around it, what ran before each of its containers (the worker gives a container's runs a copy of what
 * its list had seen: workers/workflows/frame.ts). Outside a container, only the container is visible.
 */
import type { Definition, Step } from '../../core/definitions/schema';

/** One level of a place: a step list (its JSON pointer), a position in it, and the step there. */
export interface Level {
  list: string;
  index: number;
  /** The step at `index`; absent for a place after the last step (a loop's `until`, the definition's output). */
  step?: Step;
}

/** Where something is, from the definition's own list down. */
export type Trail = readonly Level[];

export interface PlacedStep {
  step: Step;
  /** Its JSON pointer, e.g. /steps/2/branches/0/steps/1. */
  pointer: string;
  /** Its place; its nesting level is the trail's length (top-level steps are level 1). */
  trail: Trail;
}

/** The step lists a container holds, with their pointers relative to the step (none for other kinds). */
export function stepLists(step: Step): { at: string; steps: Step[] }[] {
  switch (step.kind) {
    case 'parallel':
      return step.branches.map((branch, i) => ({ at: `/branches/${i}/steps`, steps: branch.steps }));
    case 'map':
    case 'loop':
      return [{ at: '/steps', steps: step.steps }];
    case 'switch':
      return [
        ...step.cases.map((c, i) => ({ at: `/cases/${i}/steps`, steps: c.steps })),
        ...(step.default ? [{ at: '/default', steps: step.default }] : []),
      ];
    default:
      return [];
  }
}

/** Every step of the definition in the order it is written: a container, then the steps it holds. */
export function placeSteps(definition: Definition): PlacedStep[] {
  const placed: PlacedStep[] = [];
  const visit = (steps: Step[], list: string, around: Trail) => {
    steps.forEach((step, index) => {
      const pointer = `${list}/${index}`;
      const trail = [...around, { list, index, step }];
      placed.push({ step, pointer, trail });
      for (const inner of stepLists(step)) visit(inner.steps, `${pointer}${inner.at}`, trail);
    });
  };
  visit(definition.steps, '/steps', []);
  return placed;
}

/** "6 steps", or with nested ones "7 steps (4 top-level, 3 nested)": how the step limits count them. */
export function describeStepCount(placed: readonly PlacedStep[]): string {
  const nested = placed.filter((place) => place.trail.length > 1).length;
  const all = `${placed.length} step${placed.length === 1 ? '' : 's'}`;
  return nested === 0 ? all : `${all} (${placed.length - nested} top-level, ${nested} nested)`;
}

/** Where a loop's `until` is evaluated: after an iteration, whose steps it reads. */
export function untilPlace(loop: PlacedStep): Trail {
  return [...loop.trail, { list: `${loop.pointer}/steps`, index: Infinity }];
}

/** Where the definition's `output` is evaluated: after its top-level steps. */
export const OUTPUT_PLACE: Trail = [{ list: '/steps', index: Infinity }];

/**
 * Why an expression at `place` cannot read `steps.<id>` of `target` (a clause for a message), or undefined
 * when it can. `target` is undefined when no step has that id.
 */
export function unreadableStep(place: Trail, target: PlacedStep | undefined): string | undefined {
  if (!target) return 'which is not a step of this workflow';
  const trail = target.trail;
  // The first level where the two places part.
  let j = 0;
  while (j < trail.length && j < place.length && sameLevel(trail[j]!, place[j]!)) j++;
  const notEarlier = 'which does not come earlier in the workflow';
  if (j === trail.length)
    return place.length > trail.length
      ? 'which contains this expression; its output exists only once it has ended'
      : notEarlier;
  const theirs = trail[j]!;
  const ours = place[j];
  if (ours?.list === theirs.list) {
    if (j === trail.length - 1) return ours.index > theirs.index ? undefined : notEarlier;
    return inside(theirs.step!);
  }
  // Level 0 is the definition's own list for both: here j >= 1, and trail[j - 1] holds the target's list.
  const holder = trail[j - 1]!.step!;
  if (!ours) return inside(holder);
  return `which is in another ${holder.kind === 'parallel' ? 'branch' : 'case'} of step "${holder.id}"`;
}

function sameLevel(a: Level, b: Level): boolean {
  return a.list === b.list && a.index === b.index;
}

function inside(container: Step): string {
  return `which is inside step "${container.id}"; outside it, only steps.${container.id} is visible`;
}
