/** A dependency that is down answers 503 with the contract body, never a hang, and the service recovers by itself. */
import { expect } from 'chai';
import request from 'supertest';
import { expectError, trigger } from '../support/fixtures';
import { freePort } from '../support/ports';
import {
  createPostgresDatabase,
  sharedTemporal,
  startTestService,
  tempDir,
  testLogger,
  type TestService,
} from '../support/stack';
import { TcpProxy } from '../support/tcp-proxy';
import { waitFor } from '../support/wait';
import { startDevServer, type DevServer } from '../../platform/temporal/dev-server';

/** Upper bound for a 503: the Temporal call deadline plus slack. */
const ANSWER_WITHIN_MS = 12_000;

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  const value = await fn();
  return { value, ms: Date.now() - started };
}

describe('dependencies down @integration', function () {
  describe('Temporal answering late', () => {
    let proxy: TcpProxy;
    let service: TestService;

    before(async function () {
      this.timeout(120_000);
      const temporal = await sharedTemporal();
      const [host, port] = temporal.address.split(':');
      proxy = await TcpProxy.start({ host: host!, port: Number(port) });
      // No worker: its polls would share the held connection; the trigger needs none.
      service = await startTestService({
        worker: false,
        env: { TEMPORAL_ADDRESS: `127.0.0.1:${proxy.port}` },
      });
    });
    after(async function () {
      this.timeout(60_000);
      proxy?.release();
      await service?.stop();
      await proxy?.cut();
    });

    it('answers 202 for a trigger whose start Temporal did but answered after the deadline', async function () {
      this.timeout(30_000);
      proxy.hold();
      // Past the start's 5 s deadline, within the 2 s the API then takes to ask whether the run exists.
      const release = setTimeout(() => proxy.release(), 6_000);
      try {
        const res = await service
          .api()
          .post('/v1/workflows/customer-onboarding/trigger', { customer: 'late', plan: 'pro' });
        expect(res.status, JSON.stringify(res.body)).to.equal(202);
        const id = (res.body as { execution_id: string }).execution_id;
        await service.api().get(`/v1/executions/${id}`).expect(200);
      } finally {
        clearTimeout(release);
        proxy.release();
      }
    });
  });

  describe('Temporal', () => {
    let devServer: DevServer;
    let service: TestService;
    let port: number;
    let dataDir: string;

    const startServer = async () =>
      startDevServer({
        cliPath: (await sharedTemporal()).cliPath,
        dataDir,
        ip: '127.0.0.1',
        port,
        uiPort: 0,
        namespace: 'default',
        logger: testLogger,
      });

    before(async function () {
      this.timeout(120_000);
      port = await freePort();
      dataDir = tempDir('sy-temporal-down-');
      devServer = await startServer();
      service = await startTestService({ env: { TEMPORAL_ADDRESS: devServer.address } });
      await trigger(service.api(), 'customer-onboarding', { customer: 'Ada', plan: 'pro' });
      devServer.process.kill('SIGKILL');
      await new Promise((resolve) => devServer.process.once('exit', resolve));
    });
    after(async function () {
      this.timeout(60_000);
      await service?.stop();
      await devServer?.stop();
    });

    it('answers a trigger with 503 temporal_unavailable, in bounded time', async () => {
      const { value: res, ms } = await timed(() =>
        service.api().post('/v1/workflows/customer-onboarding/trigger', { customer: 'a', plan: 'b' }),
      );
      expectError(res, 503, 'temporal_unavailable');
      expect(ms).to.be.below(ANSWER_WITHIN_MS);
    });

    it('answers an execution read with 503 temporal_unavailable', async () => {
      expectError(
        await service.api().get('/v1/executions/ex_abcdefabcdefabcdefabcdef'),
        503,
        'temporal_unavailable',
      );
    });

    it('answers an execution list with 503 temporal_unavailable', async () => {
      expectError(await service.api().get('/v1/executions'), 503, 'temporal_unavailable');
    });

    it('reports not ready on /readyz', async () => {
      expectError(await request(service.url).get('/readyz'), 503, 'temporal_unavailable');
    });

    it('keeps answering what needs no Temporal', async () => {
      await service.api().get('/v1/workflows').expect(200);
    });

    it('recovers by itself when Temporal is back', async function () {
      this.timeout(90_000);
      devServer = await startServer();
      await waitFor(async () => (await request(service.url).get('/readyz')).status === 200, {
        timeoutMs: 60_000,
        what: 'readiness',
      });
      await service
        .api()
        .post('/v1/workflows/customer-onboarding/trigger', { customer: 'a', plan: 'b' })
        .expect(202);
    });
  });

  describe('PostgreSQL', () => {
    let proxy: TcpProxy;
    let service: TestService;
    let drop: () => Promise<void>;

    before(async function () {
      this.timeout(120_000);
      const database = await createPostgresDatabase();
      drop = () => database.drop();
      const url = new URL(database.url);
      proxy = await TcpProxy.start({ host: url.hostname, port: Number(url.port || 5432) });
      url.host = `127.0.0.1:${proxy.port}`;
      service = await startTestService({ env: { DATABASE_URL: url.toString() } });
      await service.api().get('/v1/workflows').expect(200);
      await proxy.cut();
    });
    after(async function () {
      this.timeout(60_000);
      await proxy?.restore().catch(() => undefined);
      await service?.stop();
      await drop?.();
    });

    it('answers with 503 database_unavailable, in bounded time', async () => {
      const { value: res, ms } = await timed(() => service.api().get('/v1/workflows'));
      expectError(res, 503, 'database_unavailable');
      expect(res.headers['retry-after']).to.equal('1');
      expect(ms).to.be.below(ANSWER_WITHIN_MS);
    });

    it('answers a trigger with 503 database_unavailable', async () => {
      expectError(
        await service.api().post('/v1/workflows/customer-onboarding/trigger', { customer: 'a', plan: 'b' }),
        503,
        'database_unavailable',
      );
    });

    it('reports not ready on /readyz', async () => {
      expectError(await request(service.url).get('/readyz'), 503, 'database_unavailable');
    });

    it('recovers without a restart when the database is back', async () => {
      await proxy.restore();
      await waitFor(async () => (await service.api().get('/v1/workflows')).status === 200, {
        what: 'the database to answer again',
      });
      await service
        .api()
        .post('/v1/workflows/customer-onboarding/trigger', { customer: 'a', plan: 'b' })
        .expect(202);
    });
  });
});
