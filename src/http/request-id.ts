/**
 * X-Request-Id (docs/api.md#requests-and-responses): a sane incoming id is kept, otherwise one is generated;
 * every response carries it.
 */
import type Koa from 'koa';
import { randomBase62 } from '../../platform/ids';

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export const newRequestId = (): string => `req_${randomBase62(20)}`;

export function requestId(): Koa.Middleware {
  return async (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    const id = SANE_REQUEST_ID.test(incoming) ? incoming : newRequestId();
    ctx.state['requestId'] = id;
    ctx.set('X-Request-Id', id);
    await next();
  };
}
