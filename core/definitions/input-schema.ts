/**
 * A workflow's `input_schema` and an ai step's `output_schema` (JSON Schema 2020-12, Ajv), written by
 * workspaces that may be hostile (docs/operations.md#threat-model):
 *
 * - Isolation: every schema compiles in an Ajv instance of its own, so no `$id` or `$ref` of one schema
 *   (of one workspace) ever resolves to another's, and a compiled validator holds nothing of any other.
 *   Only the check against the JSON Schema meta-schema is shared, and it adds nothing to its instance.
 * - Bounded size: a schema is at most SCHEMA_LIMITS big and deep (schemaProblems), so compiling one takes
 *   milliseconds; compiled validators are cached per process in a bounded LRU (CompiledSchemas).
 * - Linear time: `pattern` and `patternProperties` run on RE2 (linear-regex.ts); `uniqueItems` compares
 *   canonical JSON in a set instead of every pair. What still grows with schema size times input size
 *   (many subschemas over a large input, `$ref` recursion, regular expressions) is for the caller to run
 *   off the event loop with a time limit: validationCost says how much a validation may cost.
 */
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { LRUCache } from 'lru-cache';
import type { ErrorDetail } from '../error-detail';
import { compileLinear } from '../expressions/linear-regex';
import { jsonByteLength } from '../step-data';

export const SCHEMA_LIMITS = {
  /** JSON text of the schema. */
  maxBytes: 64 * 1024,
  /** Nesting of objects and arrays in the schema. */
  maxDepth: 32,
  /** Objects and arrays in the schema (its subschemas and keyword values): compiling is ~0.7 ms each. */
  maxNodes: 1000,
};

/** What a schema costs to validate with, found by walking it once. */
export interface SchemaShape {
  bytes: number;
  depth: number;
  nodes: number;
  /**
   * Its validation time is not bounded by its size times the input's: it matches regular expressions
   * (`pattern`, `patternProperties`, `format: "regex"`) or follows references (`$ref`, `$dynamicRef`,
   * `$recursiveRef`), which may recurse or branch without consuming input.
   */
  unbounded: boolean;
}

const UNBOUNDED_KEYWORDS = new Set(['pattern', 'patternProperties', '$ref', '$dynamicRef', '$recursiveRef']);

export function schemaShape(schema: unknown): SchemaShape {
  const bytes = jsonByteLength(schema);
  let depth = 0;
  let nodes = 0;
  let unbounded = false;
  const pending: [unknown, number][] = [[schema, 1]];
  while (pending.length > 0) {
    const [node, level] = pending.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    nodes += 1;
    depth = Math.max(depth, level);
    if (nodes > SCHEMA_LIMITS.maxNodes || depth > SCHEMA_LIMITS.maxDepth) break;
    if (!Array.isArray(node)) {
      for (const key of Object.keys(node)) if (UNBOUNDED_KEYWORDS.has(key)) unbounded = true;
      if ((node as { format?: unknown }).format === 'regex') unbounded = true;
    }
    for (const child of Object.values(node)) pending.push([child, level + 1]);
  }
  return { bytes, depth, nodes, unbounded };
}

/** Why a schema is refused before it is compiled (too big or too deep), or an empty list. */
export function schemaProblems(shape: SchemaShape): string[] {
  const problems: string[] = [];
  if (shape.bytes > SCHEMA_LIMITS.maxBytes)
    problems.push(`is ${shape.bytes} bytes as JSON, more than the limit of ${SCHEMA_LIMITS.maxBytes}`);
  if (shape.depth > SCHEMA_LIMITS.maxDepth)
    problems.push(`is nested deeper than ${SCHEMA_LIMITS.maxDepth} levels`);
  if (shape.nodes > SCHEMA_LIMITS.maxNodes)
    problems.push(`holds more than ${SCHEMA_LIMITS.maxNodes} objects and arrays`);
  return problems;
}

/**
 * An upper estimate of a validation's work: the schema's nodes times the input's size, each subschema
 * being applied at most once per place in the input. Infinity when the schema is unbounded (above).
 */
export function validationCost(shape: SchemaShape, inputBytes: number): number {
  return shape.unbounded ? Number.POSITIVE_INFINITY : shape.nodes * Math.max(1, inputBytes);
}

/** A schema that cannot be used: not JSON Schema, or past the limits; the message says why. */
export class SchemaError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SchemaError';
  }
}

/** Ajv runs `pattern` and `patternProperties` with this: RE2, linear in the input (linear-regex.ts). */
const linearRegExp = Object.assign(
  (pattern: string, flags: string) => {
    const compiled = compileLinear(pattern, flags);
    return { test: (text: string) => compiled.test(text) };
  },
  { code: 'linearRegExp' },
);

/** Checks schemas against the 2020-12 meta-schema; never compiles or keeps a user schema. */
let metaValidator: Ajv2020 | undefined;

function checkAgainstMetaSchema(schema: Record<string, unknown>): void {
  metaValidator ??= new Ajv2020({ allErrors: true, strict: false });
  let valid: boolean;
  try {
    valid = metaValidator.validateSchema(schema) as boolean;
  } catch (error) {
    throw new SchemaError((error as Error).message);
  }
  if (!valid) throw new SchemaError(metaValidator.errorsText(metaValidator.errors, { dataVar: 'schema' }));
}

/** JSON Schema equality (key order aside) as one string per value: linear in the value's size. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  return `{${Object.keys(value)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`)
    .join(',')}}`;
}

interface KeywordValidate {
  (schema: boolean, data: unknown[]): boolean;
  errors?: Partial<ErrorObject>[];
}

/** `uniqueItems` in linear time: Ajv's own compares every pair of items deeply when their type is open. */
const uniqueItems: KeywordValidate = (schema, data) => {
  if (!schema) return true;
  const seen = new Map<string, number>();
  for (const [index, item] of data.entries()) {
    const key = canonicalJson(item);
    const first = seen.get(key);
    if (first !== undefined) {
      uniqueItems.errors = [
        {
          keyword: 'uniqueItems',
          message: `must NOT have duplicate items (items ## ${first} and ${index} are identical)`,
          params: { i: first, j: index },
        },
      ];
      return false;
    }
    seen.set(key, index);
  }
  return true;
};

/**
 * Compiles a schema in an instance of its own (see the header); throws SchemaError when the schema is
 * past the limits or is not valid JSON Schema.
 */
export function compileSchema(schema: Record<string, unknown>): ValidateFunction {
  const problems = schemaProblems(schemaShape(schema));
  if (problems.length > 0) throw new SchemaError(`the schema ${problems.join('; ')}`);
  checkAgainstMetaSchema(schema);
  const ajv = new Ajv2020({
    allErrors: true,
    strict: false,
    useDefaults: true,
    coerceTypes: false,
    // Checked above with the shared meta-schema validator; this instance knows no meta-schema at all.
    validateSchema: false,
    meta: false,
    // Small referenced schemas only: inlining large ones repeats their code at every reference.
    inlineRefs: 8,
    code: { regExp: linearRegExp },
  });
  addFormats(ajv);
  ajv.removeKeyword('uniqueItems');
  ajv.addKeyword({ keyword: 'uniqueItems', type: 'array', schemaType: 'boolean', validate: uniqueItems });
  try {
    return ajv.compile(structuredClone(schema));
  } catch (error) {
    throw new SchemaError((error as Error).message);
  }
}

/** Details past this many are left out of an answer (a huge invalid input can fail everywhere). */
const MAX_DETAILS = 100;

/** Validates input (defaults from the schema are filled in place); returns the problems, empty when valid. */
export function validateWith(validate: ValidateFunction, input: unknown): ErrorDetail[] {
  try {
    if (validate(input)) return [];
  } catch (error) {
    // Validators recurse with the input: past the stack's depth the input is refused, not the process.
    if (error instanceof RangeError) return [{ path: '', message: 'is nested too deeply to validate' }];
    throw error;
  }
  return (validate.errors ?? []).slice(0, MAX_DETAILS).map(toDetail);
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

/**
 * A compiled validator's memory, estimated from its schema's JSON text: Ajv's generated code and its
 * instance take some 14 times the text (measured on schemas of 3 to 100 properties).
 */
const COMPILED_BYTES_PER_SCHEMA_BYTE = 16;
/** What a remembered refusal weighs: its message. */
const REFUSAL_BYTES = 1024;

/**
 * Compiled validators of this process (or thread), by workspace and schema text, least recently used
 * dropped past `maxEntries` or past `maxBytes` of estimated memory (with their Ajv instances: nothing
 * else holds them).
 */
export class CompiledSchemas {
  private readonly cache: LRUCache<string, ValidateFunction | SchemaError>;

  constructor({ maxEntries, maxBytes }: { maxEntries: number; maxBytes: number }) {
    this.cache = new LRUCache({
      max: maxEntries,
      maxSize: maxBytes,
      sizeCalculation: (_value, key) => this.sizeOf(key),
    });
  }

  get size(): number {
    return this.cache.size;
  }

  /** Estimated memory of what is cached, in bytes. */
  get bytes(): number {
    return this.cache.calculatedSize;
  }

  /** The schema's validator; throws SchemaError (remembered too) when it cannot be compiled. */
  get(
    workspaceId: string,
    schema: Record<string, unknown>,
    schemaText = JSON.stringify(schema),
  ): ValidateFunction {
    const key = `${workspaceId}\n${schemaText}`;
    let compiled = this.cache.get(key);
    if (compiled === undefined) {
      try {
        compiled = compileSchema(schema);
      } catch (error) {
        if (!(error instanceof SchemaError)) throw error;
        compiled = error;
      }
      this.cache.set(key, compiled);
    }
    if (compiled instanceof SchemaError) throw compiled;
    return compiled;
  }

  private sizeOf(key: string): number {
    return Math.max(REFUSAL_BYTES, key.length * COMPILED_BYTES_PER_SCHEMA_BYTE);
  }
}
