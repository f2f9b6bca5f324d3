/**
 * The console: reads its session (a reload keeps the cookie, and the CSRF token is read again), shows the
 * sign-in form without one, and the signed-in shell with its pages otherwise.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { Link, Route, Switch, useLocation } from 'wouter-preact';
import { whenSessionEnds } from './api';
import { ErrorNotice, Loading } from './components/feedback';
import { BulkOperationPage, BulkOperationsPage } from './pages/bulk-operations';
import { EventPage, EventsPage } from './pages/events';
import { ExecutionPage } from './pages/execution';
import { NotFoundPage } from './pages/not-found';
import { RunsPage } from './pages/runs';
import { SettingsPage } from './pages/settings';
import { SignInPage } from './pages/sign-in';
import { WebhookPage, WebhooksPage } from './pages/webhooks';
import { WorkflowPage, WorkflowsPage } from './pages/workflows';
import { forgetSession, readSession, SessionContext, signOut, type ConsoleSession } from './session';

export function App() {
  const [session, setSession] = useState<ConsoleSession | null | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);

  useEffect(() => {
    whenSessionEnds(() => {
      forgetSession();
      setSession(null);
    });
    readSession().then(setSession, (caught: unknown) => {
      setError(caught);
      setSession(null);
    });
  }, []);

  if (session === undefined) {
    return (
      <main id="main" class="signin">
        <Loading label="Opening the console…" />
      </main>
    );
  }
  if (session === null) {
    return (
      <>
        <ErrorNotice error={error} title="The service did not answer" />
        <SignInPage onSignedIn={setSession} />
      </>
    );
  }
  return (
    <SessionContext.Provider value={session}>
      <Shell session={session} onSignedOut={() => setSession(null)} />
    </SessionContext.Provider>
  );
}

const NAV = [
  {
    href: '/',
    label: 'Runs',
    match: (path: string) => path === '/' || path.startsWith('/runs') || path.startsWith('/bulk-operations'),
  },
  { href: '/workflows', label: 'Workflows', match: (path: string) => path.startsWith('/workflows') },
  { href: '/events', label: 'Events', match: (path: string) => path.startsWith('/events') },
  { href: '/webhooks', label: 'Webhooks', match: (path: string) => path.startsWith('/webhooks') },
  { href: '/settings', label: 'Settings', match: (path: string) => path.startsWith('/settings') },
];

function Shell({ session, onSignedOut }: { session: ConsoleSession; onSignedOut: () => void }) {
  const [location] = useLocation();
  const [signOutError, setSignOutError] = useState<unknown>(undefined);
  const main = useRef<HTMLElement>(null);
  const first = useRef(true);

  // After a navigation, focus moves to the page (screen readers announce it; Tab starts there).
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    main.current?.focus();
  }, [location]);

  const doSignOut = async () => {
    try {
      await signOut();
      onSignedOut();
    } catch (caught) {
      setSignOutError(caught);
    }
  };

  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <div class="brand">
          <Link href="/">Switchyard</Link>
        </div>
        <nav aria-label="Main">
          <ul>
            {NAV.map((item) => (
              <li key={item.href}>
                <Link href={item.href} aria-current={item.match(location) ? 'page' : undefined}>
                  {item.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div class="identity" aria-label="Signed in as">
          <span class="workspace" data-testid="workspace">
            {session.workspace.name}
          </span>
          <span class="key" title={`API key ${session.key.prefix}…`}>
            {session.key.name}
          </span>
          <span class="scopes" data-testid="scopes">
            {session.key.scopes.map((scope) => (
              <span class="badge scope" key={scope}>
                {scope}
              </span>
            ))}
          </span>
          <button type="button" class="button-link" onClick={() => void doSignOut()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        <ErrorNotice error={signOutError} title="Signing out failed" />
        <Switch>
          <Route path="/" component={RunsPage} />
          <Route path="/runs" component={RunsPage} />
          <Route path="/runs/:id">{(params: { id: string }) => <ExecutionPage id={params.id} />}</Route>
          <Route path="/bulk-operations" component={BulkOperationsPage} />
          <Route path="/bulk-operations/:id">
            {(params: { id: string }) => <BulkOperationPage id={params.id} />}
          </Route>
          <Route path="/workflows" component={WorkflowsPage} />
          <Route path="/workflows/:id">{(params: { id: string }) => <WorkflowPage id={params.id} />}</Route>
          <Route path="/events" component={EventsPage} />
          <Route path="/events/:id">{(params: { id: string }) => <EventPage id={params.id} />}</Route>
          <Route path="/webhooks" component={WebhooksPage} />
          <Route path="/webhooks/:id">{(params: { id: string }) => <WebhookPage id={params.id} />}</Route>
          <Route path="/settings" component={SettingsPage} />
          <Route component={NotFoundPage} />
        </Switch>
      </main>
    </>
  );
}
