/**
 * The `evaluate_control` local activity: the expressions that steer containers (docs/definitions.md#composition)
 * and the definition's `output`. Workflow code evaluates no expression (see workers/workflows/execution.ts):
 * it asks this activity whether a container runs, which items a map runs over, which case a switch takes,
 * whether a loop is done, and what the execution's output is, and its answer is recorded in history.
 */
import {
  MAP_INLINE_ITEMS,
  STEP_ERROR_CODES,
  type ControlRequest,
  type ControlResult,
  type ControlSubject,
} from '../../core/execution-types';
import { ExpressionError } from '../../core/expressions/errors';
import { isTruthy } from '../../core/expressions/evaluate';
import { DEFAULT_LIMITS, type EvaluationLimits } from '../../core/expressions/limits';
import { itemsExpression, resolveTemplates } from '../../core/expressions/templates';
import { MAX_MAP_ITEMS } from '../../core/definitions/schema';
import type { ComputePool } from '../../platform/compute/pool';
import { pausingBudget, workspaceEvaluator } from '../../platform/compute/evaluation';

/** The same budget as one step's evaluations (steps.ts). */
const CONTROL_LIMITS: EvaluationLimits = { ...DEFAULT_LIMITS, maxSteps: 50_000 };

export interface ControlDeps {
  compute: ComputePool;
  /** Items a map may run over (MAP_MAX_ITEMS). */
  maxMapItems?: number;
}

/** The request's purpose, container and run path, which the result carries (ControlResult.of). */
function subjectOf(request: ControlRequest): ControlSubject {
  return {
    purpose: request.purpose,
    ...(request.step && { step: request.step.id }),
    ...(request.path && request.path.length > 0 && { path: request.path }),
  };
}

export function createControlEvaluator(deps: ControlDeps) {
  const evaluate = controlEvaluator(deps);
  return async function evaluate_control(request: ControlRequest): Promise<ControlResult> {
    const { at, ...found } = await evaluate(request);
    return { at, of: subjectOf(request), ...found };
  };
}

/** The evaluation itself: what the request asks, answered (without its subject). */
function controlEvaluator(deps: ControlDeps) {
  const maxItems = deps.maxMapItems ?? MAX_MAP_ITEMS;
  return async (request: ControlRequest): Promise<ControlResult> => {
    const at = new Date().toISOString();
    const budget = pausingBudget();
    const evaluate = workspaceEvaluator(deps.compute, request.workspace_id);
    const run = (expression: string) => evaluate(expression, request.context, CONTROL_LIMITS, budget);
    try {
      if (request.purpose === 'output') {
        const output = await resolveTemplates(request.output, request.context, {
          limits: CONTROL_LIMITS,
          budget,
          evaluate,
        });
        return { at, output };
      }
      const step = request.step;
      if (!step) throw new Error('evaluate_control: a container step is required');
      if (request.purpose === 'until') {
        if (step.kind !== 'loop') throw new Error('evaluate_control: `until` is a loop field');
        return { at, done: isTruthy(await run(step.until)) };
      }
      if (step.if !== undefined && !isTruthy(await run(step.if))) return { at, skip: true };
      switch (step.kind) {
        case 'map': {
          const items = await run(itemsExpression(step.items));
          if (!Array.isArray(items))
            return {
              at,
              error: {
                code: STEP_ERROR_CODES.invalidItems,
                message: `The items of step "${step.id}" are not an array (${items === undefined ? 'nothing' : typeof items}).`,
              },
            };
          if (items.length > maxItems)
            return {
              at,
              error: {
                code: STEP_ERROR_CODES.mapTooLarge,
                message: `Step "${step.id}" has ${items.length} items; a map runs over at most ${maxItems}.`,
              },
            };
          if (items.length > MAP_INLINE_ITEMS && step.holds_approval)
            return {
              at,
              error: {
                code: STEP_ERROR_CODES.mapTooLarge,
                message:
                  `Step "${step.id}" has ${items.length} items; a map whose steps include an approval runs over at ` +
                  `most ${MAP_INLINE_ITEMS} (a decision cannot reach the items of a larger map, which run in chunks).`,
              },
            };
          return { at, items };
        }
        case 'switch': {
          for (const candidate of step.cases) {
            if (isTruthy(await run(candidate.when))) return { at, case: candidate.id };
          }
          return { at, case: step.has_default ? 'default' : null };
        }
        default:
          return { at };
      }
    } catch (error) {
      if (error instanceof ExpressionError)
        return {
          at,
          error: {
            code: STEP_ERROR_CODES.expression,
            message: `Expression "${error.expression}" failed: ${error.message}`,
          },
        };
      throw error;
    }
  };
}
