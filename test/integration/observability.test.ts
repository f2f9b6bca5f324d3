/**
 * Observability (docs/operations.md#logs): the access log.
 */
import { PassThrough } from 'node:stream';
import { expect } from 'chai';
import { createLogger } from '../../src/logger';
import { createWorkflow, definition, rulesStep } from '../support/fixtures';
import { startTestService, type TestService } from '../support/stack';

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
      const workflowId = await createWorkflow(api, definition([rulesStep('a', [{ when: 'true', output: { ok: true } }])]));
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
});
