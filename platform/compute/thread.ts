/**
 * A compute thread (pool.ts): compiles and runs workspaces' JSON Schemas and evaluates their expressions
 * that use regular expressions, one task at a time, killed by the pool when a task outruns its limit.
 * Its compiled schemas are cached here, per workspace, within a bound.
 */
import { parentPort } from 'node:worker_threads';
import { CompiledSchemas, SchemaError, validateWith } from '../../core/definitions/input-schema';
import { ExpressionError } from '../../core/expressions/errors';
import { evaluateExpression } from '../../core/expressions/evaluate';
import { EvaluationBudget } from '../../core/expressions/limits';
import type {
  CompileSchemaResult,
  ComputeTask,
  EvaluateResult,
  EvaluateTask,
  ValidateResult,
  ValidateTask,
} from './tasks';
import type { ThreadMessage } from './pool';
import { osThreadId } from './thread-cpu';

/** Within the thread's heap limit (pool.ts: 256 MB by default), with room for the tasks themselves. */
const schemas = new CompiledSchemas({ maxEntries: 256, maxBytes: 96 * 1024 * 1024 });

async function runTask(task: ComputeTask): Promise<unknown> {
  switch (task.kind) {
    case 'compile_schema':
      return compile(task.workspaceId, task.schema);
    case 'validate':
      return validate(task);
    case 'evaluate':
      return evaluate(task);
  }
}

function compile(workspaceId: string, schema: Record<string, unknown>): CompileSchemaResult {
  try {
    schemas.get(workspaceId, schema);
    return {};
  } catch (error) {
    if (error instanceof SchemaError) return { schemaError: error.message };
    throw error;
  }
}

function validate(task: ValidateTask): ValidateResult {
  let validator;
  try {
    validator = schemas.get(task.workspaceId, task.schema);
  } catch (error) {
    if (error instanceof SchemaError) return { schemaError: error.message, problems: [], value: task.input };
    throw error;
  }
  return { problems: validateWith(validator, task.input), value: task.input };
}

async function evaluate(task: EvaluateTask): Promise<EvaluateResult> {
  const budget = new EvaluationBudget();
  budget.steps = task.used.steps;
  budget.work = task.used.work;
  try {
    const value = await evaluateExpression(task.expression, task.context, task.limits, budget);
    return { value, used: { steps: budget.steps, work: budget.work } };
  } catch (error) {
    if (!(error instanceof ExpressionError)) throw error;
    return {
      error: { code: error.code, message: error.message, position: error.position },
      used: { steps: budget.steps, work: budget.work },
    };
  }
}

/** Tasks arrive one at a time: the pool sends the next only once this one is answered. */
parentPort?.on('message', (task: ComputeTask) => {
  runTask(task).then(
    (result) => parentPort!.postMessage({ result } satisfies ThreadMessage),
    (error: unknown) =>
      parentPort!.postMessage({
        error: { name: (error as Error).name ?? 'Error', message: (error as Error).message ?? String(error) },
      } satisfies ThreadMessage),
  );
});
parentPort?.postMessage({ ready: true, tid: osThreadId() } satisfies ThreadMessage);
