/**
 * OpenTelemetry traces (docs/operations.md#traces), configured by OpenTelemetry's standard variables and
 * off unless an OTLP endpoint is set: then one trace runs from the HTTP request (trigger or hook) through
 * the client's workflow start, the workflow, each step's activity and its outbound HTTP call
 * (@temporalio/interceptors-opentelemetry carries the context through Temporal headers). Off, nothing is
 * installed: no interceptor, no span, no exporter.
 *
 * Variables (read here and by the OTLP exporter): OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (on when either is set), OTEL_EXPORTER_OTLP_HEADERS,
 * OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_EXPORTER (`none` turns traces off),
 * OTEL_SDK_DISABLED (`true` turns them off), OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG (sampling,
 * default every trace).
 */
import {
  context,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import type * as OtlpHttp from '@opentelemetry/exporter-trace-otlp-http';
import type * as Resources from '@opentelemetry/resources';
import type { Resource } from '@opentelemetry/resources';
import type * as TraceBase from '@opentelemetry/sdk-trace-base';
import type { SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type * as TraceNode from '@opentelemetry/sdk-trace-node';
import type { ClientInterceptors } from '@temporalio/client';
import type * as TemporalOpenTelemetry from '@temporalio/interceptors-opentelemetry';
import type Koa from 'koa';

/** OpenTelemetry's variables this service documents (docs/operations.md#traces); its SDK reads them. */
export const OTEL_VARIABLES = [
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_HEADERS',
  'OTEL_SERVICE_NAME',
  'OTEL_RESOURCE_ATTRIBUTES',
  'OTEL_TRACES_EXPORTER',
  'OTEL_SDK_DISABLED',
  'OTEL_TRACES_SAMPLER',
  'OTEL_TRACES_SAMPLER_ARG',
] as const;

export interface Tracing {
  tracer: Tracer;
  resource: Resource;
  exporter: SpanExporter;
  processor: SpanProcessor;
  /** Sends the spans still buffered. */
  flush(): Promise<void>;
}

let installed: Tracing | undefined;

/** Whether the environment asks for traces. */
export function tracingRequested(env: Record<string, string | undefined>): boolean {
  if (env['OTEL_SDK_DISABLED']?.toLowerCase() === 'true') return false;
  if (env['OTEL_TRACES_EXPORTER'] !== undefined && env['OTEL_TRACES_EXPORTER'] !== 'otlp') return false;
  return Boolean(env['OTEL_EXPORTER_OTLP_ENDPOINT'] || env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']);
}

/**
 * This process's tracing, installed on first use when the environment asks for it (one provider per
 * process: the API and the worker of the embedded process share it); undefined when off.
 */
export function startTracing(env: Record<string, string | undefined>, role: string): Tracing | undefined {
  if (!tracingRequested(env)) return undefined;
  if (installed) return installed;
  // The SDK is loaded only when traces are on (some 9 MB a process that never uses it).
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http') as typeof OtlpHttp;
  const { Resource } = require('@opentelemetry/resources') as typeof Resources;
  const { BatchSpanProcessor } = require('@opentelemetry/sdk-trace-base') as typeof TraceBase;
  const { NodeTracerProvider } = require('@opentelemetry/sdk-trace-node') as typeof TraceNode;
  /* eslint-enable @typescript-eslint/no-require-imports */
  const resource = new Resource({
    'service.name': env['OTEL_SERVICE_NAME'] ?? `switchyard-${role}`,
  }).merge(Resource.default());
  // The endpoint from the environment given (tests pass their own); headers and the rest the exporter
  // reads from process.env itself.
  const base = env['OTEL_EXPORTER_OTLP_ENDPOINT']?.replace(/\/+$/, '');
  const exporter = new OTLPTraceExporter({
    url: env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'] ?? `${base}/v1/traces`,
  });
  const processor = new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1_000 });
  // The sampler follows OTEL_TRACES_SAMPLER (default: parent-based, always on).
  const provider = new NodeTracerProvider({ resource, spanProcessors: [processor] });
  provider.register();
  installed = {
    tracer: trace.getTracer('switchyard'),
    resource,
    exporter,
    processor,
    flush: () => provider.forceFlush(),
  };
  return installed;
}

/** Span attributes naming a request and the execution it started. */
export const REQUEST_ID_ATTRIBUTE = 'switchyard.request_id';
export const EXECUTION_ID_ATTRIBUTE = 'switchyard.execution_id';

/**
 * A server span around each API request (a child of the caller's `traceparent`, if any), active while the
 * request runs, so the Temporal client's start-workflow span is its child. Named by route pattern.
 */
export function requestSpans(tracing: Tracing, routeOf: (ctx: Koa.Context) => string): Koa.Middleware {
  return async (ctx, next) => {
    const parent = propagation.extract(context.active(), ctx.headers);
    const span = tracing.tracer.startSpan(
      `${ctx.method} ${ctx.path}`,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': ctx.method,
          'url.path': ctx.path,
          [REQUEST_ID_ATTRIBUTE]: ctx.state['requestId'] as string,
        },
      },
      parent,
    );
    try {
      await context.with(trace.setSpan(parent, span), next);
    } finally {
      const route = routeOf(ctx);
      span.updateName(`${ctx.method} ${route}`);
      span.setAttribute('http.route', route);
      span.setAttribute('http.response.status_code', ctx.status);
      const executionId = (ctx.body as { execution_id?: unknown } | null)?.execution_id;
      if (typeof executionId === 'string') span.setAttribute(EXECUTION_ID_ATTRIBUTE, executionId);
      if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
  };
}

/**
 * A client span around an outbound HTTP call (connectors, AI, webhooks); just `fn` when tracing is off.
 * `redact` masks what the recorded URL must not show: the values of the workspace's secrets that
 * templates put into the URL (traces go to a third-party backend, outside the secrets' protection).
 */
export async function outboundSpan<T>(
  method: string,
  url: string,
  fn: (span: Span | undefined) => Promise<T>,
  redact: (text: string) => string = (text) => text,
): Promise<T> {
  // Only inside a traced run: an untraced run in a tracing process (or a process without) pays nothing.
  if (!installed || !trace.getActiveSpan()) return fn(undefined);
  let target: URL | undefined;
  try {
    target = new URL(url);
  } catch {
    target = undefined;
  }
  const attributes: Attributes = {
    'http.request.method': method,
    // Without the query string (it may carry credentials), and with secrets masked in the rest.
    ...(target && {
      'url.full': redact(`${target.protocol}//${target.host}${target.pathname}`),
      'server.address': redact(target.hostname),
    }),
  };
  return installed.tracer.startActiveSpan(
    `${method}`,
    { kind: SpanKind.CLIENT, attributes },
    async (span) => {
      try {
        return await fn(span);
      } catch (error) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

/** The headers plus the active span's `traceparent` (W3C), so the receiver can join the trace. */
export function withTraceContext(headers: Record<string, string>): Record<string, string> {
  const carrier = { ...headers };
  propagation.inject(context.active(), carrier);
  return carrier;
}

/** The Temporal client's interceptors that start workflows inside the request's trace. */
export function tracingClientInterceptors(tracing: Tracing): ClientInterceptors {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const otel = require('@temporalio/interceptors-opentelemetry') as typeof TemporalOpenTelemetry;
  return { workflow: [new otel.OpenTelemetryWorkflowClientInterceptor({ tracer: tracing.tracer })] };
}

/** Whether this process traces (activities read it to annotate their spans). */
export function tracingInstalled(): Tracing | undefined {
  return installed;
}
