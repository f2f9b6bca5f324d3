/**
 * The limits every workspace has (docs/operations.md#workspace-limits): their names, as the API, the
 * admin CLI and the database spell them, and what each counts. A limit's value is a maximum, or null for
 * unlimited.
 */

export const LIMIT_NAMES = [
  'workflows',
  'secrets',
  'webhook_endpoints',
  'api_keys',
  'open_executions',
  'steps_per_definition',
  'ai_tokens_per_day',
] as const;

export type LimitName = (typeof LIMIT_NAMES)[number];

/** A maximum, or null: unlimited. */
export type LimitValue = number | null;

export type WorkspaceLimits = Record<LimitName, LimitValue>;

/** The limits on how many objects a workspace keeps: creating one more than allowed is 409 limit_exceeded. */
export const COUNTED_LIMITS = ['workflows', 'secrets', 'webhook_endpoints', 'api_keys'] as const;
export type CountedLimit = (typeof COUNTED_LIMITS)[number];

/** What each limit counts, for messages ("at most 50 webhook endpoints"). */
export const LIMIT_UNITS: Record<LimitName, string> = {
  workflows: 'workflows',
  secrets: 'secrets',
  webhook_endpoints: 'webhook endpoints',
  api_keys: 'active API keys',
  open_executions: 'open executions',
  steps_per_definition: 'steps in a definition',
  ai_tokens_per_day: 'AI tokens a day',
};

export function isLimitName(value: string): value is LimitName {
  return (LIMIT_NAMES as readonly string[]).includes(value);
}
