/**
 * Workflow interceptors, bundled with the workflow code (scripts/bundle-workflows.ts). They add no
 * command, so histories recorded without them replay the same:
 * - an execution's end is reported through a sink (the worker counts it; sinks are not called during
 *   replay, so a replayed run is never counted twice);
 * - the request id the API put in the memo travels to every activity in a header, so activities log it;
 * - a run started with a trace context (`_tracer-data` header: the API traces, docs/operations.md#traces)
 *   gets @temporalio/interceptors-opentelemetry's spans for the workflow and the activities it schedules.
 *   A run without one never enters that code, so runs recorded before tracing existed replay unchanged.
 */
import {
  defaultPayloadConverter,
  isCancellation,
  proxySinks,
  workflowInfo,
  type ActivityInput,
  type LocalActivityInput,
  type Next,
  type Payload,
  type WorkflowExecuteInput,
  type WorkflowInboundCallsInterceptor,
  type WorkflowInterceptors,
  type WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';
import type * as OpenTelemetryInterceptors from '@temporalio/interceptors-opentelemetry/lib/workflow';
import {
  REQUEST_ID_HEADER,
  REQUEST_ID_MEMO,
  type ClosedStatus,
  type MetricsSinks,
} from '../../core/telemetry';

const { switchyardMetrics } = proxySinks<MetricsSinks>();

/** The header @temporalio/interceptors-opentelemetry carries a span context in. */
const TRACE_HEADER = '_tracer-data';

/**
 * Loaded on the first traced run only: evaluating OpenTelemetry in the workflow sandbox costs every run
 * some 2.5 ms of CPU (measured by replaying the recorded histories), which untraced runs must not pay.
 */
function openTelemetry(): typeof OpenTelemetryInterceptors {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('@temporalio/interceptors-opentelemetry/lib/workflow') as typeof OpenTelemetryInterceptors;
}

export const interceptors = (): WorkflowInterceptors => {
  // Per run: the request id, encoded once as a header payload, and whether the run is traced.
  let requestId: Payload | undefined;
  let otel:
    | {
        inbound: OpenTelemetryInterceptors.OpenTelemetryInboundInterceptor;
        outbound: OpenTelemetryInterceptors.OpenTelemetryOutboundInterceptor;
        internals: OpenTelemetryInterceptors.OpenTelemetryInternalsInterceptor;
      }
    | undefined;
  const tracedInbound: WorkflowInboundCallsInterceptor = {
    execute(input, next) {
      if (input.headers[TRACE_HEADER] === undefined) return next(input);
      const {
        OpenTelemetryInboundInterceptor,
        OpenTelemetryOutboundInterceptor,
        OpenTelemetryInternalsInterceptor,
      } = openTelemetry();
      otel = {
        inbound: new OpenTelemetryInboundInterceptor(),
        outbound: new OpenTelemetryOutboundInterceptor(),
        internals: new OpenTelemetryInternalsInterceptor(),
      };
      return otel.inbound.execute(input, next);
    },
  };
  const tracedOutbound: WorkflowOutboundCallsInterceptor = {
    scheduleActivity: (input, next) => (otel ? otel.outbound.scheduleActivity(input, next) : next(input)),
    scheduleLocalActivity: (input, next) =>
      otel ? otel.outbound.scheduleLocalActivity(input, next) : next(input),
  };
  const inbound: WorkflowInboundCallsInterceptor = {
    execute(input: WorkflowExecuteInput, next: Next<WorkflowInboundCallsInterceptor, 'execute'>) {
      const info = workflowInfo();
      const id = info.memo?.[REQUEST_ID_MEMO];
      requestId = typeof id === 'string' ? defaultPayloadConverter.toPayload(id) : undefined;
      if (info.workflowType !== 'execution') return next(input);
      const run = input.args[0] as { workspaceId?: string; workflow?: { id?: string } } | undefined;
      const report = (status: ClosedStatus) =>
        switchyardMetrics.executionClosed(status, run?.workspaceId ?? '', run?.workflow?.id ?? '');
      const failed = (error: unknown): never => {
        report(isCancellation(error) ? 'canceled' : 'failed');
        throw error;
      };
      // One promise where an async function makes three: every promise in workflow code costs the SDK a
      // captured stack trace (docs/benchmarks.md#against-the-tight-floor-2026-11-27).
      let running: Promise<unknown>;
      try {
        running = next(input);
      } catch (error) {
        return failed(error);
      }
      return running.then((result) => {
        report('success');
        return result;
      }, failed);
    },
  };
  const withRequestId = <T extends ActivityInput | LocalActivityInput>(input: T): T =>
    requestId ? { ...input, headers: { ...input.headers, [REQUEST_ID_HEADER]: requestId } } : input;
  const outbound: WorkflowOutboundCallsInterceptor = {
    scheduleActivity: (input, next) => next(withRequestId(input)),
    scheduleLocalActivity: (input, next) => next(withRequestId(input)),
  };
  return {
    inbound: [inbound, tracedInbound],
    outbound: [outbound, tracedOutbound],
    internals: [
      {
        dispose: (input, next) => {
          // Its dispose runs synchronously up to next() (it only disables its context manager).
          if (otel) void otel.internals.dispose(input, next);
          else next(input);
        },
      },
    ],
  };
};
