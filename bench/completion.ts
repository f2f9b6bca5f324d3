/**
 * Executions completed per second: start a batch of executions at a fixed concurrency, then wait until
 * Temporal visibility shows every one of them closed. The wall time runs from the first start to the
 * last CloseTime Temporal recorded (same host, same clock); each run's latency is its StartTime to
 * CloseTime. Several batches (rounds) of one contender merge into one result.
 */
import type { Client } from '@temporalio/client';
import { performance } from 'node:perf_hooks';
import { runClosedLoop, summarizeRuns, type LoadRun } from './load';
import { progress } from './stack';
import { perSecond, round, summarizeLatencies } from './stats';
import { countExecutions, quote, sleep } from './visibility';

const POLL_INTERVAL_MS = 100;
const COMPLETION_TIMEOUT_MS = 10 * 60_000;

export interface CompletionOptions {
  client: Client;
  /** For progress lines. */
  label: string;
  /** Visibility query of the executions `start` creates; runs started before this batch may match. */
  query: string;
  count: number;
  concurrency: number;
  /** Starts execution `index` (from `firstIndex`, default 0); a rejection counts as a start error. */
  start: (index: number) => Promise<unknown>;
  firstIndex?: number;
}

/** The raw outcome of one batch. */
export interface CompletionRun {
  started: LoadRun;
  completed: number;
  /** Closed in any way (completed, failed, timed out, ...). */
  closed: number;
  wallMs: number;
  /** Until the polling saw the last one closed (an upper bound of wallMs). */
  observedMs: number;
  /** StartTime to CloseTime of each completed run. */
  runDurations: number[];
}

export async function runToCompletion({
  client,
  label,
  query,
  count,
  concurrency,
  start,
  firstIndex = 0,
}: CompletionOptions): Promise<CompletionRun> {
  // Every earlier execution started before this instant, so StartTime marks this batch's runs.
  const since = new Date();
  const marked = `(${query}) AND StartTime >= ${quote(since.toISOString())}`;

  progress(`${label}: starting ${count} executions at concurrency ${concurrency}`);
  const began = performance.now();
  const started = await runClosedLoop({ count, concurrency, operation: start, firstIndex });

  progress(
    `${label}: ${started.latencies.length} started in ${Math.round(started.durationMs)} ms; waiting for completion`,
  );
  for (;;) {
    const closed = await countExecutions(client, `${marked} AND ExecutionStatus != 'Running'`);
    if (closed >= started.latencies.length) break;
    if (performance.now() - began > COMPLETION_TIMEOUT_MS)
      throw new Error(
        `${label}: only ${closed} of ${started.latencies.length} executions closed in ${COMPLETION_TIMEOUT_MS} ms`,
      );
    await sleep(POLL_INTERVAL_MS);
  }
  const observedMs = performance.now() - began;

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
  return { started, completed, closed, wallMs: lastClose - since.getTime(), observedMs, runDurations };
}

/** One result over the batches of a contender: completions over the summed wall times. */
export function summarizeCompletions(runs: readonly CompletionRun[]) {
  const started = summarizeRuns(runs.map((run) => run.started));
  const sum = (pick: (run: CompletionRun) => number) => runs.reduce((total, run) => total + pick(run), 0);
  const completed = sum((run) => run.completed);
  const wallMs = sum((run) => run.wallMs);
  return {
    triggered: started.ok,
    trigger_errors: started.errors,
    trigger_error_samples: started.error_samples,
    trigger_duration_ms: started.duration_ms,
    trigger_per_sec: started.per_sec,
    completed,
    not_completed: sum((run) => run.closed) - completed,
    wall_ms: round(wallMs, 1),
    completed_per_sec: perSecond(completed, wallMs),
    /** Until the polling saw the last one closed (an upper bound of wall_ms). */
    observed_wall_ms: round(
      sum((run) => run.observedMs),
      1,
    ),
    /** StartTime to CloseTime of each completed run, as Temporal recorded them. */
    execution_latency_ms: summarizeLatencies(runs.flatMap((run) => run.runDurations)),
  };
}

export type CompletionSummary = ReturnType<typeof summarizeCompletions>;
