/**
 * Checking workspaces' JSON Schemas (an input_schema on save and on every trigger, an ai step's
 * output_schema on every answer) without letting one hold the event loop (core/definitions/input-schema.ts
 * says what is bounded). A validation whose cost is bounded by the schema's size times the input's, and
 * small, runs here, inline: what almost every trigger does. Anything else (a large schema or input,
 * regular expressions, references) runs on a compute thread with the pool's time limit (pool.ts), and so
 * does every compilation on save.
 */
import {
  CompiledSchemas,
  SchemaError,
  schemaProblems,
  schemaShape,
  validateWith,
  validationCost,
  type SchemaShape,
} from '../../core/definitions/input-schema';
import type { ErrorDetail } from '../../core/error-detail';
import { jsonByteLength } from '../../core/step-data';
import { ComputeLimitError, type ComputePool } from './pool';

/**
 * Largest schema compiled on the event loop: compiling costs about 0.7 ms of CPU per node (once per schema
 * and process), so a few milliseconds here. An object of a handful of fields is some 5 to 10 nodes.
 */
const INLINE_MAX_NODES = 16;
/** Largest validationCost run on the event loop: a millisecond or so. */
const INLINE_MAX_COST = 4_000_000;

export interface SchemaValidation {
  /** Why the schema cannot be used (too big, not JSON Schema, does not compile), or undefined. */
  check(workspaceId: string, schema: Record<string, unknown>): Promise<string | undefined>;
  /**
   * Validates `input`: the problems (empty when valid) and the input with the schema's defaults filled
   * in. Throws SchemaError when the schema itself cannot be used.
   */
  validate(
    workspaceId: string,
    schema: Record<string, unknown>,
    input: unknown,
  ): Promise<{ problems: ErrorDetail[]; value: unknown }>;
}

export class SchemaValidator implements SchemaValidation {
  /** Small schemas only (INLINE_MAX_NODES): a few MB at most. */
  private readonly inline = new CompiledSchemas({ maxEntries: 256, maxBytes: 16 * 1024 * 1024 });
  /** Shapes by schema object: a definition version's schema is one object for as long as it is cached. */
  private readonly shapes = new WeakMap<object, SchemaShape>();

  constructor(private readonly pool: ComputePool) {}

  async check(workspaceId: string, schema: Record<string, unknown>): Promise<string | undefined> {
    const problems = schemaProblems(this.shapeOf(schema));
    if (problems.length > 0) return `the schema ${problems.join('; ')}`;
    try {
      return (await this.pool.run(workspaceId, { kind: 'compile_schema', workspaceId, schema })).schemaError;
    } catch (error) {
      if (error instanceof ComputeLimitError) return `compiling the schema ${error.message}`;
      throw error;
    }
  }

  async validate(
    workspaceId: string,
    schema: Record<string, unknown>,
    input: unknown,
  ): Promise<{ problems: ErrorDetail[]; value: unknown }> {
    const shape = this.shapeOf(schema);
    if (shape.nodes <= INLINE_MAX_NODES && validationCost(shape, jsonByteLength(input)) <= INLINE_MAX_COST) {
      return { problems: validateWith(this.inline.get(workspaceId, schema), input), value: input };
    }
    try {
      const result = await this.pool.run(workspaceId, { kind: 'validate', workspaceId, schema, input });
      if (result.schemaError !== undefined) throw new SchemaError(result.schemaError);
      return { problems: result.problems, value: result.value };
    } catch (error) {
      if (!(error instanceof ComputeLimitError)) throw error;
      return {
        problems: [
          { path: '', message: `could not be checked against the schema: validation ${error.message}` },
        ],
        value: input,
      };
    }
  }

  private shapeOf(schema: Record<string, unknown>): SchemaShape {
    let shape = this.shapes.get(schema);
    if (!shape) {
      shape = schemaShape(schema);
      this.shapes.set(schema, shape);
    }
    return shape;
  }
}
