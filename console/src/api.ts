/**
 * The console's only way to the API: the typed client generated from the OpenAPI document, with the
 * session cookie instead of a key. The browser sends the HttpOnly cookie by itself (same origin); every
 * request that changes something carries the session's CSRF token, which lives in this module's memory
 * only (docs/console.md, "Sign-in and session").
 */
import {
  SwitchyardApiClient,
  SwitchyardError,
  type Page,
  type StepRun,
  type StepRunStatus,
} from '@switchyard/client/browser';

let csrfToken: string | undefined;

/** Set at sign-in and when the page reads its session after a reload; cleared at sign-out. */
export function setCsrfToken(token: string | undefined): void {
  csrfToken = token;
}

export function currentCsrfToken(): string | undefined {
  return csrfToken;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

let onSessionEnded: () => void = () => undefined;

/** What to do when the service says the session is over (expired, signed out elsewhere, key revoked). */
export function whenSessionEnds(callback: () => void): void {
  onSessionEnded = callback;
}

/** fetch with the session: the cookie (same origin only) and, on changes, the CSRF header. */
export async function fetchWithSession(request: Request): Promise<Response> {
  if (csrfToken && !SAFE_METHODS.has(request.method)) request.headers.set('X-CSRF-Token', csrfToken);
  const response = await fetch(request, { credentials: 'same-origin' });
  if (response.status === 401 && csrfToken && new URL(request.url).pathname.startsWith('/v1/')) {
    csrfToken = undefined;
    onSessionEnded();
  }
  return response;
}

export const api = new SwitchyardApiClient({
  baseUrl: location.origin,
  fetch: fetchWithSession,
  // A person is waiting: retry a 429/503 once or twice, briefly, then show the error.
  retry: { maxRetries: 2, maxDelayMs: 5000 },
});

/**
 * A page of a container step's runs (its branches, items, cases or iterations), in order, of one status
 * when asked: GET /v1/executions/{id}/steps/{step_id}/runs (docs/api.md#steps-that-hold-steps).
 */
export async function listStepRuns(
  executionId: string,
  stepId: string,
  query: { status?: StepRunStatus; limit: number; cursor?: string },
): Promise<Page<StepRun>> {
  const page = await api.raw.GET('/v1/executions/{id}/steps/{step_id}/runs', {
    params: { path: { id: executionId, step_id: stepId }, query },
  });
  if (!page.data) throw SwitchyardError.fromResponse(page.response, page.error);
  return page.data;
}
