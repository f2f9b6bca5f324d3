/**
 * A workflow's queue, on its page (GET /v1/workflows/{id}/queue, docs/flow-control.md#the-queue): how many
 * of its executions flow control holds back and how many hold a place, its busiest keys, and a link to its
 * queued runs. Read again every few seconds while "Live refresh" is on.
 */
import type { WorkflowQueue } from '@switchyard/client/browser';
import { useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { api } from '../api';
import { useAsync, useInterval } from '../use-async';
import { DataTable } from './data-table';
import { Fact } from './facts';
import { ErrorNotice, Loading } from './feedback';
import { LiveToggle } from './live-toggle';

const REFRESH_MS = 3000;

/**
 * Shown for a definition with `concurrency`, `throttle` or `debounce`, and for any workflow whose queue holds
 * runs (runs of another version that has them): a workflow without flow control would only show zeros.
 */
export function QueuePanel({ workflowId, flowControl }: { workflowId: string; flowControl: boolean }) {
  const queue = useAsync(() => api.workflows.queue(workflowId), [workflowId]);
  const [live, setLive] = useState(true);
  const shown = queue.data;
  const holds = shown !== undefined && shown.queued + shown.open > 0;
  const visible = flowControl || holds;
  useInterval(() => void queue.reload(), REFRESH_MS, live && visible);
  if (!visible) return null;

  const queuedRuns = `/?${new URLSearchParams({ workflow: workflowId, status: 'queued' }).toString()}`;
  return (
    <section class="panel" aria-labelledby="queue-title" data-testid="queue-panel">
      <h2 id="queue-title">Queue</h2>
      <LiveToggle id="live-queue" live={live} onChange={setLive} />
      <ErrorNotice error={queue.error} title="Could not read the queue" />
      {queue.loading && !shown && <Loading label="Loading the queue…" />}
      {shown && <QueueCounts queue={shown} queuedRuns={queuedRuns} />}
    </section>
  );
}

function QueueCounts({ queue, queuedRuns }: { queue: WorkflowQueue; queuedRuns: string }) {
  return (
    <>
      <dl class="facts">
        <Fact term="Queued">
          <span data-testid="queue-queued">{queue.queued}</span>
        </Fact>
        <Fact term="Open">
          <span data-testid="queue-open">{queue.open}</span>
        </Fact>
        <Fact term="Runs">
          <Link href={queuedRuns}>Queued runs of this workflow</Link>
        </Fact>
      </dl>
      {queue.keys.length === 0 ? (
        <p class="hint">Nothing queued or open.</p>
      ) : (
        <DataTable label="Busiest keys" columns={['Key', 'Queued', 'Open']}>
          {queue.keys.map((entry) => (
            <tr key={entry.key ?? ''} data-testid="queue-key">
              <td class="mono">{entry.key ?? <span class="hint">(no key: the whole workflow)</span>}</td>
              <td>{entry.queued}</td>
              <td>{entry.open}</td>
            </tr>
          ))}
        </DataTable>
      )}
      {queue.keys.length > 0 && <p class="hint">At most the 20 busiest keys, queued and open together.</p>}
    </>
  );
}
