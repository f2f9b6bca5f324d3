/**
 * What a rules step's record shows as its input (docs/api.md#executions): its rules, its default, and the
 * part of the context its expressions read. The worker does not record that data a second time (it is already
 * in history as the run's input and earlier outputs): the reader derives it from the same context.
 */
import type { RulesStep } from '../../core/definitions/schema';
import { findReferences, type References } from '../../core/expressions/references';
import { templateExpressions } from '../../core/expressions/templates';
import type { ExpressionContext } from '../../core/execution-types';

/** Parsed references by expression: parsing is the costly part, and definitions repeat. */
const referenceCache = new Map<string, References | null>();
const MAX_CACHED = 2000;
/** The roots every context has; any other is a name a container adds. */
const CONTEXT_ROOTS = new Set(['input', 'execution', 'steps']);

function referencesOf(expression: string): References | null {
  let refs = referenceCache.get(expression);
  if (refs === undefined) {
    try {
      refs = findReferences(expression);
    } catch {
      refs = null; // does not parse: the step failed on it, and read nothing
    }
    if (referenceCache.size >= MAX_CACHED) referenceCache.clear();
    referenceCache.set(expression, refs);
  }
  return refs;
}

export function rulesStepInput(step: RulesStep, context: ExpressionContext): Record<string, unknown> {
  const expressions = step.rules.map((rule) => rule.when);
  const templated = JSON.stringify([step.rules.map((rule) => [rule.output, rule.message]), step.default]);
  expressions.push(...templateExpressions(templated));
  if (step.if !== undefined) expressions.push(step.if);
  const data: Partial<ExpressionContext> = {};
  const stepIds = new Set<string>();
  let allSteps = false;
  for (const expression of expressions) {
    const refs = referencesOf(expression);
    if (!refs) continue;
    if (refs.roots.has('input')) data.input = context.input;
    if (refs.roots.has('execution')) data.execution = context.execution;
    // Names a container adds (a map's item and `index`, a loop's `iteration`), where the step is inside one.
    for (const root of refs.roots)
      if (!CONTEXT_ROOTS.has(root) && Object.hasOwn(context, root)) data[root] = context[root];
    refs.steps.forEach((id) => stepIds.add(id));
    allSteps ||= refs.allSteps;
  }
  if (allSteps) data.steps = context.steps;
  else if (stepIds.size > 0) {
    data.steps = Object.fromEntries(
      [...stepIds].filter((id) => id in context.steps).map((id) => [id, context.steps[id]!]),
    );
  }
  const input: Record<string, unknown> = { rules: step.rules };
  if (step.default !== undefined) input['default'] = step.default;
  input['data'] = data;
  return input;
}
