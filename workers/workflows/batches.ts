/**
 * How the execution workflow cuts a definition into `run_steps` batches, and what it hands each one.
 * Deterministic, and cheap: plain scans, no expression parsing (the activity evaluates).
 */
import type { ActivityOptions } from '@temporalio/common';
import type { LeafStep, Step } from '../../core/definitions/schema';
import { isLeafStep } from '../../core/definitions/step-kinds';
import type { ExpressionContext } from '../../core/execution-types';

/** Rules steps in a row run in one local activity, up to this many (a long chain takes several). */
const MAX_BATCH_STEPS = 50;

/**
 * The steps from `index` to the next step that calls out or waits (connector, ai, approval, sleep), that
 * one included: the rules steps before it cost nothing extra to run in the same local activity. A batch
 * never reaches past a wait: the workflow waits after it (a sleep's timer, an approval's decision).
 */
export function batchFrom(steps: Step[], index: number): LeafStep[] {
  const batch: LeafStep[] = [];
  for (let i = index; i < steps.length && batch.length < MAX_BATCH_STEPS; i++) {
    const step = steps[i]!;
    // A container or a sub-workflow step is not part of a batch: the workflow runs it itself.
    if (!isLeafStep(step)) break;
    batch.push(step);
    if (step.kind !== 'rules') break;
  }
  return batch;
}

/**
 * How a batch's local activity appears in Temporal UI (local activities are numbered, not named): its
 * summary names every step of the batch, in order.
 */
export function describeBatch(steps: Step[]): Pick<ActivityOptions, 'summary'> {
  return { summary: steps.map((step) => step.name ?? step.id).join(' → ') };
}

const STEPS_WORD = /\bsteps\b/g;
const STEP_REFERENCE = /\bsteps\s*\.\s*([a-z][a-z0-9_]*)/g;

/**
 * The context a batch may read: the input and execution always, and of earlier steps only those its
 * expressions name as `steps.<id>` — all of them when `steps` appears any other way (`$keys(steps)`,
 * `steps[...]`, a word in a string): a conservative scan, never a parse.
 */
export function contextFor(context: ExpressionContext, batch: readonly unknown[]): ExpressionContext {
  const text = JSON.stringify(batch);
  const mentions = text.match(STEPS_WORD)?.length ?? 0;
  if (mentions === 0) return { ...context, steps: {} };
  const named = [...text.matchAll(STEP_REFERENCE)].map((match) => match[1]!);
  if (named.length !== mentions) return context;
  const steps: ExpressionContext['steps'] = {};
  for (const id of named) {
    // Own entries only: `steps.constructor` names a step, never Object's.
    if (Object.hasOwn(context.steps, id)) steps[id] = context.steps[id]!;
  }
  return { ...context, steps };
}
