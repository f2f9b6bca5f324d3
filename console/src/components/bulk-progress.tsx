/**
 * A bulk operation as it goes (GET /v1/bulk-operations/{id}, read every second while it runs): a progress
 * bar of the executions it has acted on, skipped or failed of those it matched, its status, its first
 * errors, and for a key that may write a button that stops it (POST /v1/bulk-operations/{id}/cancel).
 */
import { useEffect, useId, useRef } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { api } from '../api';
import { formatTime } from '../format';
import { describeFilter } from '../run-filter';
import { useCan } from '../session';
import { useAction } from '../use-action';
import { useAsync, useInterval } from '../use-async';
import { DataTable } from './data-table';
import { Fact } from './facts';
import { ErrorNotice, Loading } from './feedback';
import { StatusBadge } from './status';

const POLL_MS = 1000;
/** Errors listed here; the operation keeps the first 100. */
const ERRORS_LISTED = 10;

export function BulkProgress({
  id,
  link = false,
  onFinished,
}: {
  id: string;
  /** Whether its heading links to the operation's own page (it does on the runs page). */
  link?: boolean;
  /** Once it is no longer running (completed or canceled), once. */
  onFinished?: () => unknown;
}) {
  const canWrite = useCan('write');
  const op = useAsync(() => api.bulkOperations.get(id), [id]);
  const stopping = useAction();
  const titleId = useId();
  const barId = useId();
  const shown = op.data;
  const running = shown === undefined ? op.error === undefined : shown.status === 'running';
  useInterval(() => void op.reload(), POLL_MS, running);

  const finishedRef = useRef(onFinished);
  finishedRef.current = onFinished;
  const status = shown?.status;
  useEffect(() => {
    if (status !== undefined && status !== 'running') void finishedRef.current?.();
  }, [status]);

  const stop = () =>
    void stopping.run(async () => {
      await api.bulkOperations.cancel(id);
      await op.reload();
    });

  if (!shown) {
    return (
      <section class="panel" aria-label={`Bulk operation ${id}`}>
        <ErrorNotice error={op.error} title="Could not read this bulk operation" />
        {op.loading && <Loading label="Loading the bulk operation…" />}
      </section>
    );
  }
  const done = shown.succeeded + shown.failed + shown.skipped;
  return (
    <section class="panel bulk-progress" aria-labelledby={titleId} data-testid="bulk-progress">
      <div class="page-head">
        <h2 id={titleId}>
          Bulk {shown.action}{' '}
          {link ? (
            <Link href={`/bulk-operations/${encodeURIComponent(id)}`} class="mono">
              {id}
            </Link>
          ) : (
            <span class="mono">{id}</span>
          )}
        </h2>
        <span data-testid="bulk-status">
          <StatusBadge status={shown.status} />
        </span>
      </div>
      <label for={barId}>
        {done} of {shown.matched} run{shown.matched === 1 ? '' : 's'} done
      </label>
      <progress id={barId} max={Math.max(1, shown.matched)} value={shown.matched === 0 ? 1 : done} />
      <p data-testid="bulk-counts">
        {shown.succeeded} succeeded, {shown.failed} failed, {shown.skipped} skipped
      </p>
      <dl class="facts small">
        <Fact term="Runs">{describeFilter(shown.filter)}</Fact>
        <Fact term="Created">{formatTime(shown.created_at)}</Fact>
        <Fact term="Finished">{formatTime(shown.finished_at)}</Fact>
      </dl>
      {shown.errors.length > 0 && (
        <>
          <h3>
            First errors{' '}
            {shown.errors.length > ERRORS_LISTED && (
              <span class="hint">
                ({ERRORS_LISTED} of the first {shown.errors.length})
              </span>
            )}
          </h3>
          <DataTable label={`Errors of bulk operation ${id}`} columns={['Run', 'Code', 'Message']}>
            {shown.errors.slice(0, ERRORS_LISTED).map((error) => (
              <tr key={error.execution_id} data-testid="bulk-error">
                <td>
                  <Link href={`/runs/${encodeURIComponent(error.execution_id)}`} class="mono">
                    {error.execution_id}
                  </Link>
                </td>
                <td>
                  <code>{error.code}</code>
                </td>
                <td class="error-cell">{error.message}</td>
              </tr>
            ))}
          </DataTable>
        </>
      )}
      <ErrorNotice error={op.error} title="Could not read the operation's progress" />
      <ErrorNotice error={stopping.error} title="Could not cancel the operation" />
      {canWrite && shown.status === 'running' && (
        <div class="actions">
          <button type="button" class="danger" disabled={stopping.busy} onClick={stop}>
            {stopping.busy ? 'Canceling…' : 'Cancel operation'}
          </button>
          <span class="hint">What it has done stays done; the rest is left alone.</span>
        </div>
      )}
    </section>
  );
}
