/**
 * Traces (docs/operations.md#traces): with OTEL_EXPORTER_OTLP_ENDPOINT set, one trace from the HTTP
 * request through the workflow start, the workflow, the step's activity and its outbound HTTP call,
 * received by an OTLP/HTTP receiver in the test, with the request id and execution id as attributes.
 */
import http from 'node:http';
import { expect } from 'chai';
import { createWorkflow, definition, httpStep, rulesStep, waitForExecution } from '../support/fixtures';
import { listeningPort } from '../../platform/net/listening-port';
import { Receiver } from '../support/receiver';
import { startTestService, type TestService } from '../support/stack';
import { waitFor } from '../support/wait';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: { key: string; value: { stringValue?: string; intValue?: number | string } }[];
}

/** An OTLP/HTTP receiver (JSON encoding, what @opentelemetry/exporter-trace-otlp-http sends). */
async function startOtlpReceiver() {
  const spans: OtlpSpan[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.url === '/v1/traces' && req.headers['content-type']?.includes('json')) {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[];
        };
        for (const resource of body.resourceSpans)
          for (const scope of resource.scopeSpans) spans.push(...scope.spans);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${listeningPort(server)}`,
    spans,
    stop: () => new Promise((resolve) => server.close(resolve)),
  };
}

const attribute = (span: OtlpSpan, key: string) => {
  const value = span.attributes?.find((a) => a.key === key)?.value;
  return value?.stringValue ?? value?.intValue;
};

describe('traces @integration', function () {
  let service: TestService;
  let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let receiver: Receiver;
  before(async function () {
    this.timeout(120_000);
    otlp = await startOtlpReceiver();
    receiver = await Receiver.start();
    service = await startTestService({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_SERVICE_NAME: 'switchyard-test' },
    });
  });
  after(async () => {
    await service?.stop();
    await receiver?.stop();
    await otlp?.stop();
  });

  it('links the request, the workflow start, the workflow, the step activity and its HTTP call in one trace', async function () {
    this.timeout(60_000);
    const api = service.api();
    const workflowId = await createWorkflow(
      api,
      definition([
        rulesStep('route', [{ when: 'true', output: { tier: 'gold' } }]),
        httpStep('call', {
          url: `${receiver.url}/traced`,
          method: 'POST',
          body: { tier: '{{ steps.route.output.tier }}' },
        }),
      ]),
    );
    const requestId = 'req-traced-1';
    const res = await api.post(`/v1/workflows/${workflowId}/trigger`, {}).set('X-Request-Id', requestId);
    expect(res.status).to.equal(202);
    const executionId = res.body.execution_id as string;
    expect((await waitForExecution(api, executionId)).status).to.equal('success');

    const server = await waitFor(
      async () =>
        otlp.spans.find(
          (s) =>
            s.name === 'POST /v1/workflows/{id}/trigger' &&
            attribute(s, 'switchyard.request_id') === requestId,
        ),
      { timeoutMs: 20_000, what: 'the request span' },
    );
    expect(attribute(server, 'switchyard.execution_id')).to.equal(executionId);
    const inTrace = () => otlp.spans.filter((s) => s.traceId === server.traceId);
    const outbound = await waitFor(
      async () =>
        inTrace().find((s) => s.name === 'POST' && String(attribute(s, 'url.full')).endsWith('/traced')),
      { timeoutMs: 20_000, what: 'the outbound HTTP span in the same trace' },
    );
    // From the HTTP call up to the request, parent by parent.
    const byId = new Map(inTrace().map((s) => [s.spanId, s]));
    const chain: string[] = [];
    for (
      let span: OtlpSpan | undefined = outbound;
      span;
      span = span.parentSpanId ? byId.get(span.parentSpanId) : undefined
    )
      chain.push(span.name);
    expect(chain[0]).to.equal('POST');
    expect(chain.at(-1)).to.equal('POST /v1/workflows/{id}/trigger');
    for (const name of [
      'RunActivity:run_steps',
      'StartActivity:run_steps',
      'RunWorkflow:execution',
      'StartWorkflow:execution',
    ])
      expect(chain, `${name} in ${chain.join(' <- ')}`).to.include(name);
    const activity = inTrace().find((s) => s.name === 'RunActivity:run_steps')!;
    expect(attribute(activity, 'switchyard.request_id')).to.equal(requestId);
    expect(attribute(activity, 'switchyard.execution_id')).to.equal(executionId);
    // The receiver can join the trace.
    const received = receiver.requestsTo('/traced')[0]!;
    expect(received.headers['traceparent']).to.match(new RegExp(`^00-${server.traceId}-[0-9a-f]{16}-0[01]$`));
  });
});
