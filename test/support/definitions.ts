/**
 * Saving definitions in unit tests: parseDefinition (src/definitions/validate.ts) with a real compute pool
 * for its JSON Schemas, the problems a refused definition reports, and small definition builders.
 */
import { expect } from 'chai';
import { ComputePool } from '../../platform/compute/pool';
import { SchemaValidator } from '../../platform/compute/schemas';
import { AppError, type ErrorDetail } from '../../platform/errors';
import { parseDefinition as parse } from '../../src/definitions/validate';
import type { Definition } from '../../core/definitions/schema';

/** parseDefinition and problemsOf for one test file; its compute pool closes after the file's tests. */
export function definitionChecks(): {
  parseDefinition: (definition: unknown) => Promise<Definition>;
  problemsOf: (definition: unknown) => Promise<ErrorDetail[]>;
} {
  const compute = new ComputePool({ threads: 1 });
  after(() => compute.close());
  const schemas = new SchemaValidator(compute);
  const parseDefinition = (definition: unknown) => parse(definition, schemas, 'ws-test');
  /** The `details` of the 400 invalid_definition the definition gets; fails the test when it is accepted. */
  async function problemsOf(definition: unknown): Promise<ErrorDetail[]> {
    try {
      await parseDefinition(definition);
    } catch (error) {
      expect(error).to.be.instanceOf(AppError);
      expect((error as AppError).code).to.equal('invalid_definition');
      return (error as AppError).details;
    }
    return expect.fail('the definition should have been rejected');
  }
  return { parseDefinition, problemsOf };
}

export const base = (steps: unknown[], extra: Record<string, unknown> = {}) => ({
  id: 'wf',
  steps,
  ...extra,
});

export const rules = (id: string, when = 'true', more: Record<string, unknown> = {}) => ({
  id,
  kind: 'rules',
  rules: [{ when, output: 1 }],
  ...more,
});
