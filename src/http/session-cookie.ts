/**
 * The console's session cookie and its CSRF header (docs/console.md): the browser sends the cookie by
 * itself, so every request that changes something must also carry the session's CSRF token in a header,
 * which a page of another site cannot read or set.
 */
import { timingSafeEqual } from 'node:crypto';
import type Koa from 'koa';

export const SESSION_COOKIE = 'switchyard_session';
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
 * Sets (or, with `token` null, clears) the session cookie: HttpOnly so scripts never read it, SameSite
 * Strict so other sites never send it, Path / so it reaches /v1, Secure when the console is served over
 * HTTPS (CONSOLE_SECURE_COOKIE, or the request itself came over TLS).
 */
export function setSessionCookie(
  ctx: Koa.Context,
  token: string | null,
  options: { maxAgeMs: number; secure: boolean | undefined },
): void {
  ctx.cookies.set(SESSION_COOKIE, token ?? '', {
    httpOnly: true,
    sameSite: 'strict',
    path: '/',
    secure: options.secure ?? ctx.secure,
    maxAge: token === null ? 0 : options.maxAgeMs,
    overwrite: true,
  });
}
