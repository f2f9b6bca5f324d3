/**
 * AI tokens each workspace's steps used today (UTC), for the `ai_tokens_per_day` budget
 * (docs/operations.md#workspace-limits). One row per workspace (migration 009): the first tokens of a new
 * day replace the previous day's count. The day is the database's, so every worker process agrees on it.
 */
import type { Queryable } from './db';

const TODAY = "(now() at time zone 'utc')::date";

/** Adds a call's tokens to the workspace's count for today. */
export async function addAiTokens(db: Queryable, workspaceId: string, tokens: number): Promise<void> {
  await db.query(
    `insert into workspace_ai_usage as usage (workspace_id, day, tokens) values ($1, ${TODAY}, $2)
     on conflict (workspace_id) do update set
       tokens = case when usage.day = excluded.day then usage.tokens + excluded.tokens else excluded.tokens end,
       day = excluded.day`,
    [workspaceId, tokens],
  );
}

/** The tokens the workspace's AI steps used today, and when today ends (UTC midnight, the count's reset). */
export async function aiTokensToday(
  db: Queryable,
  workspaceId: string,
): Promise<{ tokens: number; resetsAt: Date }> {
  const [row] = await db.query<{ tokens: string | number; resets_at: Date }>(
    `select coalesce((select tokens from workspace_ai_usage where workspace_id = $1 and day = ${TODAY}), 0) as tokens,
            ((${TODAY} + 1)::timestamp at time zone 'utc') as resets_at`,
    [workspaceId],
  );
  return { tokens: Number(row!.tokens), resetsAt: row!.resets_at };
}
