/**
 * `large_map`: a map over BENCH_MAP_ITEMS (10,000) items whose body is two rules steps, with concurrency
 * BENCH_MAP_CONCURRENCY (20). Measures trigger → closed, the largest history among the execution and its
 * map chunks (events and bytes: Temporal's limits are 51,200 events and 50 MB; the goal is 10,000 and
 * 10 MB), and reading the finished execution (GET /v1/executions/{id}, BENCH_MAP_READS reads one at a time).
 */
import { performance } from 'node:perf_hooks';
import { temporal } from '@temporalio/proto';
import type { Definition } from '../../core/definitions/schema';
import { progress } from '../stack';
import { summarizeLatencies } from '../stats';
import type { BenchContext } from './common';

const EventType = temporal.api.enums.v1.EventType;

function largeMap(items: number, concurrency: number): Definition {
  return {
    id: 'bench-large-map',
    name: 'Benchmark: a map over many items',
    steps: [
      {
        id: 'each',
        kind: 'map',
        items: `[1..${items}]`,
        concurrency,
        steps: [
          { id: 'square', kind: 'rules', rules: [{ when: 'true', output: '{{ item * item }}' }] },
          {
            id: 'plus',
            kind: 'rules',
            rules: [{ when: 'true', output: '{{ steps.square.output + index }}' }],
          },
        ],
      },
    ],
  };
}

export async function benchLargeMap(ctx: BenchContext) {
  const { api, stack } = ctx;
  const client = stack.runtime.services.temporal.client;
  const items = Number(process.env['BENCH_MAP_ITEMS'] ?? 10_000);
  const concurrency = Number(process.env['BENCH_MAP_CONCURRENCY'] ?? 20);
  const reads = Number(process.env['BENCH_MAP_READS'] ?? 100);
  const definition = largeMap(items, concurrency);
  await api.createWorkflow(definition);

  progress(`large_map: one map over ${items} items, ${concurrency} at once`);
  const started = performance.now();
  const id = await api.trigger(definition.id, {});
  const result = (await client.workflow.getHandle(id).result()) as { output?: unknown[] };
  const durationMs = performance.now() - started;
  const outputs = Array.isArray(result.output) ? result.output.length : 0;

  // The execution's own history and every chunk's: their sizes as Temporal counts them.
  const parent = await client.workflow.getHandle(id).fetchHistory();
  const chunkIds = (parent.events ?? [])
    .filter((event) => event.eventType === EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED)
    .map((event) => event.childWorkflowExecutionStartedEventAttributes!.workflowExecution!.workflowId!);
  const histories = [];
  for (const workflowId of [id, ...chunkIds]) {
    const description = await client.workflow.getHandle(workflowId).describe();
    histories.push({
      events: description.historyLength,
      bytes: Number(description.raw.workflowExecutionInfo?.historySizeBytes ?? 0),
    });
  }

  progress(`large_map: ${reads} reads of the finished execution`);
  for (let i = 0; i < 5; i++) await api.getExecution(id);
  const latencies: number[] = [];
  for (let i = 0; i < reads; i++) {
    const t = performance.now();
    await api.getExecution(id);
    latencies.push(performance.now() - t);
  }
  return {
    items,
    concurrency,
    outputs,
    duration_ms: Math.round(durationMs),
    chunks: chunkIds.length,
    execution_history_events: histories[0]!.events,
    execution_history_bytes: histories[0]!.bytes,
    largest_history_events: Math.max(...histories.map((h) => h.events)),
    largest_history_bytes: Math.max(...histories.map((h) => h.bytes)),
    read_latency_ms: summarizeLatencies(latencies),
  };
}
