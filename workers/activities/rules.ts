/** The rules step: first matching rule wins; no match gives `default` (CONTRACT §4). */
import { ApplicationFailure } from '@temporalio/activity';
import {
  DEFAULT_LIMITS,
  ExpressionError,
  evaluateExpression,
  isTruthy,
  resolveTemplates,
  type EvaluationLimits,
} from '../shared/expressions';
import {
  STEP_ERROR_CODES,
  type RulesActivityInput,
  type RulesActivityResult,
} from '../shared/execution-types';

/** Outside the workflow sandbox a wall-clock limit works too. */
const LIMITS: EvaluationLimits = { ...DEFAULT_LIMITS, timeoutMs: 2000 };

export async function rules(input: RulesActivityInput): Promise<RulesActivityResult> {
  try {
    for (const [index, rule] of input.rules.entries()) {
      if (!isTruthy(await evaluateExpression(rule.when, input.data, LIMITS))) continue;
      const output =
        rule.output === undefined
          ? null
          : await resolveTemplates(rule.output, input.data, { limits: LIMITS });
      const result: RulesActivityResult = { matched: index, action: rule.action ?? 'continue', output };
      if (rule.message !== undefined)
        result.message = String(await resolveTemplates(rule.message, input.data, { limits: LIMITS }));
      return result;
    }
    const output =
      input.default === undefined
        ? null
        : await resolveTemplates(input.default, input.data, { limits: LIMITS });
    return { matched: null, action: 'continue', output };
  } catch (error) {
    if (error instanceof ExpressionError) {
      throw ApplicationFailure.nonRetryable(
        `Expression "${error.expression}" failed: ${error.message}`,
        STEP_ERROR_CODES.expression,
      );
    }
    throw error;
  }
}
