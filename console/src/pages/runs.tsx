/**
 * The runs list: GET /v1/executions with the workflow, status, error code and start-time filters (kept in
 * the address, so a filtered list can be shared), "Load more" by cursor, and live refresh by polling while
 * the toggle is on. A key that may write selects rows and acts on them, or on every run the filter matches,
 * in bulk (components/bulk-actions.tsx).
 */
import { SwitchyardError, type ExecutionSummary } from '@switchyard/client/browser';
import { useEffect, useState } from 'preact/hooks';
import { Link, useLocation, useSearch } from 'wouter-preact';
import { api } from '../api';
import { BulkActions, type RunSelection } from '../components/bulk-actions';
import { DataTable } from '../components/data-table';
import { ErrorNotice, ListStatus } from '../components/feedback';
import { LiveToggle } from '../components/live-toggle';
import { RunFilters } from '../components/run-filters';
import { StatusBadge } from '../components/status';
import { formatDuration, formatTime } from '../format';
import { isEmptyFilter, readRunFilter, type RunFilterField } from '../run-filter';
import { useCan } from '../session';
import { useAsync, useInterval } from '../use-async';

const PAGE_SIZE = 20;
const REFRESH_MS = 5000;
const NOTHING_SELECTED: RunSelection = { ids: new Set(), allMatching: false };

interface Listing {
  items: ExecutionSummary[];
  nextCursor: string | null;
}

export function RunsPage() {
  const search = new URLSearchParams(useSearch());
  const [, navigate] = useLocation();
  const filter = readRunFilter(search);
  const filterKey = JSON.stringify(filter);
  const filtered = !isEmptyFilter(filter);
  const canWrite = useCan('write');
  const [selection, setSelection] = useState<RunSelection>(NOTHING_SELECTED);
  const [live, setLive] = useState(true);
  const [moreError, setMoreError] = useState<unknown>(undefined);
  const [loadingMore, setLoadingMore] = useState(false);
  const [extra, setExtra] = useState<Listing | null>(null);

  const workflows = useAsync(() => api.workflows.list({ limit: 100 }).pages().next(), []);
  const workflowIds = workflows.data?.value?.data.map((w) => w.id) ?? [];

  // The first page (or, once more are loaded, as many items as are on screen, up to 100) is what the
  // live refresh reads again.
  const list = useAsync(async (): Promise<Listing> => {
    const limit = Math.min(100, Math.max(PAGE_SIZE, extra?.items.length ?? 0));
    const page = await api.raw.GET('/v1/executions', {
      params: { query: { limit, ...filter } },
    });
    if (!page.data) throw SwitchyardError.fromResponse(page.response, page.error);
    return { items: page.data.data, nextCursor: page.data.next_cursor };
  }, [filterKey]);

  useInterval(() => void list.reload(), REFRESH_MS, live);
  // Another filter, another list: what was selected in the last one is not.
  useEffect(() => setSelection(NOTHING_SELECTED), [filterKey]);

  const setFilter = (name: RunFilterField, value: string) => {
    const next = new URLSearchParams(search);
    if (value) next.set(name, value);
    else next.delete(name);
    setExtra(null);
    const query = next.toString();
    navigate(query ? `/?${query}` : '/', { replace: true });
  };

  // A refresh brings the newest items; keep those loaded beyond it.
  const shown = mergeRefresh(list.data, extra);

  const loadMore = async () => {
    const listing = shown;
    if (!listing?.nextCursor) return;
    setLoadingMore(true);
    setMoreError(undefined);
    try {
      const page = await api.raw.GET('/v1/executions', {
        params: {
          query: {
            limit: PAGE_SIZE,
            cursor: listing.nextCursor,
            ...filter,
          },
        },
      });
      if (!page.data) throw SwitchyardError.fromResponse(page.response, page.error);
      setExtra({ items: [...listing.items, ...page.data.data], nextCursor: page.data.next_cursor });
    } catch (caught) {
      setMoreError(caught);
    } finally {
      setLoadingMore(false);
    }
  };

  const items = shown?.items ?? [];
  const allShownSelected =
    selection.allMatching || (items.length > 0 && items.every((run) => selection.ids.has(run.execution_id)));
  const selectRun = (id: string, on: boolean) =>
    setSelection((current) => {
      const ids = new Set(current.allMatching ? items.map((run) => run.execution_id) : current.ids);
      if (on) ids.add(id);
      else ids.delete(id);
      return { ids, allMatching: false };
    });
  const selectShown = (on: boolean) =>
    setSelection(
      on ? { ids: new Set(items.map((run) => run.execution_id)), allMatching: false } : NOTHING_SELECTED,
    );

  return (
    <section aria-labelledby="runs-title">
      <div class="page-head">
        <h1 id="runs-title">Runs</h1>
        <div class="head-tools">
          <Link href="/bulk-operations">Recent bulk operations</Link>
          <LiveToggle id="live-refresh" live={live} onChange={setLive}>
            {live && list.loading && list.data && <span class="hint"> (refreshing…)</span>}
          </LiveToggle>
        </div>
      </div>
      <RunFilters filter={filter} workflowIds={workflowIds} onChange={setFilter} />
      {canWrite && (
        <BulkActions
          filter={filter}
          selection={selection}
          onSelectAllMatching={() => setSelection({ ids: new Set(), allMatching: true })}
          onClear={() => setSelection(NOTHING_SELECTED)}
          onFinished={() => list.reload()}
        />
      )}
      <ListStatus
        state={list}
        items={shown?.items}
        things="runs"
        empty={
          <>
            No runs{filtered ? ' match these filters' : ' yet'}.{' '}
            {!filtered && (
              <>
                Start one from a <Link href="/workflows">workflow</Link>.
              </>
            )}
          </>
        }
      />
      {shown && shown.items.length > 0 && (
        <DataTable
          label="Runs table"
          class="runs"
          columns={['Run', 'Workflow', 'Status', 'Started', 'Duration', 'Error']}
          leading={
            canWrite ? (
              <input
                type="checkbox"
                aria-label="Select all shown runs"
                checked={allShownSelected}
                onChange={(e) => selectShown(e.currentTarget.checked)}
              />
            ) : undefined
          }
        >
          {shown.items.map((run) => (
            <tr key={run.execution_id} data-testid="run-row">
              {canWrite && (
                <td class="select-cell">
                  <input
                    type="checkbox"
                    aria-label={`Select ${run.execution_id}`}
                    checked={selection.allMatching || selection.ids.has(run.execution_id)}
                    onChange={(e) => selectRun(run.execution_id, e.currentTarget.checked)}
                  />
                </td>
              )}
              <td>
                <Link href={`/runs/${encodeURIComponent(run.execution_id)}`} class="mono">
                  {run.execution_id}
                </Link>
              </td>
              <td data-label="Workflow">
                {run.workflow} <span class="hint">v{run.workflow_version}</span>
              </td>
              <td data-label="Status">
                <StatusBadge status={run.status} />
              </td>
              <td data-label="Started">{formatTime(run.started_at)}</td>
              <td data-label="Duration">{formatDuration(run.duration_ms)}</td>
              <td class="error-cell" data-label={run.error ? 'Error' : undefined}>
                {run.error && (
                  <>
                    <code>{run.error.code}</code>
                    {run.error.step && <> at {run.error.step}</>}: {run.error.message}
                  </>
                )}
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      <ErrorNotice error={moreError} title="Could not load more runs" />
      {shown?.nextCursor && (
        <button type="button" onClick={() => void loadMore()} disabled={loadingMore}>
          {loadingMore ? 'Loading…' : 'Load more'}
        </button>
      )}
    </section>
  );
}

function mergeRefresh(fresh: Listing | undefined, extra: Listing | null): Listing | undefined {
  if (!extra) return fresh;
  if (!fresh) return extra;
  const seen = new Set(fresh.items.map((item) => item.execution_id));
  return {
    items: [...fresh.items, ...extra.items.filter((item) => !seen.has(item.execution_id))],
    nextCursor: extra.nextCursor,
  };
}
