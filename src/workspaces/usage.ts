/**
 * What a workspace uses of its limits (GET /v1/workspace): the counts of its objects and of today's AI
 * tokens from the database, and its open executions: under a cap, the places its cap counts
 * (platform/store/workspace-admissions.ts, exact); without one (no places are kept), from Temporal's
 * visibility (a count query over the workspace's search attribute, as execution lists filter by it).
 */
import type { Services } from '../services';
import { aiTokensToday } from '../../platform/store/ai-usage';
import { countedUsage } from '../../platform/store/workspace-limits';
import { workspaceAdmissionCounts } from '../../platform/store/workspace-admissions';
import { NOT_QUEUED, visibilityQuery } from '../executions/list';
import { callTemporal } from '../../platform/temporal/errors';
import type { CountedLimit } from '../../core/workspace-limits';

export type WorkspaceUsage = Record<CountedLimit, number> & {
  open_executions: number;
  ai_tokens_today: number;
};

export async function workspaceUsage(services: Services, workspaceId: string): Promise<WorkspaceUsage> {
  const [counts, ai, open] = await Promise.all([
    countedUsage(services.db, workspaceId),
    aiTokensToday(services.db, workspaceId),
    openExecutions(services, workspaceId),
  ]);
  return { ...counts, open_executions: open, ai_tokens_today: ai.tokens };
}

/**
 * Executions of the workspace that are running or waiting, not queued: the places its cap holds; without a
 * cap, Temporal runs still open and not queued.
 */
export async function openExecutions(services: Services, workspaceId: string): Promise<number> {
  const cap = await services.reads.workspaceLimit(
    workspaceId,
    'open_executions',
    services.config.workspaceLimits.open_executions,
  );
  if (cap !== null) return (await workspaceAdmissionCounts(services.db, workspaceId)).open;
  const { connection, namespace } = services.temporal;
  const query = `${visibilityQuery(workspaceId, {})} AND ExecutionStatus = 'Running' AND ${NOT_QUEUED}`;
  const response = await callTemporal(connection, () =>
    connection.workflowService.countWorkflowExecutions({ namespace, query }),
  );
  return Number(response.count ?? 0);
}
