/**
 * The runs list: GET /v1/executions with the workflow and status filters (kept in the address, so a
 * filtered list can be shared), "Load more" by cursor, and live refresh by polling while the toggle is on.
 */
import { SwitchyardError, type ExecutionStatus, type ExecutionSummary } from '@switchyard/client/browser';
import { useState } from 'preact/hooks';
import { Link, useLocation, useSearch } from 'wouter-preact';
import { api } from '../api';
import { Empty, ErrorNotice, Loading } from '../components/feedback';
import { StatusBadge } from '../components/status';
import { formatDuration, formatTime } from '../format';
import { useAsync, useInterval } from '../use-async';

export const EXECUTION_STATUSES: readonly ExecutionStatus[] = [
  'running',
  'waiting',
  'success',
  'failed',
  'canceled',
  'terminated',
  'timed_out',
];

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
        <div class="live">
          <input
            id="live-refresh"
            type="checkbox"
            checked={live}
            onChange={(e) => setLive(e.currentTarget.checked)}
          />
          <label for="live-refresh">Live refresh</label>
          {live && list.loading && list.data && <span class="hint"> (refreshing…)</span>}
        </div>
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
      <ErrorNotice error={list.error} title="Could not list the runs" />
      {!shown && list.loading && <Loading label="Loading runs…" />}
      {shown && shown.items.length === 0 && (
        <Empty>
          No runs{workflow || status ? ' match these filters' : ' yet'}.{' '}
          {!workflow && !status && (
            <>
              Start one from a <Link href="/workflows">workflow</Link>.
            </>
          )}
        </Empty>
      )}
      {shown && shown.items.length > 0 && (
        <div class="table-scroll" tabIndex={0} role="region" aria-label="Runs table">
          <table class="runs">
            <thead>
              <tr>
                <th scope="col">Run</th>
                <th scope="col">Workflow</th>
                <th scope="col">Status</th>
                <th scope="col">Started</th>
                <th scope="col">Duration</th>
                <th scope="col">Error</th>
              </tr>
            </thead>
            <tbody>
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
            </tbody>
          </table>
        </div>
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
