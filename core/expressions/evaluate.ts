/**
 * Evaluating JSONata expressions (docs/definitions.md#expressions-and-templates) within their limits
 * (limits.ts, guard.ts).
 *
 * Evaluated by the worker's step local activity (never inside workflow code: see
 * workers/workflows/execution.ts). Evaluation is bounded by counts — evaluation steps, stack depth,
 * the size of every value built, and a size-weighted work budget — so no expression can loop, recurse or
 * allocate without bound; a time limit (the time spent evaluating, pauses left out) backs them up.
 * Regular expressions run on RE2 (linear-regex.ts). No Node built-ins here: pausing (to let the event
 * loop serve other work during a long evaluation) is the caller's function, passed in with the budget.
 */
import jsonata from 'jsonata';
import { toExpressionError } from './errors';
import {
  EVALUATE_ENTRY,
  EVALUATE_EXIT,
  Guard,
  guardedBuiltins,
  nodeRoles,
  type GuardHolder,
  type JsonataFunction,
  type JsonataNode,
} from './guard';
import { DEFAULT_LIMITS, EvaluationBudget, type EvaluationLimits } from './limits';
import { LinearRegExp, UnsupportedRegexError } from './linear-regex';
import { objectFromEntries } from '../user-json';
import { readPlainPath } from './plain-path';

/** JSONata's own implementations of the built-ins wrapped above. */
const BUILTINS = jsonata(
  '{"pad": $pad, "join": $join, "string": $string, "clone": $clone, "distinct": $distinct}',
);
/** Read once: the same immutable objects for every evaluation. */
let builtins: Record<string, JsonataFunction> | undefined;

/**
 * A compiled expression with its hooks and guarded built-ins registered, bound to a holder. Compiling
 * and registering cost about 200 µs, evaluating a short expression a few: instances are kept and reused,
 * each by one evaluation at a time (they hold the evaluation's guard while it runs).
 */
interface Instance {
  compiled: jsonata.Expression;
  holder: GuardHolder;
}

/** Idle instances by expression and compile-time limits, least recently used first. */
const idleInstances = new Map<string, Instance[]>();
const MAX_CACHED_EXPRESSIONS = 1000;
/** As many as evaluations of one expression run at once (one per step local activity in flight). */
const MAX_IDLE_PER_EXPRESSION = 16;

async function takeInstance(expression: string, limits: EvaluationLimits): Promise<[string, Instance]> {
  const key = `${limits.maxDepth}:${limits.maxSequence}:${expression}`;
  const pool = idleInstances.get(key);
  const reused = pool?.pop();
  if (pool) {
    // Most recently used last.
    idleInstances.delete(key);
    idleInstances.set(key, pool);
  }
  return [key, reused ?? (await compileInstance(expression, limits))];
}

function returnInstance(key: string, instance: Instance): void {
  instance.holder.guard = undefined;
  const pool = idleInstances.get(key) ?? [];
  if (pool.length < MAX_IDLE_PER_EXPRESSION) pool.push(instance);
  idleInstances.set(key, pool);
  if (idleInstances.size > MAX_CACHED_EXPRESSIONS) {
    const oldest = idleInstances.keys().next().value;
    if (oldest !== undefined) idleInstances.delete(oldest);
  }
}

async function compileInstance(expression: string, limits: EvaluationLimits): Promise<Instance> {
  const holder: GuardHolder = { guard: undefined };
  // Every regular expression evaluated runs on RE2 (linear-regex.ts), those `$eval` builds from data too;
  // one that cannot is the evaluation's failure, named as such.
  class GuardedLinearRegExp extends LinearRegExp {
    constructor(pattern: RegExp | string, flags?: string) {
      try {
        super(pattern, flags);
      } catch (error) {
        if (error instanceof UnsupportedRegexError) holder.guard?.unsafeRegex(error.message);
        throw error;
      }
    }
  }

  let compiled: jsonata.Expression;
  try {
    compiled = jsonata(expression, {
      stack: limits.maxDepth,
      sequence: limits.maxSequence,
      RegexEngine: GuardedLinearRegExp as unknown as RegExpConstructor,
    });
  } catch (error) {
    throw toExpressionError(expression, error);
  }
  const roles = nodeRoles(compiled.ast());
  const assign = compiled.assign.bind(compiled) as unknown as (name: symbol, value: unknown) => void;
  // JSONata calls these before and after evaluating every node: a deterministic step budget (it also
  // stops tail-recursive loops, which never grow the stack), and the size checks of every value built.
  assign(EVALUATE_ENTRY, () => holder.guard?.step());
  assign(EVALUATE_EXIT, (node: JsonataNode, _input: unknown, _env: unknown, value: unknown) =>
    holder.guard?.exit(node, value, roles.get(node)),
  );
  builtins ??= (await BUILTINS.evaluate(null)) as Record<string, JsonataFunction>;
  for (const [name, fn] of Object.entries(guardedBuiltins(holder, builtins))) {
    // JSONata calls built-ins with its focus (createSequence and the like) as `this`.
    compiled.registerFunction(
      name,
      function (this: unknown, ...args: unknown[]) {
        return fn.implementation.apply(this, args as never);
      },
      fn.signature,
    );
  }
  return { compiled, holder };
}

/**
 * Evaluates an expression over `context` within `limits`; JSONata's `undefined` (no match) stays undefined.
 * A plain path is read without JSONata when its answer is certain (plain-path.ts).
 */
export function evaluateExpression(
  expression: string,
  context: unknown,
  limits: Partial<EvaluationLimits> = {},
  budget: EvaluationBudget = new EvaluationBudget(),
): Promise<unknown> {
  const effective: EvaluationLimits = { ...DEFAULT_LIMITS, ...limits };
  const plain = readPlainPath(expression, context, effective, budget);
  if (plain) return Promise.resolve(plain.value);
  return evaluateWithJsonata(expression, context, effective, budget);
}

/** evaluateExpression by JSONata alone (plain paths included): what plain-path.ts must agree with. */
export async function evaluateWithJsonata(
  expression: string,
  context: unknown,
  effective: EvaluationLimits,
  budget: EvaluationBudget,
): Promise<unknown> {
  const guard = new Guard(effective, budget);
  await budget.enter();
  let taken: [string, Instance] | undefined;
  let failed = false;
  try {
    taken = await takeInstance(expression, effective);
    const instance = taken[1];
    instance.holder.guard = guard;
    const result = (await instance.compiled.evaluate(context)) as unknown;
    // The result goes on into templates, history and API responses: it must be of bounded size too.
    if (typeof result === 'object' && result !== null) guard.measure(result);
    guard.checkTime();
    return normalize(result);
  } catch (error) {
    failed = true;
    throw toExpressionError(expression, guard.failure ?? error);
  } finally {
    budget.leave();
    // An instance whose evaluation was cut short may hold state mid-way: it is not reused.
    if (!failed && taken) returnInstance(...taken);
  }
}

/**
 * JSONata results can carry internal markers (sequence flags) and functions; reduce them to plain JSON
 * so they can cross into history and API responses.
 */
function normalize(value: unknown): unknown {
  if (value === undefined || value === null) return value;
  if (typeof value === 'function') return undefined;
  if (Array.isArray(value)) return value.map((item) => normalize(item) ?? null);
  if (typeof value === 'object') {
    // JSONata builds objects without a prototype, so a `__proto__` key is an ordinary entry there; it
    // stays one here (core/user-json.ts).
    const entries: [string, unknown][] = [];
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      const normalized = normalize(item);
      if (normalized !== undefined) entries.push([key, normalized]);
    }
    return objectFromEntries(entries);
  }
  if (typeof value === 'number' && !Number.isFinite(value)) return null;
  return value;
}

/** JSONata's `$boolean` casting rules, so `if` and `when` mean what JSONata users expect. */
export function isTruthy(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string') return value.length > 0;
  if (typeof value === 'number') return value !== 0;
  if (Array.isArray(value)) return value.some(isTruthy);
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return false;
}
