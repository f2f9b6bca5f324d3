/**
 * `{{ expr }}` templates in the strings of a step's configuration
 * (docs/definitions.md#expressions-and-templates).
 */
import { ExpressionError, LIMIT_CODES } from './errors';
import { evaluateExpression } from './evaluate';
import { DEFAULT_LIMITS, type EvaluationBudget, type EvaluationLimits } from './limits';
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
  if (typeof value === 'string') return resolveString(value, context, options);
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value) out.push(await resolveTemplates(item, context, options));
    return out;
  }
  if (typeof value === 'object' && value !== null) {
    // Keys are the user's (a body's `__proto__` included): defined, never assigned (core/user-json.ts).
    const entries: [string, unknown][] = [];
    for (const [key, item] of Object.entries(value))
      entries.push([key, await resolveTemplates(item, context, options)]);
    return objectFromEntries(entries);
  }
  return value;
}

async function resolveString(text: string, context: unknown, options: TemplateOptions): Promise<unknown> {
  if (!text.includes('{{')) return text;
  const whole = WHOLE_TEMPLATE.exec(text);
  if (whole && !(whole[1] ?? '').includes('}}')) {
    const expression = (whole[1] ?? '').trim();
    if (options.defer?.(expression)) return text;
    const evaluate = options.evaluate ?? evaluateExpression;
    const result = await evaluate(expression, context, options.limits, options.budget);
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
    out += asText(
      await (options.evaluate ?? evaluateExpression)(expression, context, options.limits, options.budget),
    );
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
