/**
 * Webhooks: the endpoints with their status, a form to register one (its signing secret shown once),
 * and per endpoint the delivery log with every attempt and a way to send a delivery again.
 */
import type { CreatedWebhookEndpoint, WebhookDelivery, WebhookEndpoint } from '@switchyard/client/browser';
import { useState } from 'preact/hooks';
import { Link, useLocation } from 'wouter-preact';
import { api } from '../api';
import { ShownOnce } from '../components/copy-button';
import { ConfirmDialog } from '../components/dialog';
import { Empty, ErrorNotice, Loading, Success } from '../components/feedback';
import { StatusBadge } from '../components/status';
import { formatDuration, formatTime } from '../format';
import { useCan } from '../session';
import { useAsync, useInterval } from '../use-async';

type EventKind = WebhookEndpoint['events'][number];

const EVENTS: readonly EventKind[] = [
  'execution.started',
  'execution.waiting',
  'execution.completed',
  'execution.failed',
  'execution.canceled',
];

export function WebhooksPage() {
  const canWrite = useCan('write');
  const endpoints = useAsync(() => api.webhooks.list({ limit: 100 }).toArray(), []);
  const [created, setCreated] = useState<CreatedWebhookEndpoint | null>(null);

  return (
    <section aria-labelledby="webhooks-title">
      <h1 id="webhooks-title">Webhooks</h1>
      <p class="hint">
        Endpoints receive the workspace's execution events, signed with their secret (Standard Webhooks).
      </p>
      {created && (
        <ShownOnce
          title={`Signing secret of ${created.url}`}
          value={created.secret}
          onDone={() => setCreated(null)}
        />
      )}
      <ErrorNotice error={endpoints.error} title="Could not list the endpoints" />
      {endpoints.loading && !endpoints.data && <Loading label="Loading endpoints…" />}
      {endpoints.data && endpoints.data.length === 0 && <Empty>No endpoints yet.</Empty>}
      {endpoints.data && endpoints.data.length > 0 && (
        <div class="table-scroll" tabIndex={0} role="region" aria-label="Endpoints table">
          <table>
            <thead>
              <tr>
                <th scope="col">Endpoint</th>
                <th scope="col">Status</th>
                <th scope="col">Events</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {endpoints.data.map((endpoint) => (
                <tr key={endpoint.id} data-testid="endpoint-row">
                  <td>
                    <Link href={`/webhooks/${encodeURIComponent(endpoint.id)}`} class="mono">
                      {endpoint.url}
                    </Link>
                    {endpoint.description && <div class="hint">{endpoint.description}</div>}
                  </td>
                  <td>
                    <StatusBadge status={endpoint.status} />
                  </td>
                  <td>{endpoint.events.join(', ')}</td>
                  <td>{formatTime(endpoint.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {canWrite && (
        <CreateEndpoint
          onCreated={async (endpoint) => {
            setCreated(endpoint);
            await endpoints.reload();
          }}
        />
      )}
    </section>
  );
}

function CreateEndpoint({ onCreated }: { onCreated: (endpoint: CreatedWebhookEndpoint) => Promise<void> }) {
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<ReadonlySet<EventKind>>(
    new Set(['execution.completed', 'execution.failed']),
  );
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const created = await api.webhooks.create({
        url: url.trim(),
        events: EVENTS.filter((e) => events.has(e)),
        ...(description.trim() ? { description: description.trim() } : {}),
      });
      setUrl('');
      setDescription('');
      await onCreated(created);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  const toggle = (kind: EventKind, on: boolean) =>
    setEvents((current) => {
      const next = new Set(current);
      if (on) next.add(kind);
      else next.delete(kind);
      return next;
    });

  return (
    <form class="panel" onSubmit={(e) => void submit(e)} aria-labelledby="create-endpoint-title">
      <h2 id="create-endpoint-title">Register an endpoint</h2>
      <label for="endpoint-url">URL</label>
      <input
        id="endpoint-url"
        type="url"
        required
        placeholder="https://hooks.example.com/switchyard"
        value={url}
        onInput={(e) => setUrl(e.currentTarget.value)}
        class="wide"
      />
      <label for="endpoint-description">Description (optional)</label>
      <input
        id="endpoint-description"
        type="text"
        value={description}
        onInput={(e) => setDescription(e.currentTarget.value)}
        class="wide"
      />
      <fieldset>
        <legend>Events</legend>
        {EVENTS.map((kind) => (
          <div class="checkbox" key={kind}>
            <input
              id={`event-${kind}`}
              type="checkbox"
              checked={events.has(kind)}
              onChange={(e) => toggle(kind, e.currentTarget.checked)}
            />
            <label for={`event-${kind}`}>{kind}</label>
          </div>
        ))}
      </fieldset>
      <ErrorNotice error={error} title="Could not register the endpoint" />
      <div class="actions">
        <button type="submit" class="primary" disabled={busy || events.size === 0 || url.trim() === ''}>
          {busy ? 'Registering…' : 'Register endpoint'}
        </button>
      </div>
    </form>
  );
}

export function WebhookPage({ id }: { id: string }) {
  const canWrite = useCan('write');
  const [, navigate] = useLocation();
  const endpoint = useAsync(() => api.webhooks.get(id), [id]);
  const deliveries = useAsync(() => api.webhooks.deliveries(id, { limit: 50 }).pages().next(), [id]);
  const [live, setLive] = useState(true);
  const [notice, setNotice] = useState<string | undefined>(undefined);
  const [actionError, setActionError] = useState<unknown>(undefined);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [busy, setBusy] = useState(false);
  useInterval(() => void deliveries.reload(), 3000, live);

  const redeliver = async (delivery: WebhookDelivery) => {
    setActionError(undefined);
    try {
      await api.webhooks.redeliver(id, delivery.id);
      setNotice(`Delivery ${delivery.id} is being sent again.`);
      await deliveries.reload();
    } catch (caught) {
      setActionError(caught);
    }
  };

  const remove = async () => {
    setBusy(true);
    try {
      await api.webhooks.delete(id);
      navigate('/webhooks');
    } catch (caught) {
      setConfirmDelete(false);
      setActionError(caught);
    } finally {
      setBusy(false);
    }
  };

  const shown = endpoint.data;
  const page = deliveries.data?.value;
  return (
    <section aria-labelledby="webhook-title">
      <nav aria-label="Breadcrumb" class="breadcrumb">
        <Link href="/webhooks">Webhooks</Link> / <span class="mono">{id}</span>
      </nav>
      <div class="page-head">
        <h1 id="webhook-title" class="mono">
          {shown?.url ?? id}
        </h1>
        {shown && <StatusBadge status={shown.status} />}
      </div>
      <ErrorNotice error={endpoint.error} title="Could not read this endpoint" />
      {shown && (
        <dl class="facts">
          <div>
            <dt>Id</dt>
            <dd class="mono">{shown.id}</dd>
          </div>
          <div>
            <dt>Events</dt>
            <dd>{shown.events.join(', ')}</dd>
          </div>
          <div>
            <dt>Created</dt>
            <dd>{formatTime(shown.created_at)}</dd>
          </div>
          {shown.description && (
            <div>
              <dt>Description</dt>
              <dd>{shown.description}</dd>
            </div>
          )}
        </dl>
      )}
      {shown && canWrite && (
        <div class="actions">
          <button type="button" class="danger" onClick={() => setConfirmDelete(true)}>
            Delete endpoint
          </button>
        </div>
      )}
      {notice && <Success>{notice}</Success>}
      <ErrorNotice error={actionError} title="The action failed" />
      <div class="page-head">
        <h2>Deliveries</h2>
        <div class="live">
          <input
            id="live-deliveries"
            type="checkbox"
            checked={live}
            onChange={(e) => setLive(e.currentTarget.checked)}
          />
          <label for="live-deliveries">Live refresh</label>
        </div>
      </div>
      <ErrorNotice error={deliveries.error} title="Could not read the deliveries" />
      {deliveries.loading && !page && <Loading label="Loading deliveries…" />}
      {page && page.data.length === 0 && <Empty>No deliveries yet: they appear here as events happen.</Empty>}
      {page?.data.map((delivery) => (
        <article
          class="delivery panel"
          key={delivery.id}
          data-testid="delivery"
          aria-label={`Delivery ${delivery.id}`}
        >
          <div class="page-head">
            <h3>
              {delivery.event}{' '}
              <span class="hint">
                for{' '}
                <Link href={`/runs/${encodeURIComponent(delivery.execution_id)}`}>
                  {delivery.execution_id}
                </Link>
              </span>
            </h3>
            <StatusBadge status={delivery.status} />
          </div>
          <dl class="facts small">
            <div>
              <dt>Delivery</dt>
              <dd class="mono">{delivery.id}</dd>
            </div>
            <div>
              <dt>Created</dt>
              <dd>{formatTime(delivery.created_at)}</dd>
            </div>
            <div>
              <dt>Next attempt</dt>
              <dd>{formatTime(delivery.next_attempt_at)}</dd>
            </div>
          </dl>
          {delivery.attempts.length === 0 ? (
            <p class="hint">No attempt yet.</p>
          ) : (
            <div
              class="table-scroll"
              tabIndex={0}
              role="region"
              aria-label={`Attempts of delivery ${delivery.id}`}
            >
              <table class="attempts">
                <thead>
                  <tr>
                    <th scope="col">#</th>
                    <th scope="col">Time</th>
                    <th scope="col">Status code</th>
                    <th scope="col">Duration</th>
                    <th scope="col">Error</th>
                  </tr>
                </thead>
                <tbody>
                  {delivery.attempts.map((attempt, index) => (
                    <tr key={`${attempt.at}-${index}`} data-testid="attempt">
                      <td>{index + 1}</td>
                      <td>{formatTime(attempt.at)}</td>
                      <td>{attempt.status_code ?? '–'}</td>
                      <td>{formatDuration(attempt.duration_ms)}</td>
                      <td class="error-cell">{attempt.error ?? ''}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {canWrite && delivery.status !== 'pending' && (
            <div class="actions">
              <button type="button" onClick={() => void redeliver(delivery)}>
                Redeliver
              </button>
            </div>
          )}
        </article>
      ))}
      {page?.next_cursor && <p class="hint">Showing the 50 newest deliveries.</p>}
      <ConfirmDialog
        open={confirmDelete}
        title="Delete this endpoint?"
        confirmLabel="Delete endpoint"
        danger
        busy={busy}
        onConfirm={() => void remove()}
        onCancel={() => setConfirmDelete(false)}
      >
        <p>It receives no more events; its delivery log goes with it.</p>
      </ConfirmDialog>
    </section>
  );
}
