/**
 * One measured phase of the onboard scenario: `count` executions started by `concurrency` callers (a
 * closed loop: each caller starts its next one when the previous start was accepted), each posting one
 * customer to the receiver. Measured from the first start to the last customer's arrival:
 * executions per second, trigger → receiver latency, CPU per execution of every process of the stack
 * (from /proc), their peak memory, and afterwards, from Temporal, the history of every run (events,
 * workflow tasks, workflow-task timeouts) and whether each completed.
 */
import { performance } from 'node:perf_hooks';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { ProcessMeter } from '../proc';
import { progress } from '../stack';
import { perSecond, round, summarizeLatencies, type LatencySummary } from '../stats';
import type { OnboardReceiver } from './receiver';

const EventType = temporal.api.enums.v1.EventType;

/**
 * Starts one execution; answers its workflow id, or with it whether Temporal handed its first task back in
 * the start response (eager start), where the starter knows. Throws RetryLater when the service asks to
 * slow down.
 */
export type Starter = (customer: string, index: number) => Promise<string | StartedRun>;

export interface StartedRun {
  workflowId: string;
  eagerlyStarted: boolean;
}

export class RetryLater extends Error {
  constructor(readonly delayMs: number) {
    super(`asked to retry in ${delayMs} ms`);
  }
}

export interface PhaseOptions {
  label: string;
  count: number;
  concurrency: number;
  start: Starter;
  receiver: OnboardReceiver;
  /** The processes whose CPU and memory the phase costs, by name. */
  pids: Record<string, number>;
  /** For the runs' histories. */
  client: Client;
  /** How long to wait for the last arrival. @default 600000 */
  timeoutMs?: number;
}

export interface PhaseResult {
  concurrency: number;
  executions: number;
  /** Starts the service asked to retry later (backpressure), each retried after its Retry-After. */
  retried_starts: number;
  errors: number;
  error_samples: string[];
  executions_per_sec: number;
  /** How fast starts were accepted (above executions_per_sec: a backlog grew). */
  accepted_per_sec: number;
  /** Starts that were eager: told by the start's answer (the floors), else by the runs' start events. */
  eager_starts: number;
  /** Trigger → the start's answer (the caller's next trigger waits for it). */
  accept_ms: LatencySummary;
  trigger_to_receiver_ms: LatencySummary;
  cpu_ms_per_execution: Record<string, number>;
  /** Each process's CPU ms per execution by thread group (proc.ts threadGroupsMs: `main`, then by name). */
  cpu_ms_per_execution_by_thread: Record<string, Record<string, number>>;
  peak_rss_mb: Record<string, number>;
  history: HistoryStats;
  /** Customers the receiver never saw, and customers it saw more than once. */
  receiver_missing: number;
  receiver_duplicates: number;
  duration_ms: number;
}

export interface HistoryStats {
  runs: number;
  completed: number;
  events_per_run: number;
  /** The history as Temporal's protobuf encodes it, and of it the start event and the markers. */
  bytes_per_run: number;
  started_event_bytes_per_run: number;
  marker_bytes_per_run: number;
  workflow_tasks_per_run: number;
  workflow_task_timeouts: number;
  /** Runs whose start Temporal answered with their first workflow task (the start event's eager flag). */
  eager_starts: number;
}

export async function runPhase(options: PhaseOptions): Promise<PhaseResult> {
  const { count, concurrency, receiver } = options;
  const sentAt = new Map<string, number>();
  const workflowIds: string[] = [];
  const acceptLatencies: number[] = [];
  const errorSamples = new Set<string>();
  let errors = 0;
  let retried = 0;
  let eager: number | undefined;
  let next = 0;
  const meter = new ProcessMeter(options.pids, true);
  const began = performance.now();
  meter.start();

  const caller = async (): Promise<void> => {
    for (let index = next++; index < count; index = next++) {
      const customer = `${options.label}-${index}-${Math.random().toString(36).slice(2, 10)}`;
      sentAt.set(customer, performance.now());
      for (;;) {
        try {
          const started = await options.start(customer, index);
          acceptLatencies.push(performance.now() - sentAt.get(customer)!);
          if (typeof started === 'string') workflowIds.push(started);
          else {
            workflowIds.push(started.workflowId);
            eager = (eager ?? 0) + (started.eagerlyStarted ? 1 : 0);
          }
          break;
        } catch (error) {
          if (error instanceof RetryLater) {
            retried += 1;
            await new Promise((resolve) => setTimeout(resolve, error.delayMs));
            continue;
          }
          errors += 1;
          sentAt.delete(customer);
          if (errorSamples.size < 5) errorSamples.add((error as Error).message.slice(0, 300));
          break;
        }
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, caller));
  const acceptedMs = performance.now() - began;

  const deadline = Date.now() + (options.timeoutMs ?? 600_000);
  const arrived = () => [...sentAt.keys()].filter((customer) => receiver.arrivals.has(customer)).length;
  while (arrived() < sentAt.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const arrivals = [...sentAt.keys()].map((customer) => receiver.arrivals.get(customer)).filter(isNumber);
  const end = arrivals.length > 0 ? Math.max(...arrivals) : performance.now();
  const usage = meter.stop();
  const durationMs = end - began;

  const latencies = [...sentAt].flatMap(([customer, sent]) => {
    const at = receiver.arrivals.get(customer);
    return at === undefined ? [] : [at - sent];
  });
  const total = Object.values(usage.cpu_ms).reduce((sum, ms) => sum + ms, 0);
  const perExecutionOf = (msByName: Record<string, number>) =>
    Object.fromEntries(
      Object.entries(msByName).map(([name, ms]) => [name, round(ms / Math.max(1, arrivals.length), 1)]),
    );
  const history = await historyStats(options.client, workflowIds);
  const byThread = Object.fromEntries(
    Object.entries(usage.cpu_ms_by_thread).map(([name, groups]) => [name, perExecutionOf(groups)]),
  );
  return {
    concurrency,
    executions: arrivals.length,
    retried_starts: retried,
    errors,
    error_samples: [...errorSamples],
    executions_per_sec: perSecond(arrivals.length, durationMs),
    accepted_per_sec: perSecond(workflowIds.length, acceptedMs),
    eager_starts: eager ?? history.eager_starts,
    accept_ms: summarizeLatencies(acceptLatencies),
    trigger_to_receiver_ms: summarizeLatencies(latencies),
    cpu_ms_per_execution: perExecutionOf({ ...usage.cpu_ms, total }),
    cpu_ms_per_execution_by_thread: byThread,
    peak_rss_mb: usage.peak_rss_mb,
    history,
    receiver_missing: sentAt.size - arrivals.length,
    receiver_duplicates: [...sentAt.keys()].filter((customer) => (receiver.hits.get(customer) ?? 0) > 1)
      .length,
    duration_ms: round(durationMs, 1),
  };
}

/** Waits for every run to close, then counts its history's events, workflow tasks and task timeouts. */
export async function historyStats(client: Client, workflowIds: string[]): Promise<HistoryStats> {
  let completed = 0;
  let events = 0;
  let bytes = 0;
  let startedBytes = 0;
  let markerBytes = 0;
  let tasks = 0;
  let timeouts = 0;
  let eager = 0;
  let nextIndex = 0;
  const reader = async (): Promise<void> => {
    for (let index = nextIndex++; index < workflowIds.length; index = nextIndex++) {
      const handle = client.workflow.getHandle(workflowIds[index]!);
      // Waits for the close; whether it completed is read from the history, since this client may not
      // decode the result (the hook_encrypted variant's results are encrypted).
      await handle.result().catch(() => undefined);
      const history = await handle.fetchHistory();
      bytes += temporal.api.history.v1.History.encode(history).finish().length;
      for (const event of history.events ?? []) {
        events += 1;
        if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED) {
          startedBytes += temporal.api.history.v1.HistoryEvent.encode(event).finish().length;
          if (event.workflowExecutionStartedEventAttributes?.eagerExecutionAccepted) eager += 1;
        }
        if (event.eventType === EventType.EVENT_TYPE_MARKER_RECORDED)
          markerBytes += temporal.api.history.v1.HistoryEvent.encode(event).finish().length;
        if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED) completed += 1;
        if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED) tasks += 1;
        if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT) timeouts += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: 16 }, reader));
  const runs = workflowIds.length;
  return {
    runs,
    completed,
    events_per_run: round(events / Math.max(1, runs), 2),
    bytes_per_run: Math.round(bytes / Math.max(1, runs)),
    started_event_bytes_per_run: Math.round(startedBytes / Math.max(1, runs)),
    marker_bytes_per_run: Math.round(markerBytes / Math.max(1, runs)),
    workflow_tasks_per_run: round(tasks / Math.max(1, runs), 2),
    workflow_task_timeouts: timeouts,
    eager_starts: eager,
  };
}

function isNumber(value: number | undefined): value is number {
  return value !== undefined;
}

/** A variant's sizes: warm-up runs, then `count` runs at each concurrency. */
export interface PhaseSizes {
  count: number;
  warmup: number;
  concurrencies: number[];
}

/** A variant's phases: an unmeasured warm-up at 10 at once, then one phase per concurrency, keyed `c<N>`. */
export async function runPhases(
  label: string,
  sizes: PhaseSizes,
  start: Starter,
  receiver: OnboardReceiver,
  pids: Record<string, number>,
  client: Client,
): Promise<Record<string, PhaseResult>> {
  if (sizes.warmup > 0) {
    await runPhase({
      label: `${label}-warm`,
      count: sizes.warmup,
      concurrency: 10,
      start,
      receiver,
      pids,
      client,
    });
  }
  const phases: Record<string, PhaseResult> = {};
  for (const concurrency of sizes.concurrencies) {
    const phase = await runPhase({
      label: `${label}-c${concurrency}`,
      count: sizes.count,
      concurrency,
      start,
      receiver,
      pids,
      client,
    });
    progress(
      `onboard: ${label} c=${concurrency}: ${phase.executions_per_sec} executions/s, p50 ${phase.trigger_to_receiver_ms.p50} ms, ` +
        `${phase.cpu_ms_per_execution['total']} ms CPU each, ${phase.history.workflow_tasks_per_run} workflow tasks/run, ` +
        `${phase.eager_starts} eager starts`,
    );
    phases[`c${concurrency}`] = phase;
  }
  return phases;
}
