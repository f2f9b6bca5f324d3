/**
 * Where a workspace's expressions are evaluated (a step's in the worker, an event trigger's `if` in the
 * API's event dispatcher): on the process's event loop, within counted budgets that pause
 * every few thousand steps (core/expressions/evaluate.ts), unless the expression matches regular
 * expressions. A match is linear in its input on RE2, but one call over a long string cannot pause, so
 * those evaluations run on a compute thread, in the workspace's turn, killed past the time limit
 * (platform/compute/pool.ts). The step's budget of steps and work is shared either way.
 */
import { ExpressionError, LIMIT_CODES } from '../../core/expressions/errors';
import { evaluateExpression } from '../../core/expressions/evaluate';
import {
  DEFAULT_LIMITS,
  EvaluationBudget,
  type EvaluationLimits,
  type EvaluationThread,
} from '../../core/expressions/limits';
import { matchesRegex } from '../../core/expressions/references';
import type { Evaluate } from '../../core/expressions/templates';
import { EvaluationTurns } from '../../core/expressions/turns';
import { ComputeLimitError, type ComputePool } from './pool';
import { threadCpuClock } from './thread-cpu';

/** Evaluation steps between two pauses: a few milliseconds of work. */
const PAUSE_EVERY_STEPS = 2000;

let thread: EvaluationThread | undefined;

/**
 * A budget for evaluations on this thread's event loop (a step's, a trigger's, a debounce key's): they
 * run one slice of PAUSE_EVERY_STEPS at a time, each slice after a pause in a later turn of the event
 * loop, and their time limit counts the thread's CPU time once they run long (core/expressions/limits.ts).
 */
export function pausingBudget(): EvaluationBudget {
  thread ??= {
    every: PAUSE_EVERY_STEPS,
    turns: new EvaluationTurns((run) => setImmediate(run)),
    cpuMs: threadCpuClock(),
  };
  return new EvaluationBudget(thread);
}

/** Evaluates expressions of `workspaceId` (evaluateExpression's signature). */
export function workspaceEvaluator(compute: ComputePool, workspaceId: string): Evaluate {
  return async (expression, context, limits = {}, budget = new EvaluationBudget()) => {
    if (!matchesRegex(expression)) return evaluateExpression(expression, context, limits, budget);
    const effective: EvaluationLimits = { ...DEFAULT_LIMITS, ...limits };
    let result;
    try {
      result = await compute.run(workspaceId, {
        kind: 'evaluate',
        expression,
        context,
        limits: effective,
        used: { steps: budget.steps, work: budget.work },
      });
    } catch (error) {
      if (!(error instanceof ComputeLimitError)) throw error;
      throw new ExpressionError(
        expression,
        `evaluation ${error.message}`,
        error.limit === 'time' ? LIMIT_CODES.time : LIMIT_CODES.tooLarge,
        undefined,
      );
    }
    budget.steps = result.used.steps;
    budget.work = result.used.work;
    if (result.error)
      throw new ExpressionError(expression, result.error.message, result.error.code, result.error.position);
    return result.value;
  };
}
