/**
 * Reading one finished execution: GET /v1/executions/{id} through the listening API (auth, describe and
 * the whole history from Temporal in parallel, mapping to the view, JSON) beside the raw Temporal calls
 * over the service's own connection: `fetchHistory()` alone, and describe + fetchHistory in parallel
 * (what the API asks Temporal for). The execution has 20 steps, rules and http connector steps in turn
 * (the connectors call a local receiver), so its history is that of a real multi-step run.
 *
 * Low concurrency (BENCH_READ_CONCURRENCY, sequential by default): this measures the cost of one read,
 * not the server's saturation. The three contenders run in rotating order over BENCH_ROUNDS rounds.
 */
import { temporal } from '@temporalio/proto';
import type { Definition } from '../../core/definitions/schema';
import { runClosedLoop, summarizeRuns, type LoadResult, type LoadRun } from '../load';
import { startReceiver } from '../receiver';
import { progress } from '../stack';
import { ratio } from '../stats';
import { demoInput, split, type BenchContext } from './common';

const READ_WORKFLOW_ID = 'bench-read-20';
const STEP_COUNT = 20;

/** Odd steps are rules reading the previous connector's answer, even steps POST to the receiver. */
export function twentyStepDefinition(receiverUrl: string): Definition {
  const id = (n: number) => `s${String(n).padStart(2, '0')}`;
  const steps: Definition['steps'] = [];
  for (let n = 1; n <= STEP_COUNT; n++) {
    const previous = id(n - 1);
    if (n % 2 === 1) {
      steps.push({
        id: id(n),
        kind: 'rules',
        rules: [
          n === 1
            ? { when: "input.plan = 'enterprise'", output: { step: n, tier: 'high' } }
            : {
                when: `steps.${previous}.output.status = 200`,
                output: { step: n, ok: true, account: `{{ steps.${previous}.output.body.id }}` },
              },
        ],
        default: { step: n, ok: false },
      });
    } else {
      steps.push({
        id: id(n),
        kind: 'connector',
        connector: 'http',
        request: {
          method: 'POST',
          url: `${receiverUrl}/steps/${n}`,
          headers: { 'x-bench-step': String(n) },
          body: { customer: '{{ input.customer }}', step: n, previous: `{{ steps.${previous}.output }}` },
        },
      });
    }
  }
  return {
    id: READ_WORKFLOW_ID,
    name: 'Benchmark: 20 steps to read',
    input_schema: {
      type: 'object',
      required: ['customer', 'plan'],
      properties: { customer: { type: 'string' }, plan: { type: 'string' } },
    },
    steps,
  };
}

interface Contender {
  label: string;
  operation: () => Promise<unknown>;
  runs: LoadRun[];
}

/** API over raw: throughput below 1 and latencies above 1 are the API's cost. */
function compare(api: LoadResult, raw: LoadResult) {
  return {
    throughput: ratio(api.per_sec, raw.per_sec),
    mean: ratio(api.latency_ms.mean, raw.latency_ms.mean),
    p50: ratio(api.latency_ms.p50, raw.latency_ms.p50),
    p99: ratio(api.latency_ms.p99, raw.latency_ms.p99),
  };
}

export async function benchReadExecution(ctx: BenchContext) {
  const { settings, stack, api } = ctx;
  const { client } = stack.runtime.services.temporal;
  const receiver = await startReceiver();
  try {
    await api.createWorkflow(twentyStepDefinition(receiver.url));
    const executionId = await api.trigger(READ_WORKFLOW_ID, demoInput(1));
    progress(`read_execution: running ${executionId} (${STEP_COUNT} steps)`);
    await client.workflow.getHandle(executionId).result();

    const body = JSON.parse(await api.getExecution(executionId)) as { status: string; steps: unknown[] };
    const history = await client.workflow.getHandle(executionId).fetchHistory();
    const contenders: Contender[] = [
      { label: 'api_get', operation: () => api.getExecution(executionId), runs: [] },
      {
        label: 'raw_fetch_history',
        operation: () => client.workflow.getHandle(executionId).fetchHistory(),
        runs: [],
      },
      {
        label: 'raw_describe_and_history',
        operation: () => {
          const handle = client.workflow.getHandle(executionId);
          return Promise.all([handle.describe(), handle.fetchHistory()]);
        },
        runs: [],
      },
    ];

    const concurrency = settings.readConcurrency;
    if (settings.warmup > 0) {
      progress(`read_execution: warm-up (${settings.warmup} of each)`);
      for (const contender of contenders)
        await runClosedLoop({ count: settings.warmup, concurrency, operation: contender.operation });
    }
    const sizes = split(settings.reads, settings.rounds);
    for (const [roundIndex, size] of sizes.entries()) {
      // Rotate the order, so that no contender always runs first or last.
      const order = contenders.map((_, i) => contenders[(i + roundIndex) % contenders.length]!);
      for (const contender of order) {
        const run = await runClosedLoop({ count: size, concurrency, operation: contender.operation });
        contender.runs.push(run);
        progress(
          `read_execution: ${contender.label}, round ${roundIndex + 1}/${sizes.length}, ${size} reads in ${Math.round(run.durationMs)} ms`,
        );
      }
    }

    const [apiGet, rawHistory, rawBoth] = contenders.map((contender) => summarizeRuns(contender.runs)) as [
      LoadResult,
      LoadResult,
      LoadResult,
    ];
    return {
      steps: STEP_COUNT,
      execution_status: body.status,
      /** The trigger step and the 20 definition steps. */
      response_steps: body.steps.length,
      history_events: history.events?.length ?? 0,
      history_bytes: temporal.api.history.v1.History.encode(history).finish().length,
      response_bytes: Buffer.byteLength(await api.getExecution(executionId)),
      reads: settings.reads,
      concurrency,
      rounds: sizes.length,
      warmup: settings.warmup,
      api_get: apiGet,
      raw_fetch_history: rawHistory,
      raw_describe_and_history: rawBoth,
      api_vs_describe_and_history: compare(apiGet, rawBoth),
      api_vs_fetch_history: compare(apiGet, rawHistory),
    };
  } finally {
    await receiver.stop();
  }
}
