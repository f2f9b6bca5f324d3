/** Security headers on every response: an API that serves only JSON needs no more than these. */
import type Koa from 'koa';

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
  'Referrer-Policy': 'no-referrer',
  'Strict-Transport-Security': 'max-age=31536000; includeSubDomains',
  'Cache-Control': 'no-store',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

export function securityHeaders(): Koa.Middleware {
  return async (ctx, next) => {
    ctx.set({ ...SECURITY_HEADERS });
    await next();
  };
}
