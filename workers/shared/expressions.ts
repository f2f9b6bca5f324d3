/**
 * JSONata expressions and `{{ expr }}` templates (CONTRACT §4).
 *
 * Pure and deterministic: this module runs inside Temporal's workflow sandbox (evaluating `if` and
 * templates), in activities (rules, secrets) and in the API (save-time checks). Wall-clock limits do not
 * work in the sandbox (time stands still during a workflow task), so evaluation is bounded by a count of
 * evaluation steps and a stack depth instead: the same expression fails the same way on every replay.
 */
import jsonata from 'jsonata';

export interface EvaluationLimits {
  /** Maximum number of expression nodes evaluated. */
  maxSteps: number;
  /** Maximum nesting depth of evaluation (deep recursion). */
  maxDepth: number;
  /** Maximum length of a sequence built during evaluation. */
  maxSequence: number;
  /** Wall-clock limit in ms; only meaningful outside workflow code. */
  timeoutMs?: number;
}

export const DEFAULT_LIMITS: EvaluationLimits = { maxSteps: 100_000, maxDepth: 300, maxSequence: 100_000 };

export class ExpressionError extends Error {
  constructor(
    readonly expression: string,
    message: string,
    /** JSONata error code, e.g. "S0201" (syntax) or "T2001" (type); "budget" when a limit was hit. */
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

/** Compiles an expression; throws ExpressionError with JSONata's message on a syntax error. */
export function compileExpression(expression: string): jsonata.Expression {
  try {
    return jsonata(expression);
  } catch (error) {
    throw toExpressionError(expression, error);
  }
}

const EVALUATE_ENTRY = Symbol.for('jsonata.__evaluate_entry');

/** Evaluates an expression over `context` within `limits`; JSONata's `undefined` (no match) stays undefined. */
export async function evaluateExpression(
  expression: string,
  context: unknown,
  limits: EvaluationLimits = DEFAULT_LIMITS,
): Promise<unknown> {
  let compiled: jsonata.Expression;
  try {
    compiled = jsonata(expression, {
      stack: limits.maxDepth,
      sequence: limits.maxSequence,
      ...(limits.timeoutMs ? { timeout: limits.timeoutMs } : {}),
    });
  } catch (error) {
    throw toExpressionError(expression, error);
  }
  let steps = 0;
  // JSONata calls this hook before evaluating every node: a deterministic budget that also stops
  // tail-recursive loops, which never grow the stack.
  (compiled.assign as unknown as (name: symbol, value: unknown) => void)(EVALUATE_ENTRY, () => {
    steps += 1;
    if (steps > limits.maxSteps) {
      throw {
        code: 'budget',
        message: `evaluation exceeded ${limits.maxSteps} steps`,
      } satisfies JsonataFailure;
    }
  });
  try {
    return normalize(await compiled.evaluate(context));
  } catch (error) {
    throw toExpressionError(expression, error);
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
  const refs: References = { roots: new Set(), steps: new Set(), allSteps: false, secrets: new Set() };
  visit(compileExpression(expression).ast(), refs);
  return refs;
}

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
  limits?: EvaluationLimits;
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
    const result = await evaluateExpression(expression, context, options.limits);
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
    out += asText(await evaluateExpression(expression, context, options.limits));
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
