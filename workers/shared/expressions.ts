/**
 * JSONata expressions and `{{ expr }}` templates (CONTRACT §4).
 *
 * Evaluated by the worker's step local activity (never inside workflow code: see
 * workers/workflows/execution.ts) and parsed by the API (save-time checks, the rules step's input in
 * reads). Evaluation is bounded by counts — evaluation steps, stack depth, the size of every value built,
 * and a size-weighted work budget — so no expression can loop, recurse or allocate without bound; a
 * wall-clock limit backs them up. No Node built-ins here: pausing (to let the event loop serve other
 * work during a long evaluation) is the caller's function, passed in with the budget.
 */
import jsonata from 'jsonata';

export interface EvaluationLimits {
  /** Maximum number of expression nodes evaluated. */
  maxSteps: number;
  /** Maximum nesting depth of evaluation (deep recursion). */
  maxDepth: number;
  /** Maximum length of a sequence or array (and key count of an object) built during evaluation. */
  maxSequence: number;
  /** Largest value built: characters of a string, or the estimated JSON size of an array or object. */
  maxValueSize: number;
  /**
   * Size-weighted work of one evaluation: characters and items created, serialized, compared or handed
   * to built-in functions. Bounds what a step count cannot: one step of `$pad` or `&` can cost millions.
   */
  maxWork: number;
  /** Wall-clock limit in ms; only meaningful outside workflow code. */
  timeoutMs?: number;
}

/** Largest string (characters) or JSON-ish value (estimated characters) an evaluation may build: 2 Mi. */
export const MAX_VALUE_SIZE = 2 * 1024 * 1024;
/** Work budget of one evaluation (see EvaluationLimits.maxWork): well under a second of CPU, tens of MB. */
export const MAX_EVALUATION_WORK = 20_000_000;

export const DEFAULT_LIMITS: EvaluationLimits = {
  maxSteps: 100_000,
  maxDepth: 300,
  maxSequence: 100_000,
  maxValueSize: MAX_VALUE_SIZE,
  maxWork: MAX_EVALUATION_WORK,
};

/** How a long evaluation gives way: `pause()` is awaited every `every` evaluation steps. */
export interface Pauser {
  every: number;
  pause: () => Promise<void>;
}

/**
 * The steps and work evaluations have used: one per evaluation by default. A step shares one across
 * all its evaluations (`if`, rules, templates), so its limits hold for the step as a whole.
 */
export class EvaluationBudget {
  steps = 0;
  work = 0;

  constructor(private readonly pauser?: Pauser) {}

  reset(): void {
    this.steps = 0;
    this.work = 0;
  }

  /** A pause when one is due at this step count, so that one evaluation cannot hold the event loop. */
  pauseAt(steps: number): Promise<void> | undefined {
    return this.pauser && steps % this.pauser.every === 0 ? this.pauser.pause() : undefined;
  }
}

/** ExpressionError codes of the evaluation limits. */
export const LIMIT_CODES = { budget: 'budget', tooLarge: 'too_large', unsafeRegex: 'unsafe_regex' } as const;

export class ExpressionError extends Error {
  constructor(
    readonly expression: string,
    message: string,
    /** JSONata error code, e.g. "S0201" (syntax) or "T2001" (type); "budget" or "too_large" when a limit was hit. */
    readonly code: string,
    readonly position: number | undefined,
  ) {
    super(message);
    this.name = 'ExpressionError';
  }
}

interface JsonataFailure {
  code?: string;
  message?: string;
  position?: number;
  token?: string;
}

function toExpressionError(expression: string, error: unknown): ExpressionError {
  if (error instanceof ExpressionError) return error;
  const failure = (
    typeof error === 'object' && error !== null ? error : { message: String(error) }
  ) as JsonataFailure;
  const where = failure.position !== undefined ? ` (at character ${failure.position})` : '';
  return new ExpressionError(
    expression,
    `${failure.message ?? 'expression failed'}${where}`,
    failure.code ?? 'unknown',
    failure.position,
  );
}

/**
 * Compiles an expression; throws ExpressionError with JSONata's message on a syntax error, and on a
 * regular expression that could backtrack without bound (see hasNestedQuantifier).
 */
export function compileExpression(expression: string): jsonata.Expression {
  let compiled: jsonata.Expression;
  try {
    compiled = jsonata(expression);
  } catch (error) {
    throw toExpressionError(expression, error);
  }
  const unsafe = regexLiterals(compiled.ast()).find((re) => hasNestedQuantifier(re.source));
  if (unsafe)
    throw new ExpressionError(expression, unsafeRegexMessage(unsafe), LIMIT_CODES.unsafeRegex, undefined);
  return compiled;
}

function regexLiterals(ast: unknown): RegExp[] {
  const found: RegExp[] = [];
  const pending: unknown[] = [ast];
  while (pending.length > 0) {
    const node = pending.pop();
    if (node instanceof RegExp) found.push(node);
    else if (typeof node === 'object' && node !== null) pending.push(...(Object.values(node) as unknown[]));
  }
  return found;
}

/**
 * Whether a regular expression repeats something that itself repeats, as in `(a+)+` or `(\w*\s?)*`:
 * the shape that backtracks exponentially. One such match can run for minutes on a 30-character
 * string, inside one evaluation step that no budget can interrupt (and in workflow code, past the
 * SDK's time limit, which can bring the worker down). Conservative: `([a-z]+\.)+` is refused too.
 */
export function hasNestedQuantifier(source: string): boolean {
  const quantifierAt = (j: number): boolean =>
    source[j] === '*' ||
    source[j] === '+' ||
    source[j] === '?' ||
    (source[j] === '{' && /^\{\d+(,\d*)?\}/.test(source.slice(j, j + 24)));
  // Per open group: whether it holds a quantifier.
  const groups: boolean[] = [false];
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      i += 1;
    } else if (c === '[') {
      for (i += 1; i < source.length && source[i] !== ']'; i++) if (source[i] === '\\') i += 1;
    } else if (c === '(') {
      groups.push(false);
      if (source[i + 1] === '?') i += 1; // (?: (?= (?! (?<= (?<! (?<name>: not a quantifier
    } else if (c === ')') {
      const inner = groups.pop() ?? false;
      const repeated = quantifierAt(i + 1);
      if (inner && repeated) return true;
      if (groups.length === 0) groups.push(false);
      if (inner || repeated) groups[groups.length - 1] = true;
    } else if (quantifierAt(i)) {
      groups[groups.length - 1] = true;
    }
  }
  return false;
}

function unsafeRegexMessage(re: RegExp): string {
  return `regular expression /${re.source}/ repeats a repeated group, which can backtrack without bound; rewrite it without nested quantifiers`;
}

const EVALUATE_ENTRY = Symbol.for('jsonata.__evaluate_entry');
const EVALUATE_EXIT = Symbol.for('jsonata.__evaluate_exit');

interface JsonataNode {
  type?: string;
  value?: unknown;
  group?: unknown;
  lhs?: unknown;
  rhs?: unknown;
  arguments?: unknown[];
  [key: string]: unknown;
}

interface JsonataFunction {
  implementation: (this: unknown, ...args: unknown[]) => unknown;
  signature?: unknown;
}

/** What happens to a node's value next, when that costs work proportional to its size. */
type Role = 'serialized' | 'compared' | 'argument';

/** Nodes whose value is new (as opposed to a reference to existing data, or a pass-through). */
const CREATING_NODES = new Set([
  'function',
  'partial',
  'apply',
  'binary',
  'unary',
  'path',
  'wildcard',
  'descendant',
]);

/**
 * Marks the AST nodes whose values are serialized (`&` turns objects into JSON), deep-compared (`=`,
 * `!=`, `in`) or passed to a function (built-ins cost time proportional to their arguments).
 */
function nodeRoles(ast: unknown): Map<object, Role> {
  const roles = new Map<object, Role>();
  const pending: unknown[] = [ast];
  while (pending.length > 0) {
    const node = pending.pop();
    if (Array.isArray(node)) {
      pending.push(...(node as unknown[]));
      continue;
    }
    if (typeof node !== 'object' || node === null) continue;
    const n = node as JsonataNode;
    const mark = (child: unknown, role: Role) => {
      if (typeof child === 'object' && child !== null && !roles.has(child)) roles.set(child, role);
    };
    if (n.type === 'binary' && n.value === '&') [n.lhs, n.rhs].forEach((c) => mark(c, 'serialized'));
    if (n.type === 'binary' && ['=', '!=', 'in'].includes(n.value as string))
      [n.lhs, n.rhs].forEach((c) => mark(c, 'compared'));
    if ((n.type === 'function' || n.type === 'partial') && Array.isArray(n.arguments))
      n.arguments.forEach((c) => mark(c, 'argument'));
    if (n.type === 'apply') mark(n.lhs, 'argument');
    for (const child of Object.values(n)) if (typeof child === 'object') pending.push(child);
  }
  return roles;
}

function isJsonataFunction(value: unknown): boolean {
  return (
    typeof value === 'function' ||
    (typeof value === 'object' &&
      value !== null &&
      ((value as { _jsonata_function?: boolean })._jsonata_function === true ||
        (value as { _jsonata_lambda?: boolean })._jsonata_lambda === true))
  );
}

/**
 * The limits of one evaluation: a step count, and the size of the values it builds and works on.
 * Every failure is deterministic (counts, never clocks), so a workflow replays it identically.
 */
class Guard {
  /** The first limit hit: JSONata may wrap errors (e.g. `$eval`), the evaluation reports this one. */
  failure: JsonataFailure | undefined;

  constructor(
    private readonly limits: EvaluationLimits,
    private readonly budget: EvaluationBudget,
  ) {}

  private fail(code: string, message: string): never {
    this.failure ??= { code, message };
    throw this.failure;
  }

  /** JSONata awaits what this returns: now and then a pause (EvaluationBudget.pauseAt). */
  step(): Promise<void> | undefined {
    this.budget.steps += 1;
    if (this.budget.steps > this.limits.maxSteps)
      this.fail(LIMIT_CODES.budget, `evaluation exceeded ${this.limits.maxSteps} steps`);
    return this.budget.pauseAt(this.budget.steps);
  }

  charge(units: number): void {
    this.budget.work += units;
    if (this.budget.work > this.limits.maxWork) {
      this.fail(
        LIMIT_CODES.budget,
        `evaluation exceeded its work budget of ${this.limits.maxWork} (characters and items built, copied or compared)`,
      );
    }
  }

  unsafeRegex(re: RegExp): never {
    return this.fail(LIMIT_CODES.unsafeRegex, unsafeRegexMessage(re));
  }

  tooLarge(what: string, limit = this.limits.maxValueSize): never {
    return this.fail(LIMIT_CODES.tooLarge, `evaluation built ${what}, more than the limit of ${limit}`);
  }

  checkString(length: number): void {
    if (length > this.limits.maxValueSize) this.tooLarge(`a string of ${length} characters`);
  }

  checkCount(count: number, what: string): void {
    if (count > this.limits.maxSequence) this.tooLarge(`${what} of ${count} items`, this.limits.maxSequence);
  }

  /**
   * The estimated JSON size of a value (characters; numbers count 8), walked without recursion and
   * given up as soon as it passes the value limit or nests deeper than MAX_STEP_DATA_DEPTH. Shared or
   * cyclic structures (`{"a": $x, "b": $x}` nested a few times describes exabytes of JSON) thus cost
   * at most the limit. The walk is charged as work.
   */
  measure(value: unknown, indent = 0): number {
    const limit = this.limits.maxValueSize;
    let size = 0;
    const pending: [unknown, number][] = [[value, 0]];
    while (pending.length > 0) {
      const [item, depth] = pending.pop()!;
      size += indent > 0 ? depth * indent + 1 : 0;
      if (typeof item === 'string') size += item.length + 2;
      else if (typeof item === 'number') size += 8;
      else if (typeof item === 'boolean') size += 5;
      else if (item === null || item === undefined || isJsonataFunction(item)) size += 4;
      else if (depth >= MAX_STEP_DATA_DEPTH) {
        // What is serialized next (JSON.stringify, Temporal, the API) recurses: keep it shallow enough.
        this.fail(
          LIMIT_CODES.tooLarge,
          `evaluation built a value nested deeper than ${MAX_STEP_DATA_DEPTH} levels`,
        );
      } else if (Array.isArray(item)) {
        size += 2 + item.length;
        for (const child of item as unknown[]) pending.push([child, depth + 1]);
      } else if (typeof item === 'object') {
        size += 2;
        for (const [key, child] of Object.entries(item)) {
          size += key.length + 4;
          pending.push([child, depth + 1]);
        }
      }
      if (size > limit) {
        this.charge(limit);
        this.fail(
          LIMIT_CODES.tooLarge,
          `evaluation built a value larger than the limit of ${limit} characters as JSON`,
        );
      }
    }
    this.charge(size);
    return size;
  }

  /** Called by JSONata after every node: checks and charges the value it produced. */
  exit(node: JsonataNode, value: unknown, role: Role | undefined): void {
    if (value === undefined || value === null) return;
    const creates = CREATING_NODES.has(node.type ?? '') || node.group !== undefined;
    if (typeof value === 'string') {
      this.checkString(value.length);
      if (creates) this.charge(value.length);
      if (role === 'argument' || role === 'compared') this.charge(value.length);
      return;
    }
    if (typeof value !== 'object' || isJsonataFunction(value)) return;
    if (role === 'serialized' || role === 'compared') {
      this.measure(value);
      return;
    }
    if (!creates && role !== 'argument') return;
    const count = Array.isArray(value) ? value.length : Object.keys(value).length;
    this.checkCount(count, Array.isArray(value) ? 'an array' : 'an object');
    if (creates) this.charge(count);
    if (role === 'argument') this.charge(count);
  }
}

/**
 * Built-in functions that allocate (or loop) in proportion to a number or a nested structure before
 * any hook sees their result: the wrappers check and charge the size first, then call JSONata's own.
 */
function guardedBuiltins(
  holder: GuardHolder,
  builtins: Record<string, JsonataFunction>,
): Record<string, { signature: string; implementation: (this: unknown, ...args: never[]) => unknown }> {
  const original = (name: string) => builtins[name]!.implementation;
  // The guard of the evaluation under way (one instance serves one evaluation at a time).
  const current = (): Guard => holder.guard!;
  return {
    pad: {
      signature: '<s-ns?:s>',
      implementation: function (this: unknown, str: unknown, width: unknown, char?: unknown) {
        if (typeof width === 'number' && Number.isFinite(width)) {
          current().checkString(Math.abs(Math.trunc(width)));
          current().charge(Math.abs(Math.trunc(width)));
        }
        return original('pad').call(this, str, width, char);
      },
    },
    join: {
      signature: '<a<s>s?:s>',
      implementation: function (this: unknown, strs: unknown, separator?: unknown) {
        if (Array.isArray(strs)) {
          const sep = typeof separator === 'string' ? separator.length : 0;
          let length = 0;
          for (const item of strs as unknown[]) length += (typeof item === 'string' ? item.length : 0) + sep;
          current().checkString(length);
          current().charge(length);
        }
        return original('join').call(this, strs, separator);
      },
    },
    string: {
      signature: '<x-b?:s>',
      implementation: function (this: unknown, arg: unknown, prettify?: unknown) {
        if (typeof arg === 'object' && arg !== null) current().measure(arg, prettify === true ? 2 : 0);
        return original('string').call(this, arg, prettify);
      },
    },
    clone: {
      signature: '<(oa)-:o>',
      implementation: function (this: unknown, arg: unknown) {
        // A clone is a JSON round trip: twice the size, and the copy is new.
        if (typeof arg === 'object' && arg !== null) current().charge(current().measure(arg));
        return original('clone').call(this, arg);
      },
    },
    distinct: {
      signature: '<x:x>',
      // JSONata's own compares every value with every one kept (quadratic, and deep): this one keys
      // values instead, objects by their JSON with sorted keys (JSONata's equality ignores key order).
      implementation: function (this: unknown, arr: unknown) {
        if (!Array.isArray(arr) || arr.length <= 1) return arr;
        current().charge(arr.length);
        const focus = this as { createSequence(): unknown[] };
        const results = (arr as { sequence?: boolean }).sequence === true ? focus.createSequence() : [];
        const seen = new Set<unknown>();
        const seenJson = new Set<string>();
        for (const value of arr as unknown[]) {
          if (typeof value === 'object' && value !== null && !isJsonataFunction(value)) {
            current().measure(value);
            const json = JSON.stringify(value, sortedKeys);
            if (seenJson.has(json)) continue;
            seenJson.add(json);
          } else {
            if (seen.has(value)) continue;
            seen.add(value);
          }
          results.push(value);
        }
        return results;
      },
    },
  };
}

function sortedKeys(_key: string, value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const record = value as Record<string, unknown>;
  return Object.fromEntries(
    Object.keys(record)
      .sort()
      .map((key) => [key, record[key]]),
  );
}

/** JSONata's own implementations of the built-ins wrapped above. */
const BUILTINS = jsonata(
  '{"pad": $pad, "join": $join, "string": $string, "clone": $clone, "distinct": $distinct}',
);
/** Read once: the same immutable objects for every evaluation. */
let builtins: Record<string, JsonataFunction> | undefined;

/** Where an instance's hooks and wrapped built-ins find the guard of the evaluation under way. */
interface GuardHolder {
  guard: Guard | undefined;
}

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
  const key = `${limits.maxDepth}:${limits.maxSequence}:${limits.timeoutMs ?? 0}:${expression}`;
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
  // Every regular expression evaluated goes through here, those `$eval` builds from data included.
  class CheckedRegExp extends RegExp {
    constructor(pattern: RegExp | string, flags?: string) {
      super(pattern, flags);
      if (hasNestedQuantifier(this.source)) holder.guard?.unsafeRegex(this);
    }
  }
  let compiled: jsonata.Expression;
  try {
    compiled = jsonata(expression, {
      stack: limits.maxDepth,
      sequence: limits.maxSequence,
      RegexEngine: CheckedRegExp as unknown as RegExpConstructor,
      ...(limits.timeoutMs ? { timeout: limits.timeoutMs } : {}),
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

/** Evaluates an expression over `context` within `limits`; JSONata's `undefined` (no match) stays undefined. */
export async function evaluateExpression(
  expression: string,
  context: unknown,
  limits: Partial<EvaluationLimits> = {},
  budget: EvaluationBudget = new EvaluationBudget(),
): Promise<unknown> {
  const effective: EvaluationLimits = { ...DEFAULT_LIMITS, ...limits };
  const guard = new Guard(effective, budget);
  const [key, instance] = await takeInstance(expression, effective);
  instance.holder.guard = guard;
  let failed = false;
  try {
    const result = (await instance.compiled.evaluate(context)) as unknown;
    // The result goes on into templates, history and API responses: it must be of bounded size too.
    if (typeof result === 'object' && result !== null) guard.measure(result);
    return normalize(result);
  } catch (error) {
    failed = true;
    throw toExpressionError(expression, guard.failure ?? error);
  } finally {
    // An instance whose evaluation was cut short may hold state mid-way: it is not reused.
    if (!failed) returnInstance(key, instance);
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
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      const normalized = normalize(item);
      if (normalized !== undefined) out[key] = normalized;
    }
    return out;
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

/** What an expression reads from the evaluation context. */
export interface References {
  /** Top-level context names read: "input", "steps", "execution", "secrets", ... */
  roots: Set<string>;
  /** Step ids read as `steps.<id>`. */
  steps: Set<string>;
  /** True when `steps` is read as a whole (e.g. `$keys(steps)`), so any step may be read. */
  allSteps: boolean;
  /** Secret names read as `secrets.<NAME>`. */
  secrets: Set<string>;
}

interface AstNode {
  type?: string;
  value?: unknown;
  steps?: AstNode[];
  [key: string]: unknown;
}

/** Lists the context names and step ids an expression reads; throws ExpressionError on a syntax error. */
export function findReferences(expression: string): References {
  const cached = referencesCache.get(expression);
  if (cached instanceof ExpressionError) throw cached;
  if (cached) return cached;
  let refs: References | ExpressionError;
  try {
    refs = { roots: new Set(), steps: new Set(), allSteps: false, secrets: new Set() };
    visit(compileExpression(expression).ast(), refs);
  } catch (error) {
    if (!(error instanceof ExpressionError)) throw error;
    refs = error;
  }
  if (referencesCache.size >= MAX_CACHED_REFERENCES)
    referencesCache.delete(referencesCache.keys().next().value!);
  referencesCache.set(expression, refs);
  if (refs instanceof ExpressionError) throw refs;
  return refs;
}

/**
 * What expressions read, by expression: parsing costs a hundred µs or more, and every run of a
 * definition asks again (which templates read secrets, where). The sets are shared: do not change them.
 */
const referencesCache = new Map<string, References | ExpressionError>();
const MAX_CACHED_REFERENCES = 5000;

function visit(node: unknown, refs: References): void {
  if (Array.isArray(node)) {
    for (const item of node) visit(item, refs);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const ast = node as AstNode;
  if (ast.type === 'path' && Array.isArray(ast.steps)) recordPath(ast.steps, refs);
  for (const child of Object.values(ast)) visit(child, refs);
}

function recordPath(steps: AstNode[], refs: References): void {
  // `$$.steps.x` and `$.steps.x` read from the root context just like `steps.x`.
  const offset = steps[0]?.type === 'variable' && (steps[0].value === '$' || steps[0].value === '') ? 1 : 0;
  const root = steps[offset];
  if (root?.type !== 'name' || typeof root.value !== 'string') return;
  refs.roots.add(root.value);
  const next = steps[offset + 1];
  if (root.value === 'secrets' && next?.type === 'name' && typeof next.value === 'string')
    refs.secrets.add(next.value);
  if (root.value !== 'steps') return;
  const step = next;
  if (step?.type === 'name' && typeof step.value === 'string' && !step['stages'] && !root['stages']) {
    refs.steps.add(step.value);
  } else {
    refs.allSteps = true;
  }
}

const TEMPLATE = /\{\{([\s\S]*?)\}\}/g;
const WHOLE_TEMPLATE = /^\{\{([\s\S]*?)\}\}$/;

/** The expressions of every `{{ expr }}` in a string. */
export function templateExpressions(text: string): string[] {
  return [...text.matchAll(TEMPLATE)].map((match) => (match[1] ?? '').trim());
}

export interface TemplateOptions {
  limits?: Partial<EvaluationLimits>;
  /** Shared by all the evaluations (see EvaluationBudget); one per expression when absent. */
  budget?: EvaluationBudget;
  /** Templates for which this returns true are left as written (e.g. secrets, resolved later). */
  defer?: (expression: string) => boolean;
}

/**
 * Replaces every `{{ expr }}` in the strings of a JSON value. A string that is exactly one template
 * takes the expression's value (any JSON type); otherwise values are interpolated as text.
 */
export async function resolveTemplates(
  value: unknown,
  context: unknown,
  options: TemplateOptions = {},
): Promise<unknown> {
  if (typeof value === 'string') return resolveString(value, context, options);
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value) out.push(await resolveTemplates(item, context, options));
    return out;
  }
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value))
      out[key] = await resolveTemplates(item, context, options);
    return out;
  }
  return value;
}

async function resolveString(text: string, context: unknown, options: TemplateOptions): Promise<unknown> {
  if (!text.includes('{{')) return text;
  const whole = WHOLE_TEMPLATE.exec(text);
  if (whole && !(whole[1] ?? '').includes('}}')) {
    const expression = (whole[1] ?? '').trim();
    if (options.defer?.(expression)) return text;
    const result = await evaluateExpression(expression, context, options.limits, options.budget);
    return result === undefined ? null : result;
  }
  let out = '';
  let last = 0;
  for (const match of text.matchAll(TEMPLATE)) {
    const expression = (match[1] ?? '').trim();
    out += text.slice(last, match.index);
    last = (match.index ?? 0) + match[0].length;
    if (options.defer?.(expression)) {
      out += match[0];
      continue;
    }
    out += asText(await evaluateExpression(expression, context, options.limits, options.budget));
    // Each value is within the limit, and so must their concatenation be.
    const maxValueSize = options.limits?.maxValueSize ?? DEFAULT_LIMITS.maxValueSize;
    if (out.length > maxValueSize) {
      throw new ExpressionError(
        expression,
        `the template text grew to ${out.length} characters, more than the limit of ${maxValueSize}`,
        LIMIT_CODES.tooLarge,
        undefined,
      );
    }
  }
  return out + text.slice(last);
}

function asText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/** True when the expression reads `secrets` (such templates are resolved inside activities). */
export function readsSecrets(expression: string): boolean {
  try {
    return findReferences(expression).roots.has('secrets');
  } catch {
    return false;
  }
}

/** Every string in a JSON value, with its JSON pointer. */
export function* stringsWithPointers(value: unknown, pointer = ''): Generator<[string, string]> {
  if (typeof value === 'string') yield [pointer, value];
  else if (Array.isArray(value))
    for (const [i, item] of value.entries()) yield* stringsWithPointers(item, `${pointer}/${i}`);
  else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      yield* stringsWithPointers(item, `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`);
    }
  }
}

/**
 * JSON pointers of the strings of a step configuration (as written in the definition) that hold
 * secrets templates. Only these are resolved inside the activity: a `{{ secrets.X }}` that arrives in
 * data (an upstream response, trigger input) is never evaluated.
 */
export function secretTemplatePointers(configuration: unknown): string[] {
  const pointers: string[] = [];
  for (const [pointer, text] of stringsWithPointers(configuration)) {
    if (templateExpressions(text).some(readsSecrets)) pointers.push(pointer);
  }
  return pointers;
}

/**
 * Largest step input and output (JSON, UTF-8 bytes) the engine records. Temporal refuses a payload above
 * 2 MiB (`limit.blobSize.error`), and a step's record (input and output together) travels as one local
 * activity result: the two limits add up to less. Past them the step fails with a clear code instead of
 * leaving a run that Temporal cannot record. Connector requests are small in practice; responses are
 * capped at 1 MiB by default (MAX_RESPONSE_BYTES).
 */
export const MAX_STEP_INPUT_BYTES = 512 * 1024;
export const MAX_STEP_OUTPUT_BYTES = 1280 * 1024;

/**
 * Deepest nesting of arrays and objects in a step's input or output. JSON.stringify, Temporal's payload
 * converter and the API recurse, and overflow the stack some thousands of levels down; a third-party
 * response (or a recursive expression) can nest deeper than that.
 */
export const MAX_STEP_DATA_DEPTH = 256;

/** Step error codes of data past MAX_STEP_INPUT_BYTES / MAX_STEP_OUTPUT_BYTES or MAX_STEP_DATA_DEPTH. */
export const DATA_LIMIT_CODES = {
  /** A step's resolved configuration (after templates), or the data a rules step reads. */
  input: 'input_too_large',
  /** What a step activity produced. */
  output: 'output_too_large',
} as const;

/** The size of a value as JSON in UTF-8 bytes, as Temporal's JSON payload converter encodes it. */
export function jsonByteLength(value: unknown): number {
  const json = JSON.stringify(value) as string | undefined;
  if (json === undefined) return 0;
  let bytes = 0;
  for (let i = 0; i < json.length; i++) {
    const code = json.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < json.length) {
      bytes += 4; // a surrogate pair: one 4-byte character
      i += 1;
    } else bytes += 3;
  }
  return bytes;
}

/** Whether arrays and objects in a value nest deeper than `max` levels (walked without recursion). */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const pending: [unknown, number][] = [[value, 0]];
  while (pending.length > 0) {
    const [item, depth] = pending.pop()!;
    if (typeof item !== 'object' || item === null) continue;
    if (depth + 1 > max) return true;
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
  return false;
}

/**
 * Why a step's input or output cannot be recorded (too deep, or larger than `maxBytes` as JSON), or
 * undefined when it can.
 */
export function stepDataProblem(value: unknown, maxBytes: number): string | undefined {
  if (nestedDeeperThan(value, MAX_STEP_DATA_DEPTH))
    return `is nested deeper than ${MAX_STEP_DATA_DEPTH} levels`;
  const size = jsonByteLength(value);
  if (size > maxBytes) return `is ${size} bytes as JSON, more than the limit of ${maxBytes} bytes`;
  return undefined;
}
