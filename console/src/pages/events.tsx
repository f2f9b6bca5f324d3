/**
 * Events (docs/events.md): the workspace's events, newest first, filtered by name (kept in the address),
 * "Load more" by cursor; and per event its data, the runs it started and woke (links to their pages), and
 * the event triggers that refused it.
 */
import { SwitchyardError, type Event } from '@switchyard/client/browser';
import { useState } from 'preact/hooks';
import { Link, useLocation, useSearch } from 'wouter-preact';
import { api } from '../api';
import { Breadcrumb } from '../components/breadcrumb';
import { DataTable } from '../components/data-table';
import { Fact } from '../components/facts';
import { ErrorNotice, ListStatus, NotLoaded } from '../components/feedback';
import { JsonView } from '../components/json-view';
import { LiveToggle } from '../components/live-toggle';
import { formatTime } from '../format';
import { useAsync, useInterval } from '../use-async';

const PAGE_SIZE = 20;

interface Listing {
  items: Event[];
  nextCursor: string | null;
}

async function eventPage(name: string, cursor?: string): Promise<Listing> {
  const page = await api.raw.GET('/v1/events', {
    params: { query: { limit: PAGE_SIZE, ...(name ? { name } : {}), ...(cursor ? { cursor } : {}) } },
  });
  if (!page.data) throw SwitchyardError.fromResponse(page.response, page.error);
  return { items: page.data.data, nextCursor: page.data.next_cursor };
}

export function EventsPage() {
  const search = new URLSearchParams(useSearch());
  const [, navigate] = useLocation();
  const name = search.get('name') ?? '';
  const [draft, setDraft] = useState(name);
  const [more, setMore] = useState<Listing | null>(null);
  const [moreError, setMoreError] = useState<unknown>(undefined);
  const [loadingMore, setLoadingMore] = useState(false);

  const list = useAsync(() => {
    setMore(null);
    return eventPage(name);
  }, [name]);
  const shown = more ?? list.data;

  const filter = (value: string) => {
    const trimmed = value.trim();
    navigate(trimmed ? `/events?${new URLSearchParams({ name: trimmed }).toString()}` : '/events', {
      replace: true,
    });
  };

  const loadMore = async () => {
    if (!shown?.nextCursor) return;
    setLoadingMore(true);
    setMoreError(undefined);
    try {
      const page = await eventPage(name, shown.nextCursor);
      setMore({ items: [...shown.items, ...page.items], nextCursor: page.nextCursor });
    } catch (caught) {
      setMoreError(caught);
    } finally {
      setLoadingMore(false);
    }
  };

  return (
    <section aria-labelledby="events-title">
      <h1 id="events-title">Events</h1>
      <p class="hint">
        What your systems sent to <code>POST /v1/events</code>, newest first, with the runs each started.
      </p>
      <form
        class="filters"
        aria-label="Filter events"
        onSubmit={(e) => {
          e.preventDefault();
          filter(draft);
        }}
      >
        <div class="field">
          <label for="filter-name">Name</label>
          <input
            id="filter-name"
            type="search"
            placeholder="user.signup"
            value={draft}
            onInput={(e) => setDraft(e.currentTarget.value)}
          />
        </div>
        <button type="submit">Filter</button>
      </form>
      <ListStatus
        state={list}
        items={shown?.items}
        things="events"
        empty={name ? `No events named ${name}.` : 'No events yet.'}
      />
      {shown && shown.items.length > 0 && (
        <DataTable
          label="Events table"
          class="events"
          columns={['Event', 'Name', 'Received', 'Runs', 'Refused']}
        >
          {shown.items.map((event) => (
            <tr key={event.id} data-testid="event-row">
              <td>
                <Link href={`/events/${encodeURIComponent(event.id)}`} class="mono">
                  {event.id}
                </Link>
              </td>
              <td data-label="Name">{event.name}</td>
              <td data-label="Received">{formatTime(event.received_at)}</td>
              <td data-label="Runs">
                {event.started.length} started
                {event.woke.length > 0 && <>, {event.woke.length} woken</>}
              </td>
              <td data-label={event.errors.length > 0 ? 'Refused' : undefined}>
                {event.errors.length > 0 ? `by ${event.errors.length}` : ''}
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      <ErrorNotice error={moreError} title="Could not load more events" />
      {shown?.nextCursor && (
        <button type="button" onClick={() => void loadMore()} disabled={loadingMore}>
          {loadingMore ? 'Loading…' : 'Load more'}
        </button>
      )}
    </section>
  );
}

export function EventPage({ id }: { id: string }) {
  const event = useAsync(() => api.events.get(id), [id]);
  // What an event did fills in within moments of its arrival.
  const [live, setLive] = useState(true);
  useInterval(() => void event.reload(), 3000, live);

  const shown = event.data;
  if (!shown) return <NotLoaded heading={`Event ${id}`} state={event} thing="event" />;
  return (
    <section aria-labelledby="event-title">
      <Breadcrumb list="Events" href="/events" id={shown.id} />
      <div class="page-head">
        <h1 id="event-title">
          Event <span class="mono">{shown.id}</span>
        </h1>
        <LiveToggle id="live-event" live={live} onChange={setLive} />
      </div>
      <ErrorNotice error={event.error} title="Could not refresh this event" />
      <dl class="facts">
        <Fact term="Name">{shown.name}</Fact>
        <Fact term="Received">{formatTime(shown.received_at)}</Fact>
        {shown.source !== undefined && (
          <Fact term="Source" mono>
            {shown.source}
          </Fact>
        )}
        {shown.subject !== undefined && (
          <Fact term="Subject" mono>
            {shown.subject}
          </Fact>
        )}
      </dl>
      <h2>Data</h2>
      <JsonView value={shown.data} label={`Data of event ${shown.id}`} />
      <RunLinks title="Runs started" runs={shown.started} testId="started-run" none="It started no run." />
      <RunLinks title="Runs woken" runs={shown.woke} testId="woken-run" none="It woke no waiting run." />
      {shown.errors.length > 0 && (
        <>
          <h2>Refused by</h2>
          <DataTable label="Triggers that refused the event" columns={['Workflow', 'Code', 'Why']}>
            {shown.errors.map((error) => (
              <tr key={error.workflow} data-testid="event-error">
                <td>
                  <Link href={`/workflows/${encodeURIComponent(error.workflow)}`}>{error.workflow}</Link>
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
    </section>
  );
}

function RunLinks({
  title,
  runs,
  testId,
  none,
}: {
  title: string;
  runs: string[];
  testId: string;
  none: string;
}) {
  return (
    <>
      <h2>{title}</h2>
      {runs.length === 0 ? (
        <p class="hint">{none}</p>
      ) : (
        <ul class="run-links">
          {runs.map((run) => (
            <li key={run} data-testid={testId}>
              <Link href={`/runs/${encodeURIComponent(run)}`} class="mono">
                {run}
              </Link>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
