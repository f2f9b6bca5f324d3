/**
 * Webhooks: the endpoints with their status, a form to register one (its signing secret shown once),
 * and per endpoint the delivery log with every attempt and a way to send a delivery again.
 */
import type { CreatedWebhookEndpoint, WebhookDelivery, WebhookEndpoint } from '@switchyard/client/browser';
import { useState } from 'preact/hooks';
import { Link, useLocation } from 'wouter-preact';
import { api } from '../api';
import { ShownOnce } from '../components/copy-button';
import { Breadcrumb } from '../components/breadcrumb';
import { Choices } from '../components/choices';
import { DataTable } from '../components/data-table';
import { ConfirmDialog, useConfirmed } from '../components/dialog';
import { Fact } from '../components/facts';
import { FormPanel, TextField } from '../components/form-panel';
import { ErrorNotice, ListStatus, Success } from '../components/feedback';
import { LiveToggle } from '../components/live-toggle';
import { StatusBadge } from '../components/status';
import { formatDuration, formatTime } from '../format';
import { useCan } from '../session';
import { useAction } from '../use-action';
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
      <ListStatus state={endpoints} items={endpoints.data} things="endpoints" empty="No endpoints yet." />
      {endpoints.data && endpoints.data.length > 0 && (
        <DataTable label="Endpoints table" columns={['Endpoint', 'Status', 'Events', 'Created']}>
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
        </DataTable>
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
  const action = useAction();

  const register = async () => {
    const created = await api.webhooks.create({
      url: url.trim(),
      events: EVENTS.filter((e) => events.has(e)),
      ...(description.trim() ? { description: description.trim() } : {}),
    });
    setUrl('');
    setDescription('');
    await onCreated(created);
  };

  const toggle = (kind: EventKind, on: boolean) =>
    setEvents((current) => {
      const next = new Set(current);
      if (on) next.add(kind);
      else next.delete(kind);
      return next;
    });

  return (
    <FormPanel
      title="Register an endpoint"
      action={action}
      onSubmit={register}
      errorTitle="Could not register the endpoint"
      submitLabel="Register endpoint"
      busyLabel="Registering…"
      ready={events.size > 0 && url.trim() !== ''}
    >
      <TextField
        id="endpoint-url"
        label="URL"
        type="url"
        required
        placeholder="https://hooks.example.com/switchyard"
        value={url}
        onValue={setUrl}
        class="wide"
      />
      <TextField
        id="endpoint-description"
        label="Description (optional)"
        type="text"
        value={description}
        onValue={setDescription}
        class="wide"
      />
      <Choices
        legend="Events"
        type="checkbox"
        name="event"
        options={EVENTS}
        checked={(kind) => events.has(kind)}
        onChange={toggle}
      />
    </FormPanel>
  );
}

export function WebhookPage({ id }: { id: string }) {
  const canWrite = useCan('write');
  const [, navigate] = useLocation();
  const endpoint = useAsync(() => api.webhooks.get(id), [id]);
  const deliveries = useAsync(() => api.webhooks.deliveries(id, { limit: 50 }).pages().next(), [id]);
  const [live, setLive] = useState(true);
  const [notice, setNotice] = useState<string | undefined>(undefined);
  const action = useAction();
  const deleting = useConfirmed(
    action,
    (endpointId: string) => api.webhooks.delete(endpointId),
    () => navigate('/webhooks'),
  );
  useInterval(() => void deliveries.reload(), 3000, live);

  const redeliver = (delivery: WebhookDelivery) =>
    action.run(async () => {
      await api.webhooks.redeliver(id, delivery.id);
      setNotice(`Delivery ${delivery.id} is being sent again.`);
      await deliveries.reload();
    });

  const shown = endpoint.data;
  const page = deliveries.data?.value;
  return (
    <section aria-labelledby="webhook-title">
      <Breadcrumb list="Webhooks" href="/webhooks" id={id} />
      <div class="page-head">
        <h1 id="webhook-title" class="mono">
          {shown?.url ?? id}
        </h1>
        {shown && <StatusBadge status={shown.status} />}
      </div>
      <ErrorNotice error={endpoint.error} title="Could not read this endpoint" />
      {shown && (
        <dl class="facts">
          <Fact term="Id" mono>
            {shown.id}
          </Fact>
          <Fact term="Events">{shown.events.join(', ')}</Fact>
          <Fact term="Created">{formatTime(shown.created_at)}</Fact>
          {shown.description && <Fact term="Description">{shown.description}</Fact>}
        </dl>
      )}
      {shown && canWrite && (
        <div class="actions">
          <button type="button" class="danger" onClick={() => deleting.ask(id)}>
            Delete endpoint
          </button>
        </div>
      )}
      {notice && <Success>{notice}</Success>}
      <ErrorNotice error={action.error} title="The action failed" />
      <div class="page-head">
        <h2>Deliveries</h2>
        <LiveToggle id="live-deliveries" live={live} onChange={setLive} />
      </div>
      <ListStatus
        state={deliveries}
        items={page?.data}
        things="deliveries"
        errorTitle="Could not read the deliveries"
        empty="No deliveries yet: they appear here as events happen."
      />
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
            <Fact term="Delivery" mono>
              {delivery.id}
            </Fact>
            <Fact term="Created">{formatTime(delivery.created_at)}</Fact>
            <Fact term="Next attempt">{formatTime(delivery.next_attempt_at)}</Fact>
          </dl>
          {delivery.attempts.length === 0 ? (
            <p class="hint">No attempt yet.</p>
          ) : (
            <DataTable
              label={`Attempts of delivery ${delivery.id}`}
              class="attempts"
              columns={['#', 'Time', 'Status code', 'Duration', 'Error']}
            >
              {delivery.attempts.map((attempt, index) => (
                <tr key={`${attempt.at}-${index}`} data-testid="attempt">
                  <td>{index + 1}</td>
                  <td>{formatTime(attempt.at)}</td>
                  <td>{attempt.status_code ?? '–'}</td>
                  <td>{formatDuration(attempt.duration_ms)}</td>
                  <td class="error-cell">{attempt.error ?? ''}</td>
                </tr>
              ))}
            </DataTable>
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
      <ConfirmDialog {...deleting.dialog} title="Delete this endpoint?" confirmLabel="Delete endpoint" danger>
        <p>It receives no more events; its delivery log goes with it.</p>
      </ConfirmDialog>
    </section>
  );
}
