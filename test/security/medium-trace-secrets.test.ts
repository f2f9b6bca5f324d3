/**
 * A workspace secret a connector puts into its URL's path (`/users/{{ secrets.TOKEN }}`)
 * must not reach traces, which go to a tracing backend outside the secrets' protection. The outbound
 * span records the URL with the secret's value masked. Spans are collected in memory from the process's
 * tracer provider (the worker runs in this process).
 */
import { expect } from 'chai';
import { trace, type ProxyTracerProvider } from '@opentelemetry/api';
import {
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type BasicTracerProvider,
} from '@opentelemetry/sdk-trace-base';
import { createWorkflow, definition, httpStep, trigger, waitForExecution } from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { startTestService, type TestService } from '../support/stack';
import { waitFor } from '../support/wait';

describe('security (medium): secrets in a connector URL do not reach traces @integration', function () {
  let service: TestService;
  let receiver: Receiver;
  const exporter = new InMemorySpanExporter();
  before(async function () {
    this.timeout(120_000);
    receiver = await Receiver.start();
    // Traces on (one provider per process: this one, or the one an earlier suite installed); the OTLP
    // endpoint is a closed port, the spans are read from the in-memory exporter added below.
    service = await startTestService({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_SERVICE_NAME: 'switchyard-test' },
    });
    const provider = (trace.getTracerProvider() as ProxyTracerProvider).getDelegate() as BasicTracerProvider;
    provider.addSpanProcessor(new SimpleSpanProcessor(exporter));
  });
  after(async () => {
    exporter.reset();
    await service?.stop();
    await receiver?.stop();
  });

  it('records a connector URL whose path holds a secret with the secret masked', async function () {
    this.timeout(60_000);
    const api = service.api();
    const token = `tok-${Date.now()}-s3cr3t value`;
    await api.put('/v1/secrets/PATH_TOKEN', { value: token }).expect(204);
    const workflowId = await createWorkflow(
      api,
      definition([httpStep('call', { url: `${receiver.url}/users/{{ secrets.PATH_TOKEN }}/profile` })]),
    );
    const execution = await waitForExecution(api, await trigger(api, workflowId));
    expect(execution.status, JSON.stringify(execution.error)).to.equal('success');
    // The receiver got the real value: the secret was used, not dropped.
    expect(receiver.requests.at(-1)?.path).to.equal(`/users/${encodeURI(token)}/profile`);

    const outbound = await waitFor(
      async () =>
        exporter
          .getFinishedSpans()
          .find((span) => String(span.attributes['url.full'] ?? '').includes('/profile')),
      { timeoutMs: 20_000, what: 'the outbound HTTP span' },
    );
    expect(outbound.attributes['url.full']).to.equal(`${receiver.url}/users/***/profile`);
    for (const span of exporter.getFinishedSpans()) {
      const recorded = JSON.stringify({ name: span.name, attributes: span.attributes, events: span.events });
      for (const form of [token, encodeURI(token), encodeURIComponent(token)]) {
        expect(recorded, `span ${span.name}`).not.to.include(form);
      }
    }
  });
});
