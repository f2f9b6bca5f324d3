/**
 * A third party a workspace points its connector at cannot hold a worker slot without end
 * (docs/operations.md#threat-model): a response body that trickles in is cut off
 * (CONNECTOR_BODY_IDLE_TIMEOUT_MS), a response larger than the cap fails the step, and a step may ask for
 * at most 24 h (docs/definitions.md#limits).
 */
import http from 'node:http';
import { expect } from 'chai';
import {
  createWorkflow,
  definition,
  expectError,
  httpStep,
  trigger,
  waitForExecution,
} from '../support/fixtures';
import { listeningPort } from '../../platform/net/listening-port';
import { listenOnLoopback } from '../support/ports';
import { startTestService, type TestService } from '../support/stack';

const ONE_ATTEMPT = { max_attempts: 1 };

describe('connector limits @security', function () {
  let service: TestService;
  let trickler: http.Server;
  before(async function () {
    this.timeout(120_000);
    service = await startTestService({
      env: { CONNECTOR_BODY_IDLE_TIMEOUT_MS: '500', CONNECTOR_MAX_RESPONSE_BYTES: '2048' },
    });
    // Sends its headers and a first byte at once, then one byte every 2 s: within the step's timeout,
    // but pausing longer than the body idle timeout.
    trickler = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('x');
      const timer = setInterval(() => res.write('x'), 2000);
      req.socket.on('close', () => clearInterval(timer));
    });
    await listenOnLoopback(trickler);
  });
  after(async () => {
    trickler?.closeAllConnections();
    trickler?.close();
    await service?.stop();
  });

  it('a response body that pauses past CONNECTOR_BODY_IDLE_TIMEOUT_MS fails the attempt', async () => {
    const url = `http://127.0.0.1:${listeningPort(trickler)}/slow`;
    const workflowId = await createWorkflow(
      service.api(),
      definition([httpStep('call', { url }, { timeout: '1h', retry: ONE_ATTEMPT })]),
    );
    const started = Date.now();
    const execution = await waitForExecution(service.api(), await trigger(service.api(), workflowId));
    expect(execution.status).to.equal('failed');
    expect(execution.error).to.include({ step: 'call', code: 'network_error' });
    expect(execution.error!.message).to.match(/paused for longer/);
    expect(Date.now() - started, 'ms until the step failed').to.be.below(10_000);
  });

  it('a response past CONNECTOR_MAX_RESPONSE_BYTES fails with response_too_large', async () => {
    const big = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('y'.repeat(4096));
    });
    await listenOnLoopback(big);
    try {
      const url = `http://127.0.0.1:${listeningPort(big)}/big`;
      const workflowId = await createWorkflow(
        service.api(),
        definition([httpStep('call', { url }, { retry: ONE_ATTEMPT })]),
      );
      const execution = await waitForExecution(service.api(), await trigger(service.api(), workflowId));
      expect(execution.error).to.include({ step: 'call', code: 'response_too_large' });
      expect(execution.error!.message).to.match(/larger than 2048 bytes/);
    } finally {
      big.close();
    }
  });

  it('a step timeout past 24h is refused when saved', async () => {
    const res = await service
      .api()
      .post(
        '/v1/workflows',
        definition([httpStep('call', { url: 'https://x.example' }, { timeout: '30d' })]),
      );
    expectError(res, 400, 'invalid_definition');
    expect(res.body.error.details[0]).to.deep.include({ path: '/steps/0/timeout' });
    expect(res.body.error.details[0].message).to.match(/at most 24h/);
  });
});
