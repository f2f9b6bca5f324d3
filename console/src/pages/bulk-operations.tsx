/**
 * Bulk operations (docs/operations.md#bulk-operations), reached from the runs page: the recent ones,
 * newest first (GET /v1/bulk-operations), read again while one runs; and one operation's progress.
 */
import { Link } from 'wouter-preact';
import { api } from '../api';
import { Breadcrumb } from '../components/breadcrumb';
import { BulkProgress } from '../components/bulk-progress';
import { DataTable } from '../components/data-table';
import { ListStatus } from '../components/feedback';
import { StatusBadge } from '../components/status';
import { formatTime } from '../format';
import { describeFilter } from '../run-filter';
import { useAsync, useInterval } from '../use-async';

const RECENT = 20;
const REFRESH_MS = 2000;

export function BulkOperationsPage() {
  const list = useAsync(() => api.bulkOperations.list({ limit: RECENT }).pages().next(), []);
  const page = list.data?.value;
  useInterval(
    () => void list.reload(),
    REFRESH_MS,
    page?.data.some((op) => op.status === 'running') ?? false,
  );

  return (
    <section aria-labelledby="bulk-title">
      <h1 id="bulk-title">Bulk operations</h1>
      <p class="hint">
        Cancel, retry or rerun runs in bulk from the <Link href="/">runs list</Link>: select runs or filter
        them.
      </p>
      <ListStatus state={list} items={page?.data} things="bulk operations" empty="No bulk operations yet." />
      {page && page.data.length > 0 && (
        <DataTable
          label="Bulk operations table"
          columns={['Operation', 'Action', 'Status', 'Runs', 'Progress', 'Created']}
        >
          {page.data.map((op) => (
            <tr key={op.id} data-testid="bulk-operation-row">
              <td>
                <Link href={`/bulk-operations/${encodeURIComponent(op.id)}`} class="mono">
                  {op.id}
                </Link>
              </td>
              <td>{op.action}</td>
              <td>
                <StatusBadge status={op.status} />
              </td>
              <td>{describeFilter(op.filter)}</td>
              <td>
                {op.succeeded + op.failed + op.skipped} of {op.matched}: {op.succeeded} succeeded, {op.failed}{' '}
                failed, {op.skipped} skipped
              </td>
              <td>{formatTime(op.created_at)}</td>
            </tr>
          ))}
        </DataTable>
      )}
      {page?.next_cursor && <p class="hint">Showing the {RECENT} newest operations.</p>}
    </section>
  );
}

export function BulkOperationPage({ id }: { id: string }) {
  return (
    <section aria-labelledby="bulk-operation-title">
      <Breadcrumb list="Bulk operations" href="/bulk-operations" id={id} />
      <h1 id="bulk-operation-title">Bulk operation</h1>
      <BulkProgress id={id} />
    </section>
  );
}
