/**
 * Starting executions of the demo workflow: through the real HTTP API (auth, rate limiter, DB read of
 * the definition, input validation, Temporal start) and with a raw `client.workflow.start` of the same
 * workflow, same input and same start options over the service's own Temporal connection. The ratio of
 * the two is what the API adds on top of Temporal.
 */
import { EXECUTION_WORKFLOW_TYPE, type ExecutionInput } from '../../workers/shared/execution-types';
import { executionSearchAttributes } from '../../src/executions/trigger';
import { newExecutionId } from '../../src/ids';
import { getWorkflowVersion } from '../../src/store/workflows';
import { runClosedLoop, type LoadResult } from '../load';
import { progress } from '../stack';
import { ratio, round } from '../stats';
import { waitUntilNoneRunning } from '../visibility';
import {
  DEMO_EXECUTIONS_QUERY,
  DEMO_WORKFLOW_ID,
  DEMO_WORKSPACE_ID,
  demoInput,
  type BenchContext,
} from './common';

export interface TriggerMeasurement extends LoadResult {
  warmup: number;
  /** How long the worker took to finish the executions still running when the last start answered. */
  backlog_drain_ms: number;
}

/**
 * Warm-up, wait for its executions to finish, measure, wait again: each measurement starts with an
 * idle worker and dev server, so neither scenario pays for the other's backlog.
 */
async function measureStarts(
  ctx: BenchContext,
  label: string,
  operation: (index: number) => Promise<unknown>,
): Promise<TriggerMeasurement> {
  const { settings, stack } = ctx;
  const client = stack.runtime.services.temporal.client;
  if (settings.warmup > 0) {
    progress(`${label}: warm-up (${settings.warmup})`);
    await runClosedLoop({ count: settings.warmup, concurrency: settings.concurrency, operation });
  }
  await waitUntilNoneRunning(client, DEMO_EXECUTIONS_QUERY);
  progress(`${label}: ${settings.triggers} starts at concurrency ${settings.concurrency}`);
  const result = await runClosedLoop({
    count: settings.triggers,
    concurrency: settings.concurrency,
    operation,
  });
  progress(`${label}: ${result.per_sec}/s, p50 ${result.latency_ms.p50} ms; waiting for the backlog`);
  const drainMs = await waitUntilNoneRunning(client, DEMO_EXECUTIONS_QUERY);
  return { ...result, warmup: settings.warmup, backlog_drain_ms: round(drainMs, 1) };
}

/** POST /v1/workflows/customer-onboarding/trigger through the listening API. */
export async function benchApiTrigger(ctx: BenchContext): Promise<TriggerMeasurement> {
  return measureStarts(ctx, 'api_trigger', (index) => ctx.api.trigger(DEMO_WORKFLOW_ID, demoInput(index)));
}

/**
 * `client.workflow.start` with what triggerExecution/startExecutionWorkflow pass. The definition is read
 * from the DB once (the API reads it per request: that read is part of what the API adds).
 */
export async function benchRawStart(ctx: BenchContext): Promise<TriggerMeasurement> {
  const services = ctx.stack.runtime.services;
  const record = await getWorkflowVersion(services.db, DEMO_WORKSPACE_ID, DEMO_WORKFLOW_ID);
  if (!record) throw new Error(`The demo workflow '${DEMO_WORKFLOW_ID}' is not seeded`);
  const { definition, version } = record;
  // As summaryOf() in src/executions/trigger.ts (not exported).
  const staticSummary = `${definition.name ?? definition.id} (${definition.id} v${version})`;
  const { client } = services.temporal;

  return measureStarts(ctx, 'raw_start', async (index) => {
    const input: ExecutionInput = {
      workspaceId: DEMO_WORKSPACE_ID,
      workflow: { id: record.workflow_id, version, definition },
      trigger: { type: 'api' },
      input: structuredClone(demoInput(index)),
    };
    await client.workflow.start(EXECUTION_WORKFLOW_TYPE, {
      taskQueue: services.config.temporal.taskQueue,
      workflowId: newExecutionId(),
      args: [input],
      typedSearchAttributes: executionSearchAttributes(input),
      staticSummary,
      workflowIdConflictPolicy: 'FAIL',
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      requestEagerStart: services.eagerStart,
    });
  });
}

/** API over raw: throughput below 1 and latencies above 1 are the API's cost. */
export function compareApiToRaw(api: LoadResult, raw: LoadResult) {
  return {
    throughput: ratio(api.per_sec, raw.per_sec),
    p50: ratio(api.latency_ms.p50, raw.latency_ms.p50),
    p99: ratio(api.latency_ms.p99, raw.latency_ms.p99),
  };
}
