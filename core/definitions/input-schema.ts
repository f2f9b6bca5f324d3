/**
 * A workflow's `input_schema` (JSON Schema 2020-12, Ajv). Compiled validators are cached per schema
 * text, so validating a trigger costs one map lookup plus the validation itself.
 */
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { ErrorDetail } from '../error-detail';
import { hasNestedQuantifier } from '../expressions/safe-regex';

/**
 * Ajv runs `pattern`s with the JavaScript engine, which backtracks exponentially on patterns that repeat
 * a repeated group: `(a+)+$` against 30 characters blocks the process for seconds, 40 for hours. Such
 * patterns are refused when the schema is compiled, i.e. when the workflow is saved.
 */
const checkedRegExp = Object.assign(
  (pattern: string, flags: string): RegExp => {
    if (hasNestedQuantifier(pattern)) {
      throw new Error(
        `pattern /${pattern}/ repeats a repeated group, which can backtrack without bound; rewrite it without nested quantifiers`,
      );
    }
    return new RegExp(pattern, flags);
  },
  { code: 'checkedRegExp' },
);

const ajv = new Ajv2020({
  allErrors: true,
  strict: false,
  useDefaults: true,
  coerceTypes: false,
  code: { regExp: checkedRegExp },
});
addFormats(ajv);

const MAX_CACHED = 1000;
const cache = new Map<string, ValidateFunction>();

/** Compiles a schema (cached); throws the Ajv error when the schema itself is invalid. */
export function compileInputSchema(schema: Record<string, unknown>): ValidateFunction {
  const cacheKey = JSON.stringify(schema);
  let validate = cache.get(cacheKey);
  if (!validate) {
    validate = ajv.compile(schema);
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
    cache.set(cacheKey, validate);
  }
  return validate;
}

/** Validates input (defaults from the schema are filled in place); returns the problems, empty when valid. */
export function validateInput(schema: Record<string, unknown> | undefined, input: unknown): ErrorDetail[] {
  if (!schema) return [];
  const validate = compileInputSchema(schema);
  if (validate(input)) return [];
  return (validate.errors ?? []).map(toDetail);
}

function toDetail(error: ErrorObject): ErrorDetail {
  // Name the missing property in the path, which is where a user will look for it.
  if (error.keyword === 'required') {
    const missing = (error.params as { missingProperty: string }).missingProperty;
    return { path: `${error.instancePath}/${missing}`, message: 'is required' };
  }
  if (error.keyword === 'additionalProperties') {
    const extra = (error.params as { additionalProperty: string }).additionalProperty;
    return { path: `${error.instancePath}/${extra}`, message: 'is not allowed' };
  }
  return { path: error.instancePath, message: error.message ?? 'is invalid' };
}
