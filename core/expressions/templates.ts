/**
 * `{{ expr }}` templates in the strings of a step's configuration
 * (docs/definitions.md#expressions-and-templates).
 */
import { ExpressionError, LIMIT_CODES } from './errors';
import { evaluateExpression } from './evaluate';
import { DEFAULT_LIMITS, EvaluationBudget, type EvaluationLimits } from './limits';
import { readPlainPath } from './plain-path';
import { readsSecrets } from './references';
import { objectFromEntries } from '../user-json';

const TEMPLATE = /\{\{([\s\S]*?)\}\}/g;
const WHOLE_TEMPLATE = /^\{\{([\s\S]*?)\}\}$/;

/** The expressions of every `{{ expr }}` in a string. */
export function templateExpressions(text: string): string[] {
  return [...text.matchAll(TEMPLATE)].map((match) => (match[1] ?? '').trim());
}

/**
 * The expression of a map's `items` (docs/definitions.md#composition): "input.contacts" as written, or the
 * expression of the one template "{{ input.contacts }}". The worker evaluates it (workers/activities/control.ts)
 * and the API checks it on save (src/definitions/validate.ts), so both read it the same way.
 */
export function itemsExpression(items: string): string {
  const templates = templateExpressions(items);
  return templates.length === 1 && items.trim().startsWith('{{') && items.trim().endsWith('}}')
    ? templates[0]!
    : items;
}

export interface TemplateOptions {
  limits?: Partial<EvaluationLimits>;
  /** Shared by all the evaluations (see EvaluationBudget); one per expression when absent. */
  budget?: EvaluationBudget;
  /** Templates for which this returns true are left as written (e.g. secrets, resolved later). */
  defer?: (expression: string) => boolean;
  /** Evaluates each template's expression; evaluateExpression when absent. */
  evaluate?: Evaluate;
}

/** evaluateExpression's signature: callers may run some evaluations elsewhere (a thread). */
export type Evaluate = (
  expression: string,
  context: unknown,
  limits?: Partial<EvaluationLimits>,
  budget?: EvaluationBudget,
) => Promise<unknown>;

/**
 * Replaces every `{{ expr }}` in the strings of a JSON value. A string that is exactly one template
 * takes the expression's value (any JSON type); otherwise values are interpolated as text.
 */
export async function resolveTemplates(
  value: unknown,
  context: unknown,
  options: TemplateOptions = {},
): Promise<unknown> {
  return resolveValue(value, context, options);
}

/**
 * What the walk below returns: the value itself while every template so far was read at once (plain-path.ts),
 * a promise of it once one went to the evaluator. Every promise in the worker pays Node's promise hooks,
 * and most templates are plain paths: a configuration of them resolves with none.
 */
type Resolving = unknown;

function resolveValue(value: unknown, context: unknown, options: TemplateOptions): Resolving {
  if (typeof value === 'string') return resolveString(value, context, options);
  if (Array.isArray(value)) return resolveInOrder(value as unknown[], context, options, (out) => out);
  if (typeof value === 'object' && value !== null) {
    const entries: [string, unknown][] = Object.entries(value);
    return resolveInOrder(
      entries.map(([, item]) => item),
      context,
      options,
      // Keys are the user's (a body's `__proto__` included): defined, never assigned (core/user-json.ts).
      (out) => objectFromEntries(entries.map(([key], i) => [key, out[i]])),
    );
  }
  return value;
}

/**
 * Resolves items one after the other (evaluations share the budget, so their order is part of the
 * result), at once until one needs the evaluator, then waiting for each in turn.
 */
function resolveInOrder(
  items: unknown[],
  context: unknown,
  options: TemplateOptions,
  build: (out: unknown[]) => unknown,
): Resolving {
  const out: unknown[] = [];
  for (let i = 0; i < items.length; i++) {
    const resolved = resolveValue(items[i], context, options);
    if (resolved instanceof Promise) return finishInOrder(items, i, resolved, out, context, options, build);
    out.push(resolved);
  }
  return build(out);
}

async function finishInOrder(
  items: unknown[],
  index: number,
  pending: Promise<unknown>,
  out: unknown[],
  context: unknown,
  options: TemplateOptions,
  build: (out: unknown[]) => unknown,
): Promise<unknown> {
  out.push(await pending);
  for (let i = index + 1; i < items.length; i++) out.push(await resolveValue(items[i], context, options));
  return build(out);
}

function resolveString(text: string, context: unknown, options: TemplateOptions): Resolving {
  if (!text.includes('{{')) return text;
  const whole = WHOLE_TEMPLATE.exec(text);
  if (whole && !(whole[1] ?? '').includes('}}')) {
    const expression = (whole[1] ?? '').trim();
    if (options.defer?.(expression)) return text;
    const result = evaluateTemplate(expression, context, options);
    return result instanceof Promise ? result.then(nullIfUndefined) : nullIfUndefined(result);
  }
  return interpolate(text, [...text.matchAll(TEMPLATE)], 0, '', 0, context, options);
}

function nullIfUndefined(value: unknown): unknown {
  return value === undefined ? null : value;
}

/** The text with its templates from `matches[from]` on replaced: `out` holds the text before `last`. */
function interpolate(
  text: string,
  matches: RegExpMatchArray[],
  from: number,
  out: string,
  last: number,
  context: unknown,
  options: TemplateOptions,
): Resolving {
  for (let i = from; i < matches.length; i++) {
    const match = matches[i]!;
    const expression = (match[1] ?? '').trim();
    out += text.slice(last, match.index);
    last = (match.index ?? 0) + match[0].length;
    if (options.defer?.(expression)) {
      out += match[0];
      continue;
    }
    const value = evaluateTemplate(expression, context, options);
    if (value instanceof Promise) {
      const before = out;
      const next = last;
      return value.then((resolved) =>
        interpolate(
          text,
          matches,
          i + 1,
          appendValue(before, resolved, expression, options),
          next,
          context,
          options,
        ),
      );
    }
    out = appendValue(out, value, expression, options);
  }
  return out + text.slice(last);
}

/** The text with a template's value appended; each value is within the limit, and so must the text be. */
function appendValue(out: string, value: unknown, expression: string, options: TemplateOptions): string {
  const text = out + asText(value);
  const maxValueSize = options.limits?.maxValueSize ?? DEFAULT_LIMITS.maxValueSize;
  if (text.length > maxValueSize) {
    throw new ExpressionError(
      expression,
      `the template text grew to ${text.length} characters, more than the limit of ${maxValueSize}`,
      LIMIT_CODES.tooLarge,
      undefined,
    );
  }
  return text;
}

/**
 * A template's value: a plain path read at once (plain-path.ts), with no promise or evaluator in between;
 * any other expression by the evaluator (a promise).
 */
function evaluateTemplate(expression: string, context: unknown, options: TemplateOptions): Resolving {
  const budget = options.budget ?? new EvaluationBudget();
  const plain = readPlainPath(expression, context, { ...DEFAULT_LIMITS, ...options.limits }, budget);
  if (plain) return plain.value;
  return (options.evaluate ?? evaluateExpression)(expression, context, options.limits, budget);
}

function asText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
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
