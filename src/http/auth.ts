/**
 * API key authentication and scopes (docs/api.md#authentication-and-scopes). 401 for a missing, malformed,
 * unknown or revoked key (checked on every request, so a revocation takes effect at once); 403 when the key
 * lacks the endpoint's scope. Keys are accepted only in the Authorization header, never in a query string.
 * The web console's session cookie (src/console/session-routes.ts) stands in for a key when no header is
 * sent.
 */
import type Koa from 'koa';
import { AppError } from '../../platform/errors';
import { API_KEY_PATTERN } from '../../platform/ids';
import type { Logger } from '../../platform/logger';
import { touchApiKey, type Scope } from '../../platform/store/api-keys';
import { findConsoleSession } from '../../platform/store/console-sessions';
import type { Database } from '../../platform/store/db';
import { KeyLookups } from './key-lookups';
import { csrfTokenMatches, needsCsrfToken, sessionCookieOf } from './session-cookie';

export interface AuthContext {
  keyId: string;
  workspaceId: string;
  scopes: Scope[];
  /** Set when the request came from the web console with its session cookie instead of a key. */
  consoleSessionId?: string;
}

const SCOPE_RANK: Record<Scope, number> = { read: 1, write: 2, admin: 3 };

export function hasScope(scopes: readonly Scope[], needed: Scope): boolean {
  return scopes.some((scope) => SCOPE_RANK[scope] >= SCOPE_RANK[needed]);
}

const unauthorized = (message: string) =>
  new AppError(401, 'unauthorized', message, { headers: { 'WWW-Authenticate': 'Bearer' } });

/** Query parameter names (compared in lower case) under which clients put credentials. */
const CREDENTIAL_QUERY_PARAMS = new Set([
  'api_key',
  'apikey',
  'api-key',
  'x-api-key',
  'key',
  'token',
  'access_token',
  'authorization',
  'auth',
  'bearer',
]);
/** A query value that is an API key (bare or as "Bearer <key>"), whatever its parameter is called. */
const KEY_VALUE = /^(?:bearer\s+)?sk_[A-Za-z0-9]{32,128}$/i;

/** True when the URL carries a credential: refused, so a key that leaked into a URL never works. */
function credentialInQuery(query: Koa.Context['query']): boolean {
  return Object.entries(query).some(
    ([name, value]) =>
      CREDENTIAL_QUERY_PARAMS.has(name.toLowerCase()) ||
      [value ?? []].flat().some((v) => KEY_VALUE.test(v.trim())),
  );
}

function checkScope(scopes: readonly Scope[], needed: Scope): void {
  if (!hasScope(scopes, needed)) {
    throw new AppError(
      403,
      'forbidden',
      `This API key lacks the '${needed}' scope that this endpoint needs.`,
    );
  }
}

/** How often one process records a key's last use (a write per request would cost more than it tells). */
const TOUCH_INTERVAL_MS = 60_000;

export class Authenticator {
  private readonly touched = new Map<string, number>();
  private readonly keys: KeyLookups;

  constructor(
    private readonly db: Database,
    private readonly logger: Logger,
    /** CONSOLE_SECURE_COOKIE: which session cookie counts (see sessionCookieOf). */
    private readonly secureCookie: boolean | undefined = undefined,
  ) {
    this.keys = new KeyLookups(db);
  }

  /**
   * @param options.sessionWithoutCsrf the caller proved the request's origin otherwise (the codec
   *   endpoint checks it is Temporal UI's): the console cookie needs no X-CSRF-Token.
   */
  async authenticate(
    ctx: Koa.Context,
    needed: Scope,
    options: { sessionWithoutCsrf?: boolean } = {},
  ): Promise<AuthContext> {
    if (credentialInQuery(ctx.query)) {
      throw unauthorized('API keys are accepted only in the Authorization header, never in the URL.');
    }
    const header = ctx.get('authorization');
    if (!header) {
      const sessionToken = sessionCookieOf(ctx, this.secureCookie);
      if (sessionToken) return this.authenticateSession(ctx, sessionToken, needed, options);
      throw unauthorized('Missing API key: send the header Authorization: Bearer <key>.');
    }
    const match = /^Bearer +(\S+)$/i.exec(header.trim());
    if (!match || !API_KEY_PATTERN.test(match[1]!))
      throw unauthorized('Malformed Authorization header: expected Bearer sk_...');
    const record = await this.keys.find(match[1]!);
    if (!record || record.revoked_at) throw unauthorized('Unknown or revoked API key.');
    checkScope(record.scopes, needed);
    this.touch(record.id);
    return { keyId: record.id, workspaceId: record.workspace_id, scopes: record.scopes };
  }

  /** The console's session cookie (a header key wins over it): the key's scopes, a CSRF token to change things. */
  private async authenticateSession(
    ctx: Koa.Context,
    token: string,
    needed: Scope,
    options: { sessionWithoutCsrf?: boolean },
  ): Promise<AuthContext> {
    const session = await findConsoleSession(this.db, token);
    if (!session)
      throw unauthorized(
        'Your console session has ended (expired, signed out or key revoked): sign in again.',
      );
    if (!options.sessionWithoutCsrf && needsCsrfToken(ctx) && !csrfTokenMatches(ctx, session.csrf_token)) {
      throw new AppError(403, 'forbidden', 'Missing or wrong X-CSRF-Token header for this console session.');
    }
    checkScope(session.scopes, needed);
    this.touch(session.key_id);
    return {
      keyId: session.key_id,
      workspaceId: session.workspace_id,
      scopes: session.scopes,
      consoleSessionId: session.id,
    };
  }

  private touch(keyId: string): void {
    const now = Date.now();
    if (now - (this.touched.get(keyId) ?? 0) < TOUCH_INTERVAL_MS) return;
    this.touched.set(keyId, now);
    touchApiKey(this.db, keyId).catch((error: unknown) =>
      this.logger.warn({ err: error, keyId }, 'Could not record API key use'),
    );
  }
}
