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
import { perSecond, round, summarizeLatencies, type LatencySummary } from '../stats';
import type { OnboardReceiver } from './receiver';

const EventType = temporal.api.enums.v1.EventType;

/** Starts one execution; answers its workflow id. Throws RetryLater when the service asks to slow down. */
export type Starter = (customer: string, index: number) => Promise<string>;

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
  trigger_to_receiver_ms: LatencySummary;
  cpu_ms_per_execution: Record<string, number>;
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
  workflow_tasks_per_run: number;
  workflow_task_timeouts: number;
}

export async function runPhase(options: PhaseOptions): Promise<PhaseResult> {
  const { count, concurrency, receiver } = options;
  const sentAt = new Map<string, number>();
  const workflowIds: string[] = [];
  const errorSamples = new Set<string>();
  let errors = 0;
  let retried = 0;
  let next = 0;
  const meter = new ProcessMeter(options.pids);
  const began = performance.now();
  meter.start();

  const caller = async (): Promise<void> => {
    for (let index = next++; index < count; index = next++) {
      const customer = `${options.label}-${index}-${Math.random().toString(36).slice(2, 10)}`;
      sentAt.set(customer, performance.now());
      for (;;) {
        try {
          workflowIds.push(await options.start(customer, index));
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
  const perExecution = Object.fromEntries(
    Object.entries({ ...usage.cpu_ms, total }).map(([name, ms]) => [
      name,
      round(ms / Math.max(1, arrivals.length), 1),
    ]),
  );
  return {
    concurrency,
    executions: arrivals.length,
    retried_starts: retried,
    errors,
    error_samples: [...errorSamples],
    executions_per_sec: perSecond(arrivals.length, durationMs),
    accepted_per_sec: perSecond(workflowIds.length, acceptedMs),
    trigger_to_receiver_ms: summarizeLatencies(latencies),
    cpu_ms_per_execution: perExecution,
    peak_rss_mb: usage.peak_rss_mb,
    history: await historyStats(options.client, workflowIds),
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
  let tasks = 0;
  let timeouts = 0;
  let nextIndex = 0;
  const reader = async (): Promise<void> => {
    for (let index = nextIndex++; index < workflowIds.length; index = nextIndex++) {
      const handle = client.workflow.getHandle(workflowIds[index]!);
      // Waits for the close; whether it completed is read from the history, since this client may not
      // decode the result (the hook_encrypted variant's results are encrypted).
      await handle.result().catch(() => undefined);
      const history = await handle.fetchHistory();
      for (const event of history.events ?? []) {
        events += 1;
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
    workflow_tasks_per_run: round(tasks / Math.max(1, runs), 2),
    workflow_task_timeouts: timeouts,
  };
}

function isNumber(value: number | undefined): value is number {
  return value !== undefined;
}
