/** What the compute threads do (thread.ts), and what they answer: plain data, copied between threads. */
import type { ErrorDetail } from '../../core/error-detail';
import type { EvaluationLimits } from '../../core/expressions/limits';

export interface CompileSchemaTask {
  kind: 'compile_schema';
  workspaceId: string;
  schema: Record<string, unknown>;
}

export interface ValidateTask {
  kind: 'validate';
  workspaceId: string;
  schema: Record<string, unknown>;
  input: unknown;
}

export interface EvaluateTask {
  kind: 'evaluate';
  expression: string;
  context: unknown;
  limits: EvaluationLimits;
  /** Steps and work the step's earlier evaluations used (its budget is shared: EvaluationBudget). */
  used: { steps: number; work: number };
}

export type ComputeTask = CompileSchemaTask | ValidateTask | EvaluateTask;

/** A schema that cannot be used (SchemaError's message), or none. */
export interface CompileSchemaResult {
  schemaError?: string;
}

/** The problems (empty: valid) and the input with the schema's defaults filled in. */
export interface ValidateResult {
  schemaError?: string;
  problems: ErrorDetail[];
  value: unknown;
}

export interface EvaluateResult {
  value?: unknown;
  /** The ExpressionError, when the evaluation failed. */
  error?: { code: string; message: string; position: number | undefined };
  used: { steps: number; work: number };
}

export interface ComputeResults {
  compile_schema: CompileSchemaResult;
  validate: ValidateResult;
  evaluate: EvaluateResult;
}
