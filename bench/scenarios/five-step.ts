/**
 * Executions completed per second of a five-step workflow (rules → http connector → rules → http
 * connector → rules; the connectors call a local receiver that answers 200 JSON at once):
 *
 * - `api`: the `bench-five-step` definition, triggered through the listening API and run by the
 *   service's execution workflow (the definition interpreter);
 * - `baseline`: the same steps written by hand as a plain Temporal workflow (bench/workflows/baseline.ts),
 *   started with `client.workflow.start` (no search attributes) on a task queue of its own, run by a
 *   second worker in this process over the same NativeConnection, with the same activities and worker
 *   settings as the service's worker.
 *
 * Both start the same number of runs with the same inputs at the same concurrency, in alternating
 * rounds (A B, B A, ...), each measured like end_to_end: from the first start to the last CloseTime in
 * visibility. `results_match` says whether the first run of each came to the same result (the API's last
 * step output, the baseline's return value), i.e. whether both did the same work.
 */
import type { Client } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, Worker } from '@temporalio/worker';
import type { Definition } from '../../core/definitions/schema';
import { createActivities } from '../../workers/activities';
import { WORKFLOW_ATTRIBUTE, WORKSPACE_ATTRIBUTE } from '../../core/search-attributes';
import { runToCompletion, summarizeCompletions, type CompletionRun } from '../completion';
import { startReceiver } from '../receiver';
import { progress } from '../stack';
import { ratio } from '../stats';
import { quote } from '../visibility';
import {
  BASELINE_WORKFLOW_TYPE,
  FIVE_STEP_RULES,
  type fiveStepBaseline,
  type FiveStepInput,
} from '../workflows/baseline';
import { CUSTOMER_INPUT_SCHEMA, DEMO_WORKSPACE_ID, demoInput, split, type BenchContext } from './common';

const FIVE_STEP_WORKFLOW_ID = 'bench-five-step';
const BASELINE_TASK_QUEUE = 'switchyard-bench-baseline';

const API_QUERY = `${WORKSPACE_ATTRIBUTE.name} = ${quote(DEMO_WORKSPACE_ID)} AND ${WORKFLOW_ATTRIBUTE.name} = ${quote(FIVE_STEP_WORKFLOW_ID)}`;
const BASELINE_QUERY = `WorkflowType = ${quote(BASELINE_WORKFLOW_TYPE)}`;

/** The definition the baseline workflow hand-codes: same rules, same requests. */
export function fiveStepDefinition(receiverUrl: string): Definition {
  return {
    id: FIVE_STEP_WORKFLOW_ID,
    name: 'Benchmark: five steps',
    input_schema: CUSTOMER_INPUT_SCHEMA,
    steps: [
      { id: 'classify', kind: 'rules', ...FIVE_STEP_RULES.classify },
      {
        id: 'crm',
        kind: 'connector',
        connector: 'http',
        request: {
          method: 'POST',
          url: `${receiverUrl}/crm`,
          body: { customer: '{{ input.customer }}', tier: '{{ steps.classify.output.tier }}' },
        },
      },
      { id: 'check', kind: 'rules', ...FIVE_STEP_RULES.check },
      {
        id: 'notify',
        kind: 'connector',
        connector: 'http',
        request: {
          method: 'POST',
          url: `${receiverUrl}/notify`,
          body: { customer: '{{ input.customer }}', account: '{{ steps.check.output.account }}' },
        },
      },
      { id: 'summary', kind: 'rules', ...FIVE_STEP_RULES.summary },
    ],
  };
}

interface Contender {
  label: string;
  query: string;
  start: (index: number) => Promise<string>;
  /** The workflow id of run 0 (the same input on both sides). */
  firstId?: string;
  next: number;
  runs: CompletionRun[];
}

export async function benchFiveStep(ctx: BenchContext) {
  const { settings, stack, api } = ctx;
  const services = stack.runtime.services;
  const { client, connection, namespace } = services.temporal;
  const receiver = await startReceiver();
  let worker: Worker | undefined;
  let running: Promise<void> | undefined;
  try {
    await api.createWorkflow(fiveStepDefinition(receiver.url));

    progress('five_step_e2e: bundling the baseline workflow and starting its worker');
    worker = await Worker.create({
      connection,
      namespace,
      taskQueue: BASELINE_TASK_QUEUE,
      workflowBundle: await bundleWorkflowCode({
        workflowsPath: require.resolve('../workflows/baseline'),
        logger: new DefaultLogger('WARN'),
      }),
      activities: createActivities({
        db: services.db,
        reads: services.reads,
        cipher: services.cipher,
        compute: services.compute,
        allowPrivateDestinations: true,
        ai: services.config.ai,
        client: services.temporal.client,
        webhookRetryScheduleMs: services.config.webhookRetryScheduleMs,
        deliveryLogRetentionDays: services.config.deliveryLogRetentionDays,
        executionRetentionDays: services.config.temporal.retentionDays,
        eventRetentionDays: services.config.eventRetentionDays,
      }),
      // As createExecutionWorker.
      maxConcurrentActivityTaskExecutions: 200,
      shutdownGraceTime: '10s',
    });
    running = worker.run();

    const tag = Date.now().toString(36);
    const apiSide: Contender = {
      label: 'five_step_e2e api',
      query: API_QUERY,
      start: (index) => api.trigger(FIVE_STEP_WORKFLOW_ID, demoInput(index)),
      next: 0,
      runs: [],
    };
    const baselineSide: Contender = {
      label: 'five_step_e2e baseline',
      query: BASELINE_QUERY,
      start: async (index) => {
        const input: FiveStepInput = demoInput(index);
        const handle = await client.workflow.start<typeof fiveStepBaseline>(BASELINE_WORKFLOW_TYPE, {
          taskQueue: BASELINE_TASK_QUEUE,
          workflowId: `bench-baseline-${tag}-${index}`,
          args: [{ workspaceId: DEMO_WORKSPACE_ID, receiverUrl: receiver.url, input }],
          requestEagerStart: services.eagerStart,
        });
        return handle.workflowId;
      },
      next: 0,
      runs: [],
    };

    const batch = async (contender: Contender, count: number) => {
      const firstIndex = contender.next;
      contender.next += count;
      return runToCompletion({
        client,
        label: contender.label,
        query: contender.query,
        count,
        concurrency: settings.concurrency,
        firstIndex,
        start: async (index) => {
          const id = await contender.start(index);
          if (index === 0) contender.firstId = id;
        },
      });
    };

    if (settings.fiveStepWarmup > 0)
      for (const contender of [apiSide, baselineSide]) await batch(contender, settings.fiveStepWarmup);
    const sizes = split(settings.fiveStep, settings.fiveStepRounds);
    for (const [roundIndex, size] of sizes.entries()) {
      for (const contender of roundIndex % 2 === 0 ? [apiSide, baselineSide] : [baselineSide, apiSide])
        contender.runs.push(await batch(contender, size));
    }

    const apiResult = summarizeCompletions(apiSide.runs);
    const baselineResult = summarizeCompletions(baselineSide.runs);
    const results = await compareResults(client, api, apiSide.firstId, baselineSide.firstId);
    return {
      executions: settings.fiveStep,
      concurrency: settings.concurrency,
      rounds: sizes.length,
      warmup: settings.fiveStepWarmup,
      api: apiResult,
      baseline: baselineResult,
      /** API over baseline: throughput below 1 and latencies above 1 are the service's cost. */
      api_vs_baseline: {
        throughput: ratio(apiResult.completed_per_sec, baselineResult.completed_per_sec),
        latency_mean: ratio(apiResult.execution_latency_ms.mean, baselineResult.execution_latency_ms.mean),
        latency_p50: ratio(apiResult.execution_latency_ms.p50, baselineResult.execution_latency_ms.p50),
        latency_p99: ratio(apiResult.execution_latency_ms.p99, baselineResult.execution_latency_ms.p99),
      },
      ...results,
      receiver_requests: receiver.requests(),
    };
  } finally {
    if (worker?.getState() === 'RUNNING') worker.shutdown();
    await running?.catch((error: unknown) =>
      progress(`five_step_e2e: the baseline worker failed: ${String(error)}`),
    );
    await receiver.stop();
  }
}

/**
 * Whether run 0 of each side came to the same result: the API's last step output against the hand-written
 * workflow's return value. (The two no longer schedule the same activity calls: the service runs steps
 * and first connector attempts as local activities, the baseline as activities.)
 */
async function compareResults(
  client: Client,
  api: BenchContext['api'],
  apiId?: string,
  baselineId?: string,
): Promise<{ results_match: boolean | null; api_result?: unknown; baseline_result?: unknown }> {
  if (!apiId || !baselineId) return { results_match: null };
  const [execution, baseline] = await Promise.all([
    api
      .getExecution(apiId)
      .then((body) => JSON.parse(body) as { status: string; steps: { id: string; output: unknown }[] }),
    client.workflow.getHandle<typeof fiveStepBaseline>(baselineId).result(),
  ]);
  const summary = execution.steps.find((step) => step.id === 'summary')?.output as
    { message?: unknown } | undefined;
  const apiResult = { status: execution.status, message: summary?.message };
  const match = JSON.stringify(apiResult) === JSON.stringify(baseline);
  return { results_match: match, ...(match ? {} : { api_result: apiResult, baseline_result: baseline }) };
}
