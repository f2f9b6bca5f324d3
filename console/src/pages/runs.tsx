/**
 * The runs list: GET /v1/executions with the workflow and status filters (kept in the address, so a
 * filtered list can be shared), "Load more" by cursor, and live refresh by polling while the toggle is on.
 */
import {
  EXECUTION_STATUSES,
  SwitchyardError,
  type ExecutionStatus,
  type ExecutionSummary,
} from '@switchyard/client/browser';
import { useState } from 'preact/hooks';
import { Link, useLocation, useSearch } from 'wouter-preact';
import { api } from '../api';
import { DataTable } from '../components/data-table';
import { ErrorNotice, ListStatus } from '../components/feedback';
import { LiveToggle } from '../components/live-toggle';
import { StatusBadge } from '../components/status';
import { formatDuration, formatTime } from '../format';
import { useAsync, useInterval } from '../use-async';

const PAGE_SIZE = 20;
const REFRESH_MS = 5000;

interface Listing {
  items: ExecutionSummary[];
  nextCursor: string | null;
}

export function RunsPage() {
  const search = new URLSearchParams(useSearch());
  const [, navigate] = useLocation();
  const workflow = search.get('workflow') ?? '';
  const statusParam = search.get('status') ?? '';
  const status = (EXECUTION_STATUSES as readonly string[]).includes(statusParam)
    ? (statusParam as ExecutionStatus)
    : undefined;
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
      params: { query: { limit, ...(workflow ? { workflow } : {}), ...(status ? { status } : {}) } },
    });
    if (!page.data) throw SwitchyardError.fromResponse(page.response, page.error);
    return { items: page.data.data, nextCursor: page.data.next_cursor };
  }, [workflow, status]);

  useInterval(() => void list.reload(), REFRESH_MS, live);

  const setFilter = (name: 'workflow' | 'status', value: string) => {
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
            ...(workflow ? { workflow } : {}),
            ...(status ? { status } : {}),
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

  return (
    <section aria-labelledby="runs-title">
      <div class="page-head">
        <h1 id="runs-title">Runs</h1>
        <LiveToggle id="live-refresh" live={live} onChange={setLive}>
          {live && list.loading && list.data && <span class="hint"> (refreshing…)</span>}
        </LiveToggle>
      </div>
      <form class="filters" aria-label="Filter runs" onSubmit={(e) => e.preventDefault()}>
        <div class="field">
          <label for="filter-workflow">Workflow</label>
          <select
            id="filter-workflow"
            value={workflow}
            onChange={(e) => setFilter('workflow', e.currentTarget.value)}
          >
            <option value="">All workflows</option>
            {workflow && !workflowIds.includes(workflow) && <option value={workflow}>{workflow}</option>}
            {workflowIds.map((id) => (
              <option key={id} value={id}>
                {id}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="filter-status">Status</label>
          <select
            id="filter-status"
            value={status ?? ''}
            onChange={(e) => setFilter('status', e.currentTarget.value)}
          >
            <option value="">Any status</option>
            {EXECUTION_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s.replace('_', ' ')}
              </option>
            ))}
          </select>
        </div>
      </form>
      <ListStatus
        state={list}
        items={shown?.items}
        things="runs"
        empty={
          <>
            No runs{workflow || status ? ' match these filters' : ' yet'}.{' '}
            {!workflow && !status && (
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
        >
          {shown.items.map((run) => (
            <tr key={run.execution_id} data-testid="run-row">
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
