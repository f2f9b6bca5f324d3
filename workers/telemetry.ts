/**
 * The worker's side of observability (docs/operations.md#metrics): the sink workflow code reports an
 * execution's end to, and an activity interceptor that counts failed attempts by error code, times the
 * retry attempts of connector and ai steps, and puts the run's request id into every log line of the
 * activity.
 */
import { defaultPayloadConverter } from '@temporalio/common';
import type { Context as ActivityContext } from '@temporalio/activity';
import { trace } from '@opentelemetry/api';
import type * as TemporalOpenTelemetry from '@temporalio/interceptors-opentelemetry';
import type { ActivityInterceptors, ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import { REQUEST_ID_HEADER, type MetricsSinks } from '../core/telemetry';
import { metrics } from '../platform/observability/metrics';
import {
  EXECUTION_ID_ATTRIBUTE,
  REQUEST_ID_ATTRIBUTE,
  tracingInstalled,
  type Tracing,
} from '../platform/observability/tracing';

export const metricsSinks: InjectedSinks<MetricsSinks> = {
  switchyardMetrics: {
    executionClosed: {
      fn: (_info, status, workspace, workflow) => metrics.executionClosed(status, workspace, workflow),
      callDuringReplay: false,
    },
  },
};

/** Activities that retry one step: their attempts are that step kind's attempts. */
const STEP_KIND_OF_ACTIVITY: Record<string, string> = { connector_http: 'connector', ai: 'ai' };

/** The error code of a failed attempt: an ApplicationFailure's type, else the error's name. */
export function failureCode(error: unknown): string {
  if (typeof error !== 'object' || error === null) return 'unknown';
  const { type, name } = error as { type?: unknown; name?: unknown };
  if (typeof type === 'string' && type) return type;
  return typeof name === 'string' && name ? name : 'unknown';
}

export function activityTelemetry(ctx: ActivityContext): ActivityInterceptors {
  let requestId: string | undefined;
  const activity = ctx.info.activityType;
  const stepKind = STEP_KIND_OF_ACTIVITY[activity];
  return {
    inbound: {
      async execute(input, next) {
        const header = input.headers[REQUEST_ID_HEADER];
        if (header) requestId = defaultPayloadConverter.fromPayload<string>(header);
        // Under tracing, the activity's span (tracedActivity, outside this one) names the request and run.
        if (tracingInstalled())
          trace.getActiveSpan()?.setAttributes({
            ...(ctx.info.workflowExecution && {
              [EXECUTION_ID_ATTRIBUTE]: ctx.info.workflowExecution.workflowId,
            }),
            ...(requestId && { [REQUEST_ID_ATTRIBUTE]: requestId }),
          });
        const started = performance.now();
        try {
          const result = await next(input);
          if (stepKind)
            metrics.stepDuration.observe(
              { kind: stepKind, status: 'success' },
              (performance.now() - started) / 1000,
            );
          return result;
        } catch (error) {
          metrics.activityFailures.inc({ activity, code: failureCode(error) });
          if (stepKind)
            metrics.stepDuration.observe(
              { kind: stepKind, status: 'failed' },
              (performance.now() - started) / 1000,
            );
          throw error;
        }
      },
    },
    outbound: {
      getLogAttributes: (input, next) => next(requestId ? { ...input, requestId } : input),
    },
  };
}

/** The span of each activity, a child of the workflow's (its context travels in the activity's headers). */
export function tracedActivity(tracing: Tracing): ActivityInterceptorsFactory {
  const { OpenTelemetryActivityInboundInterceptor, OpenTelemetryActivityOutboundInterceptor } =
    otelInterceptors();
  return (ctx) => ({
    inbound: new OpenTelemetryActivityInboundInterceptor(ctx, { tracer: tracing.tracer }),
    outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
  });
}

/** Where workflow code's spans leave the workflow sandbox: the process's span processor. */
export function tracingSinks(tracing: Tracing) {
  return { exporter: otelInterceptors().makeWorkflowExporter(tracing.processor, tracing.resource) };
}

/** Loaded when traces are on only (platform/observability/tracing.ts). */
function otelInterceptors(): typeof TemporalOpenTelemetry {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('@temporalio/interceptors-opentelemetry') as typeof TemporalOpenTelemetry;
}
