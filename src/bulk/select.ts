/**
 * The executions a bulk operation's filter matches (docs/operations.md#bulk-operations): the list's own
 * filters (src/executions/list.ts: workflow, status, error_code, started_after, started_before) and a list of
 * execution ids, read from Temporal visibility page by page, each execution once (a retried one as its
 * latest run). Bounded: a filter that matches more than MAX_BULK_EXECUTIONS is refused, to be narrowed.
 */
import { invalidRequest } from '../../platform/errors';
import type { Services } from '../services';
import { listExecutions, type ListExecutionsFilters } from '../executions/list';

/** Executions one operation may act on. */
export const MAX_BULK_EXECUTIONS = 10_000;
/** Execution ids one filter may name. */
export const MAX_FILTER_IDS = 1000;
const PAGE = 1000;

export interface BulkFilter extends ListExecutionsFilters {
  execution_ids?: string[];
}

/** The execution ids the filter matches, in the list's order (open ones first, then the latest finished). */
export async function matchingExecutions(
  services: Services,
  workspaceId: string,
  filter: BulkFilter,
): Promise<string[]> {
  const ids = new Set<string>();
  const named = filter.execution_ids ? new Set(filter.execution_ids) : undefined;
  let cursor: string | undefined;
  do {
    const page = await listExecutions(services, workspaceId, {
      ...filter,
      limit: PAGE,
      ...(cursor !== undefined && { cursor }),
    });
    for (const execution of page.data) {
      if (named && !named.has(execution.execution_id)) continue;
      ids.add(execution.execution_id);
      if (ids.size > MAX_BULK_EXECUTIONS) {
        throw invalidRequest(
          `The filter matches more than ${MAX_BULK_EXECUTIONS} executions; narrow it (workflow, status, started_after, started_before) and run several operations.`,
          [{ path: '/filter', message: `matches more than ${MAX_BULK_EXECUTIONS} executions` }],
        );
      }
    }
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return [...ids];
}
