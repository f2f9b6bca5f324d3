/**
 * The AI token budget of a workspace (`ai_tokens_per_day`, docs/operations.md#workspace-limits): an ai step
 * whose workspace has used its tokens for the day (UTC) fails with `ai_budget_exceeded` before calling the
 * provider; every call that reached the provider adds the tokens it used (the provider's `usage`) to the
 * day's count. A call that starts under the limit may end above it: the budget stops the next call, not
 * the one in flight, whose size is not known in advance.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { addAiTokens, aiTokensToday } from '../../platform/store/ai-usage';
import type { Queryable } from '../../platform/store/db';
import { effectiveLimit } from '../../platform/store/workspace-limits';
import { STEP_ERROR_CODES } from '../../core/execution-types';
import type { LimitValue } from '../../core/workspace-limits';

export interface AiBudget {
  /** Throws a non-retryable `ai_budget_exceeded` failure when the workspace has no tokens left today. */
  check(workspaceId: string): Promise<void>;
  /** Adds the tokens of a provider's `usage` to the workspace's count for today. */
  record(workspaceId: string, usage: Record<string, unknown> | undefined): Promise<void>;
}

/**
 * @param aiTokensPerDay the default limit (WORKSPACE_MAX_AI_TOKENS_PER_DAY; null: unlimited), which a
 *   workspace's own setting overrides.
 */
export function createAiBudget(db: Queryable, aiTokensPerDay: LimitValue): AiBudget {
  return {
    async check(workspaceId) {
      const max = await effectiveLimit(db, workspaceId, 'ai_tokens_per_day', aiTokensPerDay);
      if (max === null) return;
      const { tokens, resetsAt } = await aiTokensToday(db, workspaceId);
      if (tokens < max) return;
      throw ApplicationFailure.nonRetryable(
        `This workspace has used ${tokens} of its ${max} AI tokens for today (limit ai_tokens_per_day); ` +
          `ai steps run again after the count resets at ${resetsAt.toISOString()} (00:00 UTC).`,
        STEP_ERROR_CODES.aiBudgetExceeded,
      );
    },
    async record(workspaceId, usage) {
      const tokens = tokensOf(usage);
      if (tokens > 0) await addAiTokens(db, workspaceId, tokens);
    },
  };
}

/** The tokens a call used: `total_tokens`, else its prompt and completion tokens added up. */
export function tokensOf(usage: Record<string, unknown> | undefined): number {
  const count = (value: unknown): number =>
    typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
  if (!usage) return 0;
  const total = count(usage['total_tokens']);
  return total > 0 ? total : count(usage['prompt_tokens']) + count(usage['completion_tokens']);
}
