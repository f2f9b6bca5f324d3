/**
 * The console session (src/console/session-routes.ts): POST /console/session exchanges an API key for an
 * HttpOnly cookie and returns who the session acts as, its scopes and its CSRF token. These three routes
 * are the console's own, outside /v1 and so outside the OpenAPI document the client is generated from:
 * they are the only calls made with fetch directly.
 */
import { SwitchyardError } from '@switchyard/client/browser';
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { currentCsrfToken, fetchWithSession, setCsrfToken } from './api';

export type Scope = 'read' | 'write' | 'admin';

export interface ConsoleSession {
  workspace: { id: string; name: string };
  key: { id: string; name: string; prefix: string; scopes: Scope[] };
  csrf_token: string;
  expires_at: string;
  temporal: { ui_url: string | null; namespace: string };
}

const SCOPE_RANK: Record<Scope, number> = { read: 1, write: 2, admin: 3 };

/** The API's own rule (src/http/auth.ts): admin includes write, write includes read. */
export function hasScope(session: ConsoleSession, needed: Scope): boolean {
  return session.key.scopes.some((scope) => SCOPE_RANK[scope] >= SCOPE_RANK[needed]);
}

const SESSION_PATH = '/console/session';

/**
 * A hint, not a secret: whether this browser signed in last time, so that a first visit shows the
 * sign-in form without asking the service (whose 401 browsers log as an error). It holds no key and no
 * token; the session itself is the HttpOnly cookie.
 */
const SIGNED_IN_HINT = 'switchyard.console.signed-in';

function setHint(signedIn: boolean): void {
  try {
    if (signedIn) localStorage.setItem(SIGNED_IN_HINT, '1');
    else localStorage.removeItem(SIGNED_IN_HINT);
  } catch {
    // Storage refused (private mode): the console asks the service every time.
  }
}

function hintSaysSignedOut(): boolean {
  try {
    return localStorage.getItem(SIGNED_IN_HINT) === null;
  } catch {
    return false;
  }
}

async function call(method: string, body?: unknown): Promise<Response> {
  const request = new Request(`${location.origin}${SESSION_PATH}`, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return fetchWithSession(request);
}

async function failure(response: Response): Promise<SwitchyardError> {
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON (a proxy's page): SwitchyardError keeps its first characters.
  }
  return SwitchyardError.fromResponse(response, body);
}

/** The session this browser has (after a reload), or null when it has none. */
export async function readSession(): Promise<ConsoleSession | null> {
  if (hintSaysSignedOut()) return null;
  const response = await call('GET');
  if (response.status === 401) {
    setHint(false);
    return null;
  }
  if (!response.ok) throw await failure(response);
  const session = (await response.json()) as ConsoleSession;
  setCsrfToken(session.csrf_token);
  return session;
}

/** Signs in; the key goes to the service in this one request and is kept nowhere in the page. */
export async function signIn(apiKey: string): Promise<ConsoleSession> {
  const response = await call('POST', { api_key: apiKey });
  if (!response.ok) throw await failure(response);
  const session = (await response.json()) as ConsoleSession;
  setCsrfToken(session.csrf_token);
  setHint(true);
  return session;
}

/** The service ended the session (expired, key revoked): the next visit starts at the sign-in form. */
export function forgetSession(): void {
  setCsrfToken(undefined);
  setHint(false);
}

export async function signOut(): Promise<void> {
  if (!currentCsrfToken()) {
    setHint(false);
    return;
  }
  const response = await call('DELETE');
  // 401: the session had already ended, which is what signing out wants.
  if (!response.ok && response.status !== 401) throw await failure(response);
  setCsrfToken(undefined);
  setHint(false);
}

export const SessionContext = createContext<ConsoleSession | null>(null);

/** The signed-in session (pages render only inside the signed-in shell). */
export function useSession(): ConsoleSession {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside the signed-in shell');
  return session;
}

/** Whether the signed-in key may do what needs `scope`: write actions are not rendered otherwise. */
export function useCan(scope: Scope): boolean {
  return hasScope(useSession(), scope);
}
