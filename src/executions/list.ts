/**
 * Listing executions (docs/api.md#executions) from Temporal visibility: filtered by workspace always, by
 * workflow and status on request; ordered as visibility keeps them (open runs first, then the most recently
 * closed). Eventually consistent: a run appears within about a second of its start.
 */
import { defaultPayloadConverter, type PayloadCodec } from '@temporalio/common';
import { optionalTsToDate } from '@temporalio/common/lib/time';
import type { temporal } from '@temporalio/proto';
import { decodeCursor, encodeCursor, isString } from '../http/cursor';
import type { Services } from '../services';
import { supersededRuns } from '../../platform/store/execution-retries';
import { decodePayloads } from '../../platform/temporal/encryption-codec';
import { callTemporal } from '../../platform/temporal/errors';
import { visibilityString } from '../../platform/temporal/visibility-query';
import type { ExecutionError } from '../../core/error-detail';
import { EXECUTION_WORKFLOW_TYPE } from '../../core/execution-types';
import {
  ERROR_CODE_ATTRIBUTE,
  QUEUED_ATTRIBUTE,
  TRIGGER_ATTRIBUTE,
  VERSION_ATTRIBUTE,
  WAITING_ATTRIBUTE,
  WORKFLOW_ATTRIBUTE,
  WORKSPACE_ATTRIBUTE,
} from '../../core/search-attributes';
import { closedFromOutsideError, executionStatus } from './status';
import {
  durationMs,
  errorViewOf,
  type ErrorView,
  type ExecutionStatus,
  type ExecutionSummary,
} from './views';

export interface ListExecutionsQuery {
  workflow?: string;
  status?: ExecutionStatus;
  /** Failed executions whose error has this code. */
  error_code?: string;
  /** Executions started at or after this time (RFC 3339). */
  started_after?: string;
  /** Executions started before this time (RFC 3339). */
  started_before?: string;
  limit: number;
  cursor?: string;
}

/** The filters of a list, which its cursors are bound to. */
export interface ListExecutionsFilters extends Pick<
  ListExecutionsQuery,
  'workflow' | 'status' | 'error_code' | 'started_after' | 'started_before'
> {
  /** Only these executions (a bulk operation's filter, src/bulk/select.ts; not a list parameter). */
  execution_ids?: string[];
}

/** Runs that never queued have no SwitchyardQueued (core/search-attributes.ts): not queued either. */
export const NOT_QUEUED = `(${QUEUED_ATTRIBUTE.name} IS NULL OR ${QUEUED_ATTRIBUTE.name} = false)`;

const STATUS_CLAUSES: Record<ExecutionStatus, string> = {
  queued: `ExecutionStatus = 'Running' AND ${QUEUED_ATTRIBUTE.name} = true`,
  running: `ExecutionStatus = 'Running' AND ${WAITING_ATTRIBUTE.name} = false AND ${NOT_QUEUED}`,
  waiting: `ExecutionStatus = 'Running' AND ${WAITING_ATTRIBUTE.name} = true`,
  success: `ExecutionStatus = 'Completed'`,
  failed: `ExecutionStatus = 'Failed'`,
  canceled: `ExecutionStatus = 'Canceled'`,
  terminated: `ExecutionStatus = 'Terminated'`,
  timed_out: `ExecutionStatus = 'TimedOut'`,
};

export function visibilityQuery(workspaceId: string, filters: ListExecutionsFilters): string {
  const clauses = [
    `WorkflowType = ${visibilityString(EXECUTION_WORKFLOW_TYPE)}`,
    `${WORKSPACE_ATTRIBUTE.name} = ${visibilityString(workspaceId)}`,
  ];
  if (filters.workflow !== undefined)
    clauses.push(`${WORKFLOW_ATTRIBUTE.name} = ${visibilityString(filters.workflow)}`);
  if (filters.status !== undefined) clauses.push(STATUS_CLAUSES[filters.status]);
  if (filters.error_code !== undefined)
    clauses.push(`${ERROR_CODE_ATTRIBUTE.name} = ${visibilityString(filters.error_code)}`);
  // Times as UTC RFC 3339 (the API checked them): what visibility compares StartTime with.
  if (filters.started_after !== undefined)
    clauses.push(`StartTime >= ${visibilityString(new Date(filters.started_after).toISOString())}`);
  if (filters.started_before !== undefined)
    clauses.push(`StartTime < ${visibilityString(new Date(filters.started_before).toISOString())}`);
  if (filters.execution_ids !== undefined)
    clauses.push(`WorkflowId IN (${filters.execution_ids.map(visibilityString).join(', ') || "''"})`);
  return clauses.join(' AND ');
}

export async function listExecutions(
  services: Services,
  workspaceId: string,
  query: ListExecutionsQuery & Pick<ListExecutionsFilters, 'execution_ids'>,
): Promise<{ data: ExecutionSummary[]; next_cursor: string | null }> {
  const filters: ListExecutionsFilters = {
    workflow: query.workflow,
    status: query.status,
    error_code: query.error_code,
    started_after: query.started_after,
    started_before: query.started_before,
    execution_ids: query.execution_ids,
  };
  const visibility = visibilityQuery(workspaceId, filters);
  const pageToken = query.cursor
    ? Buffer.from(decodeCursor(query.cursor, [workspaceId, filters], isString), 'base64')
    : undefined;
  const { connection, namespace } = services.temporal;
  const response = await callTemporal(connection, () =>
    connection.workflowService.listWorkflowExecutions({
      namespace,
      query: visibility,
      pageSize: query.limit,
      ...(pageToken ? { nextPageToken: pageToken } : {}),
    }),
  );
  const token = response.nextPageToken;
  // A retried execution keeps its failed run in visibility beside the new one: show the execution once.
  const runs = response.executions ?? [];
  await decodeMemos(runs, services.temporal.payloadCodecs);
  const superseded = await supersededRuns(
    services.db,
    runs.map((run) => run.execution?.runId ?? ''),
  );
  return {
    data: runs.filter((run) => !superseded.has(run.execution?.runId ?? '')).map(toSummary),
    next_cursor:
      token && token.length > 0
        ? encodeCursor(Buffer.from(token).toString('base64'), [workspaceId, filters])
        : null,
  };
}

function attribute(info: temporal.api.workflow.v1.IWorkflowExecutionInfo, name: string): unknown {
  const payload = info.searchAttributes?.indexedFields?.[name];
  return payload ? defaultPayloadConverter.fromPayload(payload) : undefined;
}

function stringAttribute(info: temporal.api.workflow.v1.IWorkflowExecutionInfo, name: string): string {
  const value = attribute(info, name);
  return typeof value === 'string' ? value : '';
}

/**
 * The memo is written through the payload codecs (encrypted when encryption is on): decoded in place. A
 * run whose memo this process cannot read (written with a key it does not hold, or encrypted while this
 * process runs without keys) still lists, without its memo: one unreadable run must not fail the page.
 */
async function decodeMemos(
  runs: temporal.api.workflow.v1.IWorkflowExecutionInfo[],
  codecs: readonly PayloadCodec[],
): Promise<void> {
  await Promise.all(
    runs.map(async (run) => {
      const fields = run.memo?.fields;
      if (!fields) return;
      const names = Object.keys(fields);
      try {
        const decoded =
          codecs.length === 0
            ? names.map((name) => fields[name]!)
            : await decodePayloads(
                codecs,
                names.map((name) => fields[name]!),
              );
        const values = decoded.map((payload) => defaultPayloadConverter.fromPayload(payload));
        memos.set(run, Object.fromEntries(names.map((name, index) => [name, values[index]])));
      } catch {
        memos.set(run, UNREADABLE);
      }
    }),
  );
}

const UNREADABLE = Symbol('unreadable memo');
/** Each listed run's decoded memo (or UNREADABLE), by its visibility record. */
const memos = new WeakMap<
  temporal.api.workflow.v1.IWorkflowExecutionInfo,
  Record<string, unknown> | typeof UNREADABLE
>();

function statusOf(info: temporal.api.workflow.v1.IWorkflowExecutionInfo): ExecutionStatus {
  return executionStatus(info.status, {
    waiting: attribute(info, WAITING_ATTRIBUTE.name) === true,
    queued: attribute(info, QUEUED_ATTRIBUTE.name) === true,
  });
}

/** Visibility has no failure details; the workflow keeps its error in the memo for lists. */
function errorOf(
  info: temporal.api.workflow.v1.IWorkflowExecutionInfo,
  status: ExecutionStatus,
): ErrorView | null {
  if (status === 'queued' || status === 'running' || status === 'waiting') return null;
  if (status !== 'failed') return closedFromOutsideError(status);
  const memo = memos.get(info);
  if (memo === UNREADABLE) {
    return {
      step: null,
      code: 'failed',
      message: 'The execution failed; its error is encrypted with a key this service does not hold.',
    };
  }
  const error = memo?.['error'] as ExecutionError | undefined;
  return error ? errorViewOf(error) : { step: null, code: 'failed', message: 'The execution failed.' };
}

function toSummary(info: temporal.api.workflow.v1.IWorkflowExecutionInfo): ExecutionSummary {
  const startedAt = optionalTsToDate(info.startTime) ?? new Date(0);
  const closedAt = optionalTsToDate(info.closeTime) ?? null;
  const status = statusOf(info);
  return {
    execution_id: info.execution?.workflowId ?? '',
    workflow: stringAttribute(info, WORKFLOW_ATTRIBUTE.name),
    workflow_version: Number(attribute(info, VERSION_ATTRIBUTE.name) ?? 0),
    status,
    trigger: {
      type:
        (attribute(info, TRIGGER_ATTRIBUTE.name) as ExecutionSummary['trigger']['type'] | undefined) ?? 'api',
    },
    started_at: startedAt.toISOString(),
    finished_at: closedAt?.toISOString() ?? null,
    duration_ms: durationMs(startedAt, closedAt),
    error: errorOf(info, status),
    parent: parentOf(info),
  };
}

/** A child execution's parent: kept in its memo when its parent started it (workers/workflows/containers/sub-workflow.ts). */
function parentOf(info: temporal.api.workflow.v1.IWorkflowExecutionInfo): ExecutionSummary['parent'] {
  const memo = memos.get(info);
  if (!memo || memo === UNREADABLE) {
    const id = info.parentExecution?.workflowId;
    return id ? { execution_id: id, step: '' } : null;
  }
  const parent = memo['parent'] as ExecutionSummary['parent'] | undefined;
  return parent ? { execution_id: parent.execution_id, step: parent.step } : null;
}
