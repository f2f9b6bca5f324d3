/**
 * Starting executions of the demo workflow: through the real HTTP API (auth, rate limiter, DB read of
 * the definition, input validation, Temporal start) and with a raw `client.workflow.start` of the same
 * workflow, same input and same start options over the service's own Temporal connection. The ratio of
 * the two is what the API adds on top of Temporal.
 *
 * Both run in alternating rounds (A B, B A, A B, ...), each round starting with an idle worker and dev
 * server: a slow drift of the machine (a growing SQLite file, a neighbour's load) then weighs on both
 * alike instead of on whichever ran second.
 */
import { EXECUTION_WORKFLOW_TYPE, type ExecutionInput } from '../../core/execution-types';
import { executionStartOptions } from '../../src/executions/trigger';
import { newExecutionId } from '../../platform/ids';
import { getWorkflowVersion } from '../../platform/store/workflows';
import { runClosedLoop, summarizeRuns, type LoadResult, type LoadRun } from '../load';
import { progress } from '../stack';
import { ratio, round } from '../stats';
import { waitUntilNoneRunning } from '../visibility';
import {
  DEMO_EXECUTIONS_QUERY,
  DEMO_WORKFLOW_ID,
  DEMO_WORKSPACE_ID,
  demoInput,
  split,
  type BenchContext,
} from './common';

type StartOperation = (index: number) => Promise<unknown>;

export interface StartMeasurement extends LoadResult {
  warmup: number;
  /** Summed over rounds: how long the worker took to finish the runs still open when a round ended. */
  backlog_drain_ms: number;
}

/** POST /v1/workflows/customer-onboarding/trigger through the listening API. */
export function apiTriggerOperation(ctx: BenchContext): StartOperation {
  return (index) => ctx.api.trigger(DEMO_WORKFLOW_ID, demoInput(index));
}

/**
 * `client.workflow.start` with what triggerExecution/startExecutionWorkflow pass. The definition is read
 * from the DB once (the API reads it per request: that read is part of what the API adds).
 */
export async function rawStartOperation(ctx: BenchContext): Promise<StartOperation> {
  const services = ctx.stack.runtime.services;
  const record = await getWorkflowVersion(services.db, DEMO_WORKSPACE_ID, DEMO_WORKFLOW_ID);
  if (!record) throw new Error(`The demo workflow '${DEMO_WORKFLOW_ID}' is not seeded`);
  const { definition, version } = record;
  const { client } = services.temporal;
  return async (index) => {
    const input: ExecutionInput = {
      workspaceId: DEMO_WORKSPACE_ID,
      workflow: { id: record.workflow_id, version, definition },
      trigger: { type: 'api' },
      input: structuredClone(demoInput(index)),
    };
    await client.workflow.start(
      EXECUTION_WORKFLOW_TYPE,
      executionStartOptions(services, newExecutionId(), input),
    );
  };
}

interface Contender {
  label: string;
  operation: StartOperation;
  runs: LoadRun[];
  drainMs: number;
}

/** The api_trigger, raw_start and api_vs_raw sections. */
export async function benchApiVersusRaw(ctx: BenchContext) {
  const { settings, stack } = ctx;
  const client = stack.runtime.services.temporal.client;
  const drain = () => waitUntilNoneRunning(client, DEMO_EXECUTIONS_QUERY);
  const api: Contender = { label: 'api_trigger', operation: apiTriggerOperation(ctx), runs: [], drainMs: 0 };
  const raw: Contender = {
    label: 'raw_start',
    operation: await rawStartOperation(ctx),
    runs: [],
    drainMs: 0,
  };

  let index = 0;
  if (settings.warmup > 0) {
    for (const contender of [api, raw]) {
      progress(`${contender.label}: warm-up (${settings.warmup})`);
      await runClosedLoop({
        count: settings.warmup,
        concurrency: settings.concurrency,
        operation: contender.operation,
        firstIndex: index,
      });
      index += settings.warmup;
    }
    await drain();
  }

  const sizes = split(settings.triggers, settings.rounds);
  for (const [roundIndex, size] of sizes.entries()) {
    for (const contender of roundIndex % 2 === 0 ? [api, raw] : [raw, api]) {
      const run = await runClosedLoop({
        count: size,
        concurrency: settings.concurrency,
        operation: contender.operation,
        firstIndex: index,
      });
      index += size;
      contender.runs.push(run);
      progress(
        `${contender.label}: round ${roundIndex + 1}/${sizes.length}, ${size} starts in ${Math.round(run.durationMs)} ms; draining`,
      );
      contender.drainMs += await drain();
    }
  }

  const measured = (contender: Contender): StartMeasurement => ({
    ...summarizeRuns(contender.runs),
    warmup: settings.warmup,
    backlog_drain_ms: round(contender.drainMs, 1),
  });
  const apiTrigger = measured(api);
  const rawStart = measured(raw);
  return { api_trigger: apiTrigger, raw_start: rawStart, api_vs_raw: compareApiToRaw(apiTrigger, rawStart) };
}

/** API over raw: throughput below 1 and latencies above 1 are the API's cost. */
export function compareApiToRaw(api: LoadResult, raw: LoadResult) {
  return {
    throughput: ratio(api.per_sec, raw.per_sec),
    p50: ratio(api.latency_ms.p50, raw.latency_ms.p50),
    p99: ratio(api.latency_ms.p99, raw.latency_ms.p99),
  };
}
