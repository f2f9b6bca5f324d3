/**
 * Executions completed per second: trigger a batch of demo runs through the API at the benchmark's
 * concurrency, then wait until Temporal visibility shows every one of them closed. The wall time runs
 * from the first trigger to the last CloseTime Temporal recorded (same host, same clock).
 */
import { performance } from 'node:perf_hooks';
import { runClosedLoop, summarizeRuns } from '../load';
import { progress } from '../stack';
import { perSecond, round, summarizeLatencies } from '../stats';
import { countExecutions, quote, sleep, waitUntilNoneRunning } from '../visibility';
import { DEMO_EXECUTIONS_QUERY, DEMO_WORKFLOW_ID, demoInput, type BenchContext } from './common';

const POLL_INTERVAL_MS = 100;
const COMPLETION_TIMEOUT_MS = 10 * 60_000;

export async function benchEndToEnd(ctx: BenchContext) {
  const { settings, stack, api } = ctx;
  const client = stack.runtime.services.temporal.client;
  await waitUntilNoneRunning(client, DEMO_EXECUTIONS_QUERY);
  // Every earlier execution started before this instant, so StartTime marks this scenario's runs.
  const since = new Date();
  const marked = `${DEMO_EXECUTIONS_QUERY} AND StartTime >= ${quote(since.toISOString())}`;

  progress(`end_to_end: triggering ${settings.e2e} executions at concurrency ${settings.concurrency}`);
  const started = performance.now();
  const triggered = summarizeRuns([
    await runClosedLoop({
      count: settings.e2e,
      concurrency: settings.concurrency,
      operation: (index) => api.trigger(DEMO_WORKFLOW_ID, demoInput(index)),
    }),
  ]);

  progress(`end_to_end: ${triggered.ok} triggered in ${triggered.duration_ms} ms; waiting for completion`);
  for (;;) {
    const closed = await countExecutions(client, `${marked} AND ExecutionStatus != 'Running'`);
    if (closed >= triggered.ok) break;
    if (performance.now() - started > COMPLETION_TIMEOUT_MS)
      throw new Error(`Only ${closed} of ${triggered.ok} executions closed in ${COMPLETION_TIMEOUT_MS} ms`);
    await sleep(POLL_INTERVAL_MS);
  }
  const observedMs = performance.now() - started;

  // Exact start and close times from visibility, rather than the polling's resolution.
  let completed = 0;
  let closed = 0;
  let lastClose = since.getTime();
  const runDurations: number[] = [];
  for await (const execution of client.workflow.list({ query: marked, pageSize: 1000 })) {
    if (!execution.closeTime) continue;
    closed += 1;
    lastClose = Math.max(lastClose, execution.closeTime.getTime());
    if (execution.status.name === 'COMPLETED') {
      completed += 1;
      runDurations.push(execution.closeTime.getTime() - execution.startTime.getTime());
    }
  }
  const wallMs = lastClose - since.getTime();
  return {
    executions: settings.e2e,
    concurrency: settings.concurrency,
    triggered: triggered.ok,
    trigger_errors: triggered.errors,
    trigger_error_samples: triggered.error_samples,
    trigger_duration_ms: triggered.duration_ms,
    trigger_per_sec: triggered.per_sec,
    completed,
    not_completed: closed - completed,
    wall_ms: round(wallMs, 1),
    completed_per_sec: perSecond(completed, wallMs),
    /** Until the polling saw the last one closed (an upper bound of wall_ms). */
    observed_wall_ms: round(observedMs, 1),
    /** StartTime to CloseTime of each completed run, as Temporal recorded them. */
    execution_latency_ms: summarizeLatencies(runDurations),
  };
}
