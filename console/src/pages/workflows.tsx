/**
 * Workflows: the list, and a definition page with its steps as a diagram, its versions (read any, compare
 * two; the 20 newest, and older ones on request), its schedule when it has a schedule trigger, its queue
 * when it has flow control, and a form generated from the version's `input_schema` that starts a run and
 * opens it.
 */
import {
  SwitchyardError,
  type Page,
  type Workflow,
  type WorkflowListItem,
  type WorkflowVersion,
} from '@switchyard/client/browser';
import { useEffect, useRef, useState } from 'preact/hooks';
import { Link, useLocation, useSearch } from 'wouter-preact';
import { api } from '../api';
import { Breadcrumb } from '../components/breadcrumb';
import { DataTable } from '../components/data-table';
import { DefinitionDiagram } from '../components/definition-diagram';
import { Fact } from '../components/facts';
import { ErrorNotice, ListStatus, Loading, NotLoaded } from '../components/feedback';
import { JsonView } from '../components/json-view';
import { QueuePanel } from '../components/queue-panel';
import { SchedulePanel } from '../components/schedule-panel';
import { SchemaForm } from '../components/schema-form';
import { formatJson, formatTime } from '../format';
import { useCan } from '../session';
import { useAsync } from '../use-async';

export function WorkflowsPage() {
  const [extra, setExtra] = useState<{ items: WorkflowListItem[]; cursor: string | null } | null>(null);
  const [moreError, setMoreError] = useState<unknown>(undefined);
  const first = useAsync(async () => {
    const page = await api.workflows.list({ limit: 50 }).pages().next();
    return page.value ?? { data: [], next_cursor: null };
  }, []);
  const items = [...(first.data?.data ?? []), ...(extra?.items ?? [])];
  const cursor = extra ? extra.cursor : (first.data?.next_cursor ?? null);

  const loadMore = async () => {
    if (!cursor) return;
    try {
      const page = await api.raw.GET('/v1/workflows', { params: { query: { limit: 50, cursor } } });
      if (!page.data) throw SwitchyardError.fromResponse(page.response, page.error);
      setExtra({ items: [...(extra?.items ?? []), ...page.data.data], cursor: page.data.next_cursor });
    } catch (caught) {
      setMoreError(caught);
    }
  };

  return (
    <section aria-labelledby="workflows-title">
      <h1 id="workflows-title">Workflows</h1>
      <ListStatus
        state={first}
        items={first.data ? items : undefined}
        things="workflows"
        empty="No workflows in this workspace yet: create one with the API or the switchyard CLI."
      />
      {items.length > 0 && (
        <DataTable label="Workflows table" columns={['Workflow', 'Name', 'Trigger', 'Version', 'Updated']}>
          {items.map((workflow) => (
            <tr key={workflow.id} data-testid="workflow-row">
              <td>
                <Link href={`/workflows/${encodeURIComponent(workflow.id)}`} class="mono">
                  {workflow.id}
                </Link>
              </td>
              <td>{workflow.name ?? '–'}</td>
              <td>{workflow.trigger.type}</td>
              <td>{workflow.version}</td>
              <td>{formatTime(workflow.updated_at)}</td>
            </tr>
          ))}
        </DataTable>
      )}
      <ErrorNotice error={moreError} title="Could not load more workflows" />
      {cursor && (
        <button type="button" onClick={() => void loadMore()}>
          Load more
        </button>
      )}
    </section>
  );
}

/** What defines a version: the response without its bookkeeping (dates, version list, hook secret). */
function definitionOf(workflow: Workflow): Record<string, unknown> {
  const {
    version: _version,
    created_at: _created,
    updated_at: _updated,
    version_created_at: _versionCreated,
    latest_version: _latest,
    versions: _versions,
    hook_secret: _secret,
    ...definition
  } = workflow;
  return definition;
}

/**
 * A workflow's versions for its pickers, newest first: the 20 newest come with the workflow; older ones load
 * on request, 100 at a time (GET /v1/workflows/{id}/versions). The version shown is always among them.
 */
function useVersions(workflowId: string, workflow: Workflow | undefined) {
  const [loaded, setLoaded] = useState<WorkflowVersion[] | null>(null);
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const pages = useRef<AsyncGenerator<Page<WorkflowVersion>> | null>(null);
  // Kept while another version of the same workflow loads; dropped for another workflow.
  useEffect(() => {
    setLoaded(null);
    setError(undefined);
    pages.current = null;
  }, [workflowId]);

  const known = loaded ?? workflow?.versions ?? [];
  const shown =
    workflow && !known.some((v) => v.version === workflow.version)
      ? [...known, { version: workflow.version, created_at: workflow.version_created_at }]
      : known;
  const versions = [...shown].sort((a, b) => b.version - a.version);
  const oldest = versions.at(-1)?.version ?? 1;
  const hasOlder =
    workflow !== undefined && (loaded === null ? workflow.latest_version > known.length : oldest > 1);

  const loadOlder = async () => {
    if (!workflow) return;
    setBusy(true);
    setError(undefined);
    try {
      pages.current ??= api.workflows.versions(workflowId, { limit: 100 }).pages();
      const next = await pages.current.next();
      if (!next.done) setLoaded([...(loaded ?? []), ...next.value.data]);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return { versions, hasOlder, loadOlder, busy, error };
}

export function WorkflowPage({ id }: { id: string }) {
  const search = new URLSearchParams(useSearch());
  const [, navigate] = useLocation();
  const requested = Number(search.get('version'));
  const version = Number.isInteger(requested) && requested > 0 ? requested : undefined;
  const canWrite = useCan('write');
  const workflow = useAsync(() => api.workflows.get(id, version ? { version } : {}), [id, version]);
  const [startError, setStartError] = useState<unknown>(undefined);
  const shown = workflow.data;
  const versionList = useVersions(id, shown);
  const { versions } = versionList;

  if (!shown) {
    return <NotLoaded heading={`Workflow ${id}`} state={workflow} thing="workflow" />;
  }

  const start = async (input: Record<string, unknown>) => {
    setStartError(undefined);
    try {
      const accepted = await api.workflows.trigger(shown.id, input, { version: shown.version });
      navigate(`/runs/${encodeURIComponent(accepted.execution_id)}`);
    } catch (caught) {
      setStartError(caught);
    }
  };

  return (
    <section aria-labelledby="workflow-title">
      <Breadcrumb list="Workflows" href="/workflows" id={shown.id} />
      <div class="page-head">
        <h1 id="workflow-title">{shown.name ?? shown.id}</h1>
        <Link href={`/?workflow=${encodeURIComponent(shown.id)}`}>Runs of this workflow</Link>
      </div>
      {shown.description && <p>{shown.description}</p>}
      <dl class="facts">
        <Fact term="Id" mono>
          {shown.id}
        </Fact>
        <Fact term="Trigger">{shown.trigger?.type ?? 'api'}</Fact>
        <Fact term="Showing version">
          {shown.version} of {shown.latest_version}
        </Fact>
        <Fact term="Saved">{formatTime(shown.version_created_at)}</Fact>
      </dl>
      <div class="field">
        <label for="version-select">Version</label>
        <select
          id="version-select"
          value={String(shown.version)}
          onChange={(e) =>
            navigate(`/workflows/${encodeURIComponent(shown.id)}?version=${e.currentTarget.value}`, {
              replace: true,
            })
          }
        >
          {versions.map((v) => (
            <option key={v.version} value={String(v.version)}>
              Version {v.version}
              {v.version === shown.latest_version ? ' (latest)' : ''} – {formatTime(v.created_at)}
            </option>
          ))}
        </select>
        {versionList.hasOlder && (
          <button type="button" disabled={versionList.busy} onClick={() => void versionList.loadOlder()}>
            {versionList.busy ? 'Loading…' : 'Load older versions'}
          </button>
        )}
        <ErrorNotice error={versionList.error} title="Could not load older versions" />
      </div>
      {/* The schedule follows the latest version. */}
      {shown.version === shown.latest_version && shown.trigger?.type === 'schedule' && (
        <SchedulePanel workflowId={shown.id} />
      )}
      <QueuePanel
        workflowId={shown.id}
        flowControl={
          shown.concurrency !== undefined || shown.throttle !== undefined || shown.debounce !== undefined
        }
      />
      {canWrite && (
        <div class="panel" role="region" aria-labelledby="run-form-title">
          <h2 id="run-form-title">Start a run of version {shown.version}</h2>
          <SchemaForm
            key={`${shown.id}@${shown.version}`}
            schema={shown.input_schema}
            submitLabel="Start run"
            onSubmit={start}
          />
          <ErrorNotice error={startError} title="Could not start the run" />
        </div>
      )}
      <h2>Steps</h2>
      <DefinitionDiagram steps={shown.steps} label={`Steps of version ${shown.version}`} />
      <h2>Definition</h2>
      <JsonView value={definitionOf(shown)} label={`Definition of version ${shown.version}`} />
      {shown.latest_version > 1 && <VersionDiff workflow={shown} versions={versions} />}
    </section>
  );
}

/** The differences between two versions' definitions, line by line (the `diff` package, loaded on demand). */
function VersionDiff({ workflow, versions: known }: { workflow: Workflow; versions: WorkflowVersion[] }) {
  const [from, setFrom] = useState(workflow.version > 1 ? workflow.version - 1 : 1);
  const [to, setTo] = useState(workflow.version > 1 ? workflow.version : 2);
  const versions = [...known].sort((a, b) => a.version - b.version);
  const diff = useAsync(async () => {
    const [older, newer, { diffLines }] = await Promise.all([
      api.workflows.get(workflow.id, { version: from }),
      api.workflows.get(workflow.id, { version: to }),
      import('diff'),
    ]);
    return diffLines(formatJson(definitionOf(older)), formatJson(definitionOf(newer)));
  }, [workflow.id, from, to]);

  const select = (id: string, label: string, value: number, set: (v: number) => void) => (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} value={String(value)} onChange={(e) => set(Number(e.currentTarget.value))}>
        {versions.map((v) => (
          <option key={v.version} value={String(v.version)}>
            Version {v.version}
          </option>
        ))}
      </select>
    </div>
  );

  return (
    <section aria-labelledby="diff-title">
      <h2 id="diff-title">Compare versions</h2>
      <div class="filters">
        {select('diff-from', 'From', from, setFrom)}
        {select('diff-to', 'To', to, setTo)}
      </div>
      <ErrorNotice error={diff.error} title="Could not compare the versions" />
      {diff.loading && !diff.data && <Loading label="Comparing…" />}
      {diff.data && (
        <pre
          class="diff"
          data-testid="diff"
          tabIndex={0}
          aria-label={`Changes from version ${from} to version ${to}`}
        >
          {diff.data.flatMap((part, index) =>
            part.value
              .replace(/\n$/, '')
              .split('\n')
              .map((line, lineIndex) => (
                <span
                  key={`${index}:${lineIndex}`}
                  class={part.added ? 'added' : part.removed ? 'removed' : ''}
                >
                  {part.added ? '+ ' : part.removed ? '- ' : '  '}
                  {line}
                </span>
              )),
          )}
        </pre>
      )}
      {diff.data && diff.data.every((part) => !part.added && !part.removed) && (
        <p class="hint">These versions are the same.</p>
      )}
    </section>
  );
}
