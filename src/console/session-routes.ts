/**
 * Sign-in for the web console (docs/console.md): the person pastes an API key once; the service answers
 * with a session in an HttpOnly, SameSite=Strict cookie and a CSRF token, and forgets the key. The
 * console then calls /v1 like any client, authenticated by the cookie (src/http/auth.ts). These routes are
 * the console's own, outside /v1 and its OpenAPI document.
 *
 * - POST /console/session {"api_key"}: 201 with the session (the cookie set), 401 for an unknown or
 *   revoked key. JSON only, so a form on another site cannot sign a browser into someone else's workspace.
 * - GET /console/session: 200 with the session the cookie names, 401 without one.
 * - DELETE /console/session: 204; ends the session (needs X-CSRF-Token) and clears the cookie.
 */
import type Router from '@koa/router';
import type Koa from 'koa';
import { z } from 'zod';
import { AppError, invalidRequest } from '../../platform/errors';
import { zodDetails } from '../definitions/validate';
import { readJsonBody } from '../http/body';
import { csrfTokenMatches, sessionCookieOf, setSessionCookie } from '../http/session-cookie';
import { API_KEY_PATTERN } from '../../platform/ids';
import type { Services } from '../services';
import { findApiKeyByKey } from '../../platform/store/api-keys';
import {
  createConsoleSession,
  deleteConsoleSession,
  findConsoleSession,
  type ConsoleSession,
} from '../../platform/store/console-sessions';

const signInBody = z
  .object({ api_key: z.string().regex(API_KEY_PATTERN, 'must be an API key (sk_...)') })
  .strict();

/** What the console learns about its session: who it acts as, and what it may do. Never the key. */
export interface ConsoleSessionBody {
  workspace: { id: string; name: string };
  key: { id: string; name: string; prefix: string; scopes: string[] };
  csrf_token: string;
  expires_at: string;
  temporal: { ui_url: string | null; namespace: string };
}

const signedOut = (message: string) => new AppError(401, 'unauthorized', message);

export function consoleSessionRoutes(router: Router, services: Services): void {
  router.post('/console/session', async (ctx) => {
    const body = await readJsonBody(ctx, services.config.bodyLimitBytes);
    const parsed = signInBody.safeParse(body.value);
    if (!parsed.success)
      throw invalidRequest('Send {"api_key": "sk_..."} to sign in.', zodDetails(parsed.error.issues));
    const key = await findApiKeyByKey(services.db, parsed.data.api_key);
    if (!key || key.revoked_at) throw signedOut('Unknown or revoked API key.');
    const { session, token } = await createConsoleSession(services.db, {
      keyId: key.id,
      ttlMs: services.config.console.sessionTtlMs,
      maxPerWorkspace: services.config.maxConsoleSessionsPerWorkspace,
    });
    setSessionCookie(ctx, token, cookieOptions(services));
    services.logger.info(
      { sessionId: session.id, keyId: key.id, workspaceId: key.workspace_id },
      'Console sign-in',
    );
    ctx.status = 201;
    ctx.body = sessionBody(session, services);
  });

  router.get('/console/session', async (ctx) => {
    ctx.body = sessionBody(await currentSession(ctx, services), services);
  });

  router.delete('/console/session', async (ctx) => {
    const session = await currentSession(ctx, services);
    if (!csrfTokenMatches(ctx, session.csrf_token)) {
      throw new AppError(403, 'forbidden', 'Missing or wrong X-CSRF-Token header for this console session.');
    }
    await deleteConsoleSession(services.db, session.id);
    setSessionCookie(ctx, null, cookieOptions(services));
    ctx.status = 204;
  });
}

async function currentSession(ctx: Koa.Context, services: Services): Promise<ConsoleSession> {
  const token = sessionCookieOf(ctx, services.config.console.secureCookie);
  if (!token) throw signedOut('Not signed in.');
  const session = await findConsoleSession(services.db, token);
  if (!session)
    throw signedOut('Your console session has ended (expired, signed out or key revoked): sign in again.');
  return session;
}

function cookieOptions(services: Services): { maxAgeMs: number; secure: boolean | undefined } {
  return { maxAgeMs: services.config.console.sessionTtlMs, secure: services.config.console.secureCookie };
}

function sessionBody(session: ConsoleSession, services: Services): ConsoleSessionBody {
  return {
    workspace: { id: session.workspace_id, name: session.workspace_name },
    key: { id: session.key_id, name: session.key_name, prefix: session.key_prefix, scopes: session.scopes },
    csrf_token: session.csrf_token,
    expires_at: session.expires_at.toISOString(),
    temporal: { ui_url: services.temporalUiUrl ?? null, namespace: services.config.temporal.namespace },
  };
}
