/** Loading, empty and error states, the same on every page. */
import { SwitchyardError } from '@switchyard/client/browser';
import type { ComponentChildren } from 'preact';

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <p class="state state-loading" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" />
      {label}
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="state state-empty">{children}</p>;
}

/**
 * A failed call: the contract's message, its code, and the request_id to quote when asking for help.
 * `details` (invalid input) are listed by their JSON pointer.
 */
export function ErrorNotice({ error, title = 'The request failed' }: { error: unknown; title?: string }) {
  if (error == null) return null;
  const known = error instanceof SwitchyardError ? error : undefined;
  const message = error instanceof Error ? error.message : JSON.stringify(error);
  return (
    <div class="notice notice-error" role="alert">
      <p class="notice-title">
        {title}
        {known && <span class="code"> ({known.code})</span>}
      </p>
      <p class="notice-message">{message}</p>
      {known && known.details.length > 0 && (
        <ul class="notice-details">
          {known.details.map((detail) => (
            <li key={`${detail.path}:${detail.message}`}>
              <code>{detail.path || '/'}</code> {detail.message}
            </li>
          ))}
        </ul>
      )}
      {known?.requestId && (
        <p class="notice-request">
          Request ID: <code data-testid="request-id">{known.requestId}</code>
        </p>
      )}
    </div>
  );
}

export function Success({ children }: { children: ComponentChildren }) {
  return (
    <div class="notice notice-success" role="status">
      {children}
    </div>
  );
}

/** Where a load stands: its error, and whether it is under way. */
interface LoadState {
  error: unknown;
  loading: boolean;
}

/**
 * What a list shows besides its rows: why its load failed ("Could not list the keys"), that it loads
 * ("Loading keys…", until the first answer), or that it has no items. `items` is undefined until the
 * first answer; `things` names the items.
 */
export function ListStatus({
  state,
  items,
  things,
  empty,
  errorTitle = `Could not list the ${things}`,
}: {
  state: LoadState;
  items: readonly unknown[] | undefined;
  things: string;
  empty: ComponentChildren;
  errorTitle?: string;
}) {
  return (
    <>
      <ErrorNotice error={state.error} title={errorTitle} />
      {state.loading && items === undefined && <Loading label={`Loading ${things}…`} />}
      {items?.length === 0 && <Empty>{empty}</Empty>}
    </>
  );
}

/**
 * A page whose one resource has not arrived: its heading, and why ("Could not read this run", or
 * "Loading the run…"); `thing` names the resource.
 */
export function NotLoaded({ heading, state, thing }: { heading: string; state: LoadState; thing: string }) {
  return (
    <section>
      <h1>{heading}</h1>
      <ErrorNotice error={state.error} title={`Could not read this ${thing}`} />
      {state.loading && <Loading label={`Loading the ${thing}…`} />}
    </section>
  );
}
