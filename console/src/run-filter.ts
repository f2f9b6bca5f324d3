/**
 * The runs list's filter, kept in the address (`?workflow=…&status=failed&error_code=…`): the fields of
 * GET /v1/executions, which a bulk operation's filter takes as they are (docs/operations.md#bulk-operations).
 */
import {
  EXECUTION_STATUSES,
  type BulkOperationRequest,
  type ExecutionStatus,
} from '@switchyard/client/browser';
import { formatTime } from './format';

export type RunFilter = Omit<BulkOperationRequest['filter'], 'execution_ids'>;

export const RUN_FILTER_FIELDS = [
  'workflow',
  'status',
  'error_code',
  'started_after',
  'started_before',
] as const;
export type RunFilterField = (typeof RUN_FILTER_FIELDS)[number];

/** The filter in the address; an unknown status is left out, the other fields are the service's to judge. */
export function readRunFilter(search: URLSearchParams): RunFilter {
  const filter: RunFilter = {};
  for (const field of RUN_FILTER_FIELDS) {
    const value = search.get(field);
    if (!value) continue;
    if (field === 'status') {
      if ((EXECUTION_STATUSES as readonly string[]).includes(value)) filter.status = value as ExecutionStatus;
    } else filter[field] = value;
  }
  return filter;
}

export function isEmptyFilter(filter: RunFilter): boolean {
  return RUN_FILTER_FIELDS.every((field) => filter[field] === undefined);
}

const FIELD_NAMES: Record<RunFilterField, string> = {
  workflow: 'workflow',
  status: 'status',
  error_code: 'error code',
  started_after: 'started at or after',
  started_before: 'started before',
};

/** The filter in words: "workflow onboard, status failed". */
export function describeFilter(filter: Record<string, unknown>): string {
  return Object.entries(filter)
    .map(([field, value]) => {
      const name = FIELD_NAMES[field as RunFilterField] ?? field.replace('_', ' ');
      if (Array.isArray(value)) return `${value.length} chosen run${value.length === 1 ? '' : 's'}`;
      const shown = field.startsWith('started_') ? formatTime(String(value)) : String(value);
      return `${name} ${shown}`;
    })
    .join(', ');
}
