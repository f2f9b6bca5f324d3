import { expect } from 'chai';
import Koa from 'koa';
import request from 'supertest';
import { AppError } from '../../platform/errors';
import { errorHandler } from '../../src/http/error-handler';
import { requestId } from '../../src/http/request-id';
import { createLogger } from '../../platform/logger';

/** The error middleware on its own, in front of routes that fail the ways real code can. */
function appThrowing(error: unknown): Koa {
  const app = new Koa();
  app.silent = true;
  app.use(requestId());
  app.use(errorHandler(createLogger('silent')));
  app.use(() => {
    throw error;
  });
  return app;
}

describe('error rendering', () => {
  it('renders an AppError in the contract body with the request id', async () => {
    const res = await request(
      appThrowing(
        new AppError(409, 'workflow_exists', 'taken', { details: [{ path: '/id', message: 'x' }] }),
      ).callback(),
    )
      .get('/')
      .set('X-Request-Id', 'abc-123')
      .expect(409);
    expect(res.body).to.deep.equal({
      error: {
        code: 'workflow_exists',
        message: 'taken',
        request_id: 'abc-123',
        details: [{ path: '/id', message: 'x' }],
      },
    });
  });

  it('hides an unexpected error behind internal_error, without its message or stack', async () => {
    const res = await request(appThrowing(new Error('db password is hunter2')).callback())
      .get('/')
      .expect(500);
    expect(res.body.error.code).to.equal('internal_error');
    expect(JSON.stringify(res.body)).not.to.include('hunter2');
    expect(JSON.stringify(res.body)).not.to.include('at ');
  });

  it('hides a thrown non-Error value too', async () => {
    const res = await request(appThrowing({ weird: true }).callback())
      .get('/')
      .expect(500);
    expect(res.body.error.code).to.equal('internal_error');
  });

  it('passes the error headers through (Retry-After on 503)', async () => {
    const res = await request(
      appThrowing(
        new AppError(503, 'temporal_unavailable', 'down', { headers: { 'Retry-After': '1' } }),
      ).callback(),
    )
      .get('/')
      .expect(503);
    expect(res.headers['retry-after']).to.equal('1');
  });
});
