/**
 * `/metrics` names workspaces and workflows, so it is not for anyone who can reach the
 * API's port. Without METRICS_TOKEN it answers only clients on this machine: on the API's port a remote
 * client gets 403, and the METRICS_PORT server listens on METRICS_HOST, 127.0.0.1 unless set. And the
 * `workflow` label, whose values any workspace creates, takes at most 1,000 values per process; later
 * workflows count as `_other`. Remote clients are this machine's own non-loopback address.
 */
import http from 'node:http';
import os from 'node:os';
import { expect } from 'chai';
import { createApp } from '../../src/app';
import { listeningPort } from '../../platform/net/listening-port';
import { metrics } from '../../platform/observability/metrics';
import { metricsSinks } from '../../workers/telemetry';
import { uniqueId } from '../support/fixtures';
import { capturingLogger } from '../support/log-capture';
import { parsePrometheus } from '../support/prometheus';
import { startTestService } from '../support/stack';
import { sharedService } from './support';

/** An IPv4 address of this machine that is not loopback (undefined when it has none). */
function remoteAddress(): string | undefined {
  return Object.values(os.networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
}

/** GET /metrics at host:port: the status, or the connection error's code. */
function scrape(host: string, port: number, token?: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = http.get(
      { host, port, path: '/metrics', headers: token ? { authorization: `Bearer ${token}` } : {} },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    req.setTimeout(5_000, () => req.destroy(new Error('timeout')));
  });
}

async function listenEverywhere(app: {
  callback(): (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>;
}): Promise<http.Server> {
  const handle = app.callback();
  const server = http.createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  return server;
}

describe('security (medium): /metrics exposure and label cardinality @integration', () => {
  it('answers /metrics only to local clients without METRICS_TOKEN: API port 403, METRICS_PORT on 127.0.0.1', async function () {
    this.timeout(180_000);
    const remote = remoteAddress();
    if (!remote) this.skip();

    // On the API's port (no METRICS_PORT), the API listening on every address.
    const services = (await sharedService()).runtime.services;
    const open = await listenEverywhere(
      createApp({
        ...services,
        config: {
          ...services.config,
          metrics: { ...services.config.metrics, port: undefined, token: undefined },
        },
      }),
    );
    const token = 'metrics-token-0123456789';
    const withToken = await listenEverywhere(
      createApp({
        ...services,
        config: { ...services.config, metrics: { ...services.config.metrics, port: undefined, token } },
      }),
    );
    try {
      expect(await scrape(remote, listeningPort(open)), 'a remote client, no token').to.equal(403);
      expect(await scrape('127.0.0.1', listeningPort(open)), 'a local client').to.equal(200);
      expect(
        await scrape(remote, listeningPort(withToken), token),
        'a remote client with the token',
      ).to.equal(200);
    } finally {
      await new Promise((resolve) => open.close(resolve));
      await new Promise((resolve) => withToken.close(resolve));
    }

    // METRICS_PORT with the API on every address (HOST=0.0.0.0): the metrics server stays on loopback.
    const log = capturingLogger();
    const service = await startTestService({
      worker: false,
      logger: log.logger,
      env: { HOST: '0.0.0.0', METRICS_PORT: '0' },
    });
    try {
      const line = log
        .text()
        .split('\n')
        .find((l) => l.includes('Metrics at /metrics'));
      const port = (JSON.parse(line!) as { port: number }).port;
      expect(await scrape('127.0.0.1', port), 'METRICS_PORT from this machine').to.equal(200);
      expect(await scrape(remote, port), 'METRICS_PORT from another address').to.equal('ECONNREFUSED');
    } finally {
      await service.stop();
    }
  });

  it('keeps at most 1,000 distinct workflow label values, counting the rest as _other', async () => {
    const workspace = uniqueId('ws');
    const { executionClosed } = metricsSinks.switchyardMetrics;
    const runs = 1_500;
    for (let i = 0; i < runs; i++) void executionClosed.fn({} as never, 'success', workspace, `wf-${i}`);

    const family = parsePrometheus(await metrics.registry.metrics()).get('switchyard_executions_total');
    const samples = family?.samples ?? [];
    const workflows = new Set(samples.map((s) => s.labels['workflow']));
    expect(workflows.size, 'distinct workflow labels in the process').to.be.at.most(1_001);
    const ours = samples.filter((s) => s.labels['workspace'] === workspace);
    expect(
      ours.reduce((sum, s) => sum + s.value, 0),
      'every execution is still counted',
    ).to.equal(runs);
    expect(
      ours.find((s) => s.labels['workflow'] === '_other')?.value,
      'executions folded into _other',
    ).to.be.greaterThan(0);
  });
});
