/**
 * Plain paths (`input.customer`, `steps.route.output.tier`): the expression most templates hold, read
 * without JSONata when the answer is certain to be JSONata's.
 *
 * JSONata evaluates every node asynchronously: a few promises per node, each paying Node's promise hooks,
 * and some 15 KB of garbage per evaluation (docs/benchmarks.md#plain-paths-without-jsonata). A path of
 * names through objects to a string, number, boolean or null has one answer, read here synchronously;
 * anything else (an array on the way, a missing or inherited key, an object or array at the end) goes to
 * JSONata, which then decides exactly as before.
 *
 * The budget is charged what JSONata's hooks would have charged (guard.ts): one step per node (the path
 * and each name) and one unit of work for the one-value sequence the path builds. When those steps would
 * reach a look at the clock, a pause or the step limit, or the work its limit, JSONata evaluates instead,
 * so limits fail at the same place and pauses come at the same counts. test/unit/plain-path.test.ts checks
 * the answers and charges against JSONata's.
 */
import type { EvaluationBudget, EvaluationLimits } from './limits';

/** Names joined by dots; JSONata's operators and literals spelled as words are not names. */
const PLAIN_PATH = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$/;
const RESERVED = /(?:^|\.)(?:and|or|in|true|false|null|function)(?:\.|$)/;

/** Work JSONata charges a path whose answer is one value: the sequence of one item it builds (guard.ts). */
const SEQUENCE_OF_ONE_WORK = 1;

/** The value a plain path reads, or undefined when JSONata must evaluate the expression. */
export function readPlainPath(
  expression: string,
  context: unknown,
  limits: EvaluationLimits,
  budget: EvaluationBudget,
): { value: string | number | boolean | null } | undefined {
  if (!PLAIN_PATH.test(expression) || RESERVED.test(expression)) return undefined;
  const names = expression.split('.');
  let value: unknown = context;
  for (const name of names) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    if (!Object.hasOwn(value, name)) return undefined;
    value = (value as Record<string, unknown>)[name];
  }
  if (typeof value === 'string') {
    if (value.length > limits.maxValueSize) return undefined;
  } else if (typeof value === 'number') {
    if (!Number.isFinite(value)) return undefined;
  } else if (typeof value !== 'boolean' && value !== null) {
    return undefined;
  }
  // The path node and one node per name.
  const steps = names.length + 1;
  if (budget.work + SEQUENCE_OF_ONE_WORK > limits.maxWork) return undefined;
  if (!budget.takeQuietSteps(steps, limits.maxSteps)) return undefined;
  budget.work += SEQUENCE_OF_ONE_WORK;
  return { value };
}
