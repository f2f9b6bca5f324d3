/**
 * The console's session cookie and its CSRF header (docs/console.md): the browser sends the cookie by
 * itself, so every request that changes something must also carry the session's CSRF token in a header,
 * which a page of another site cannot read or set.
 */
import { timingSafeEqual } from 'node:crypto';
import type Koa from 'koa';

/** The cookie's name over plain HTTP (local development on http://127.0.0.1). */
export const SESSION_COOKIE = 'switchyard_session';
/**
 * Its name over HTTPS: browsers accept a `__Host-` cookie only with Secure, Path=/ and no Domain, from a
 * secure origin, so no sibling subdomain or plain-HTTP page can plant or overwrite it (session fixation).
 */
export const SECURE_SESSION_COOKIE = '__Host-switchyard_session';
export const CSRF_HEADER = 'x-csrf-token';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** True when the request may change something, so a cookie alone must not authorize it. */
export function needsCsrfToken(ctx: Koa.Context): boolean {
  return !SAFE_METHODS.has(ctx.method);
}

/** Constant-time comparison of the header with the session's token. */
export function csrfTokenMatches(ctx: Koa.Context, expected: string): boolean {
  const sent = Buffer.from(ctx.get(CSRF_HEADER));
  const wanted = Buffer.from(expected);
  return sent.length === wanted.length && timingSafeEqual(sent, wanted);
}

/**
 * Whether the session cookie is the Secure `__Host-` one: CONSOLE_SECURE_COOKIE when set, else whether the
 * request came over TLS (directly, or per X-Forwarded-Proto from a proxy trusted by TRUST_PROXY).
 */
export function secureSession(ctx: Koa.Context, configured: boolean | undefined): boolean {
  return configured ?? ctx.secure;
}

/**
 * The session token the request carries. Over HTTPS only the `__Host-` cookie counts: a plain-named
 * cookie there may have been planted by a plain-HTTP page or a subdomain.
 */
export function sessionCookieOf(ctx: Koa.Context, configured: boolean | undefined): string | undefined {
  return ctx.cookies.get(secureSession(ctx, configured) ? SECURE_SESSION_COOKIE : SESSION_COOKIE);
}

/**
 * Sets (or, with `token` null, clears) the session cookie: HttpOnly so scripts never read it, SameSite
 * Strict so other sites never send it, Path / so it reaches /v1; over HTTPS (see secureSession) it is
 * `__Host-switchyard_session` and Secure, over plain HTTP `switchyard_session`.
 */
export function setSessionCookie(
  ctx: Koa.Context,
  token: string | null,
  options: { maxAgeMs: number; secure: boolean | undefined },
): void {
  const secure = secureSession(ctx, options.secure);
  // CONSOLE_SECURE_COOKIE=true says TLS ends before this process (a proxy): the cookies library would
  // otherwise refuse a Secure cookie on what it sees as a plain connection.
  if (secure) ctx.cookies.secure = true;
  ctx.cookies.set(secure ? SECURE_SESSION_COOKIE : SESSION_COOKIE, token ?? '', {
    httpOnly: true,
    sameSite: 'strict',
    path: '/',
    secure,
    maxAge: token === null ? 0 : options.maxAgeMs,
    overwrite: true,
  });
}
