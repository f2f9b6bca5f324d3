/**
 * Observability (docs/operations.md#logs, docs/operations.md#metrics): the access log; `/metrics` parsed
 * by an independent Prometheus text parser, its counters moving as runs complete, fail and deliver.
 */
import { PassThrough } from 'node:stream';
import { expect } from 'chai';
import request from 'supertest';
import { createLogger } from '../../platform/logger';
import { listeningPort } from '../../platform/net/listening-port';
import { startMetricsServer } from '../../platform/observability/metrics-server';
import {
  createWorkflow,
  definition,
  FAST_RETRY,
  httpStep,
  rulesStep,
  trigger,
  waitForExecution,
} from '../support/fixtures';
import { dashboardMetrics } from '../support/dashboard';
import { parsePrometheus, sampleOf } from '../support/prometheus';
import { Receiver } from '../support/receiver';
import { startTestService, type TestService } from '../support/stack';
import { waitFor } from '../support/wait';

describe('observability @integration', function () {
  let service: TestService;
  const lines: Record<string, unknown>[] = [];
  before(async function () {
    this.timeout(120_000);
    const stream = new PassThrough();
    let buffered = '';
    stream.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const parts = buffered.split('\n');
      buffered = parts.pop() ?? '';
      for (const part of parts) if (part) lines.push(JSON.parse(part) as Record<string, unknown>);
    });
    service = await startTestService({
      logger: createLogger('info', {}, { format: 'json', destination: stream }),
    });
  });
  after(async () => service?.stop());

  describe('access log', () => {
    it('writes one info line per request: method, route pattern, status, ms, request id, key id; never the key', async () => {
      const api = service.api();
      const workflowId = await createWorkflow(
        api,
        definition([rulesStep('a', [{ when: 'true', output: { ok: true } }])]),
      );
      const res = await api.get(`/v1/workflows/${workflowId}`).set('X-Request-Id', 'req-access-log-1');
      expect(res.status).to.equal(200);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const access = lines.filter(
        (line) => line['msg'] === 'request' && line['requestId'] === 'req-access-log-1',
      );
      expect(access).to.have.length(1);
      const [line] = access;
      expect(line).to.include({
        level: 30,
        component: 'http',
        method: 'GET',
        route: '/v1/workflows/{id}',
        status: 200,
      });
      expect(line!['ms']).to.be.a('number');
      expect(line!['keyId']).to.match(/^key_/);
      const all = JSON.stringify(lines);
      expect(all).not.to.contain(service.adminKey);

      const missing = await api.get('/v1/nowhere').set('X-Request-Id', 'req-access-log-2');
      expect(missing.status).to.equal(404);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const unmatched = lines.find((l) => l['msg'] === 'request' && l['requestId'] === 'req-access-log-2');
      expect(unmatched).to.include({ route: 'unmatched', status: 404, path: '/v1/nowhere' });
    });
  });

  describe('metrics', () => {
    const scrape = async () => {
      const res = await request(service.url).get('/metrics').expect(200);
      expect(res.headers['content-type']).to.match(/^text\/plain; version=0\.0\.4/);
      return parsePrometheus(res.text);
    };

    it("serves every metric family in Prometheus text format, with the Temporal SDK's after ours", async () => {
      const families = await scrape();
      for (const name of [
        'switchyard_http_request_duration_seconds',
        'switchyard_triggers_total',
        'switchyard_executions_total',
        'switchyard_step_duration_seconds',
        'switchyard_activity_failures_total',
        'switchyard_webhook_delivery_duration_seconds',
        'switchyard_db_query_errors_total',
        'switchyard_db_pool_connections',
        'process_cpu_seconds_total',
      ])
        expect(families.has(name), name).to.equal(true);
      expect(families.get('switchyard_http_request_duration_seconds')!.type).to.equal('histogram');
      // The SDK's own (its exporter relayed): workflow task latency, task-queue polls.
      expect([...families.keys()].some((name) => name.startsWith('temporal_'))).to.equal(true);
    });

    it('counts triggers accepted and refused, runs completed and failed, steps, failures and deliveries', async function () {
      this.timeout(90_000);
      const receiver = await Receiver.start();
      try {
        const workspace = await service.newWorkspace(['admin']);
        const api = service.api(workspace.key);
        await api
          .post('/v1/webhooks', { url: `${receiver.url}/metrics-hook`, events: ['execution.completed'] })
          .expect(201);
        const ok = await createWorkflow(
          api,
          definition([rulesStep('route', [{ when: 'true', output: { tier: 'gold' } }])], {
            input_schema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
          }),
        );
        const failing = await createWorkflow(
          api,
          definition([
            httpStep(
              'call',
              { url: 'http://127.0.0.1:1/nowhere' },
              { retry: { ...FAST_RETRY, max_attempts: 2 } },
            ),
          ]),
        );
        const before = await scrape();

        const done = await trigger(api, ok, { n: 1 });
        const failed = await trigger(api, failing, {});
        expect((await api.post(`/v1/workflows/${ok}/trigger`, {})).status).to.equal(400);
        expect((await waitForExecution(api, done)).status).to.equal('success');
        expect((await waitForExecution(api, failed)).status).to.equal('failed');
        await waitFor(async () => receiver.requestsTo('/metrics-hook').length >= 1 || undefined, {
          timeoutMs: 30_000,
          what: 'the execution.completed delivery',
        });

        const moved = async (name: string, labels: Record<string, string>, by = 1) =>
          waitFor(
            async () => {
              const after = await scrape();
              return sampleOf(after, name, labels) - sampleOf(before, name, labels) >= by || undefined;
            },
            { timeoutMs: 10_000, what: `${name} ${JSON.stringify(labels)} to move by ${by}` },
          );
        const ws = workspace.workspaceId;
        await moved('switchyard_triggers_total', { trigger: 'api', outcome: 'accepted' }, 2);
        await moved('switchyard_triggers_total', {
          trigger: 'api',
          outcome: 'refused',
          reason: 'validation',
        });
        await moved('switchyard_executions_total', { status: 'success', workspace: ws, workflow: ok });
        await moved('switchyard_executions_total', { status: 'failed', workspace: ws, workflow: failing });
        await moved('switchyard_step_duration_seconds', { kind: 'rules', status: 'success' });
        await moved('switchyard_step_duration_seconds', { kind: 'connector', status: 'failed' });
        await moved('switchyard_activity_failures_total', { activity: 'run_steps' });
        await moved('switchyard_webhook_delivery_duration_seconds', { outcome: 'succeeded' });
        // Every metric the Grafana dashboard queries (deploy/grafana/dashboards) is on the page.
        const families = await scrape();
        expect(dashboardMetrics().filter((name) => !families.has(name))).to.deep.equal([]);
        await moved('switchyard_http_request_duration_seconds', {
          method: 'POST',
          route: '/v1/workflows/{id}/trigger',
          status: '202',
        });
      } finally {
        await receiver.stop();
      }
    });

    it('counts execution starts, eager when the worker of the same process took the first task', async function () {
      this.timeout(60_000);
      const workspace = await service.newWorkspace(['admin']);
      const api = service.api(workspace.key);
      const workflowId = await createWorkflow(
        api,
        definition([rulesStep('route', [{ when: 'true', output: { tier: 'gold' } }])]),
      );
      const before = await scrape();
      const executionId = await trigger(api, workflowId, {});
      expect((await waitForExecution(api, executionId)).status).to.equal('success');
      const after = await scrape();
      const moved = (eager: string) =>
        sampleOf(after, 'switchyard_execution_starts_total', { eager }) -
        sampleOf(before, 'switchyard_execution_starts_total', { eager });
      // API and worker in one process, the worker idle: Temporal hands the run's task back in the answer.
      expect({ eager: moved('true'), notEager: moved('false') }).to.deep.equal({ eager: 1, notEager: 0 });
    });

    it('serves /metrics on a port of its own, behind METRICS_TOKEN when set', async () => {
      const token = 'metrics-token-0123456789';
      const server = await startMetricsServer({ host: '127.0.0.1', port: 0, token });
      try {
        const url = `http://127.0.0.1:${listeningPort(server)}`;
        await request(url).get('/metrics').expect(401);
        await request(url).get('/metrics').set('Authorization', 'Bearer wrong-token-0123456789').expect(401);
        await request(url).get('/v1/workflows').expect(404);
        const res = await request(url).get('/metrics').set('Authorization', `Bearer ${token}`).expect(200);
        expect(parsePrometheus(res.text).has('switchyard_executions_total')).to.equal(true);
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    });
  });

  describe('on a PostgreSQL server, with a tight rate limit', () => {
    let pgService: TestService;
    before(async function () {
      this.timeout(120_000);
      pgService = await startTestService({
        db: 'postgres',
        env: { RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '1' },
      });
    });
    after(async () => pgService?.stop());

    it("reports the pool's connections and counts a rate-limited trigger as refused for rate_limit", async function () {
      this.timeout(60_000);
      const scrape = async () =>
        parsePrometheus((await request(pgService.url).get('/metrics').expect(200)).text);
      const api = pgService.api();
      const workflowId = await createWorkflow(
        api,
        definition([rulesStep('a', [{ when: 'true', output: { ok: true } }])]),
      );
      const before = await scrape();
      expect(sampleOf(before, 'switchyard_db_pool_connections', { state: 'total' })).to.be.greaterThan(0);
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      expect((await api.post(`/v1/workflows/${workflowId}/trigger`, {})).status).to.equal(202);
      expect((await api.post(`/v1/workflows/${workflowId}/trigger`, {})).status).to.equal(429);
      const after = await scrape();
      const refused = { trigger: 'api', outcome: 'refused', reason: 'rate_limit' };
      expect(
        sampleOf(after, 'switchyard_triggers_total', refused) -
          sampleOf(before, 'switchyard_triggers_total', refused),
      ).to.be.at.least(1);
    });
  });
});
