/**
 * Prometheus metrics (docs/operations.md#metrics): one registry per process, shared by the API and the
 * worker when they run in one process. Modules record into `metrics` directly; `/metrics`
 * (platform/observability/metrics-server.ts) renders it, followed by the Temporal SDK's own metrics.
 *
 * Labels are bounded: routes are patterns, never paths; workflow labels are the workflow ids users
 * saved, at most MAX_WORKFLOW_LABELS of them per process (later ones count as `_other`), since every
 * workspace can create workflows and each id would be series of its own in Prometheus.
 */
import client from 'prom-client';

/** Seconds: from a fast rules step (sub-millisecond) to a slow receiver (the 30 s delivery timeout). */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * Seconds a run waits at a flow control gate (docs/flow-control.md): from none (a free place) to the hours
 * a long queue or a throttle of `24h` can hold a run.
 */
const QUEUE_WAIT_BUCKETS = [0.01, 0.05, 0.25, 1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 24 * 3600];

/** A workflow's runs held by flow control (platform/store/queue-totals.ts); ids null: all the others. */
export interface QueueTotals {
  workspace_id: string | null;
  workflow_id: string | null;
  queued: number;
  open: number;
}

export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

class ServiceMetrics {
  readonly registry = new client.Registry();
  private readonly pools = new Set<() => PoolStats>();
  /** Sources of the queue gauges, the latest last (one per API runtime; tests start several). */
  private readonly queueSources: ((top: number) => Promise<QueueTotals[]>)[] = [];
  /** The read of the queue totals in flight: both gauges of one scrape share it, the next scrape reads anew. */
  private queueRead: Promise<QueueTotals[]> | undefined;

  readonly httpRequests = new client.Histogram({
    name: 'switchyard_http_request_duration_seconds',
    help: 'API requests by method, route pattern and status: time to the response (its _count counts them).',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });

  readonly triggers = new client.Counter({
    name: 'switchyard_triggers_total',
    help:
      'Trigger requests (trigger: api or hook) accepted or refused, by reason (rate_limit, backpressure, ' +
      'validation, not_found, unauthorized, unavailable, error).',
    labelNames: ['trigger', 'outcome', 'reason'] as const,
    registers: [this.registry],
  });

  readonly executionStarts = new client.Counter({
    name: 'switchyard_execution_starts_total',
    help:
      'Executions this process started in Temporal, by eager: true when the worker in this process took ' +
      "the run's first workflow task in the start's answer (eager start), false when it went through the " +
      'task queue.',
    labelNames: ['eager'] as const,
    registers: [this.registry],
  });

  readonly dbQueryErrors = new client.Counter({
    name: 'switchyard_db_query_errors_total',
    help: 'Database queries that failed: kind unavailable (no answer from the database) or query (the statement).',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  readonly executions = new client.Counter({
    name: 'switchyard_executions_total',
    help: 'Executions that ended in this worker, by final status (success, failed, canceled), workspace and workflow.',
    labelNames: ['status', 'workspace', 'workflow'] as const,
    registers: [this.registry],
  });

  readonly stepsDeferred = new client.Counter({
    name: 'switchyard_steps_deferred_total',
    help:
      'Connector and ai steps run as activities rather than in the step local activity, because their ' +
      'workspace held its share of the worker (WORKER_LOCAL_CALL_SLOTS_PER_WORKSPACE).',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  readonly stepDuration = new client.Histogram({
    name: 'switchyard_step_duration_seconds',
    help: 'Step attempts by kind and status (success, failed, skipped, waiting): how long each took.',
    labelNames: ['kind', 'status'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });

  readonly activityFailures = new client.Counter({
    name: 'switchyard_activity_failures_total',
    help: 'Failed activity attempts (and failed steps in run_steps) by activity type and error code.',
    labelNames: ['activity', 'code'] as const,
    registers: [this.registry],
  });

  readonly webhookDeliveries = new client.Histogram({
    name: 'switchyard_webhook_delivery_duration_seconds',
    help:
      'Webhook delivery attempts by outcome (succeeded, retry, failed, endpoint_gone, endpoint_disabled, ' +
      'endpoint_deleted): time of the attempt, request and delivery-log write (its _count counts them).',
    labelNames: ['outcome'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });

  readonly admissionWait = new client.Histogram({
    name: 'switchyard_admission_wait_seconds',
    help:
      'Runs admitted by a flow control gate (concurrency: a place; throttle: a start), observed once per ' +
      'admission by the process that granted it: time from the run joining the queue to its admission ' +
      '(0 for a run that found room).',
    labelNames: ['gate'] as const,
    buckets: QUEUE_WAIT_BUCKETS,
    registers: [this.registry],
  });

  constructor() {
    const pools = this.pools;
    const queueTotals = () => this.queueTotals();
    const queueGauge = (name: string, help: string, count: (row: QueueTotals) => number) =>
      new client.Gauge({
        name,
        help,
        labelNames: ['workspace', 'workflow'] as const,
        registers: [this.registry],
        async collect() {
          const rows = await queueTotals();
          this.reset();
          for (const row of rows)
            this.set(
              {
                workspace: row.workspace_id ?? OTHER_WORKFLOW_LABEL,
                workflow: row.workflow_id ?? OTHER_WORKFLOW_LABEL,
              },
              count(row),
            );
        },
      });
    queueGauge(
      'switchyard_flow_control_queued_executions',
      'Executions queued by flow control (at a gate or waiting for a debounce), per workflow: the busiest MAX_WORKFLOW_LABELS, the ' +
        'rest as workspace and workflow _other. Read from the database: every API process reports the same.',
      (row) => row.queued,
    );
    queueGauge(
      'switchyard_flow_control_open_executions',
      'Executions holding a place of their concurrency, per workflow (labels as ' +
        'switchyard_flow_control_queued_executions). Read from the database.',
      (row) => row.open,
    );
    new client.Gauge({
      name: 'switchyard_db_pool_connections',
      help: 'PostgreSQL pool connections by state (total, idle, waiting: requests waiting for one). Absent on PGlite.',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        if (pools.size === 0) return;
        const sum = { total: 0, idle: 0, waiting: 0 };
        for (const stats of pools) {
          const s = stats();
          sum.total += s.total;
          sum.idle += s.idle;
          sum.waiting += s.waiting;
        }
        for (const [state, value] of Object.entries(sum)) this.set({ state }, value);
      },
    });
    client.collectDefaultMetrics({ register: this.registry });
  }

  /** Workflows labelled so far, as `workspace/workflow`. */
  private readonly workflowLabels = new Set<string>();

  /** Counts an execution's end; a workflow first seen once MAX_WORKFLOW_LABELS are taken counts as `_other`. */
  executionClosed(status: string, workspace: string, workflow: string): void {
    const key = `${workspace}/${workflow}`;
    if (!this.workflowLabels.has(key)) {
      if (this.workflowLabels.size < MAX_WORKFLOW_LABELS) this.workflowLabels.add(key);
      else workflow = OTHER_WORKFLOW_LABEL;
    }
    this.executions.inc({ status, workspace, workflow });
  }

  /** Observes the waits of runs a gate admitted (seconds each), once their grant committed. */
  admitted(gate: 'concurrency' | 'throttle', waits: readonly number[]): void {
    for (const wait of waits) this.admissionWait.observe({ gate }, Math.max(0, wait));
  }

  /**
   * Where the queue gauges read from (the API process: one grouped statement per scrape); the returned
   * function stops that. Without a source the gauges have no series.
   */
  trackQueues(read: (top: number) => Promise<QueueTotals[]>): () => void {
    this.queueSources.push(read);
    this.queueRead = undefined;
    return () => {
      const index = this.queueSources.indexOf(read);
      if (index >= 0) this.queueSources.splice(index, 1);
      this.queueRead = undefined;
    };
  }

  /** The queue totals for this scrape: one read shared by both gauges; none when the database fails. */
  private queueTotals(): Promise<QueueTotals[]> {
    const source = this.queueSources.at(-1);
    if (!source) return Promise.resolve([]);
    if (!this.queueRead) {
      const read = source(MAX_WORKFLOW_LABELS)
        .catch(() => [])
        .finally(() => {
          if (this.queueRead === read) this.queueRead = undefined;
        });
      this.queueRead = read;
    }
    return this.queueRead;
  }

  /** A PostgreSQL pool whose connections the gauge reports; the returned function stops that. */
  trackPool(stats: () => PoolStats): () => void {
    this.pools.add(stats);
    return () => this.pools.delete(stats);
  }
}

/** Distinct (workspace, workflow) pairs a process labels executions with; the rest are `other`. */
export const MAX_WORKFLOW_LABELS = 1000;
/** The workflow label of executions past MAX_WORKFLOW_LABELS (a workflow id never starts with `_`). */
export const OTHER_WORKFLOW_LABEL = '_other';

/** This process's metrics. */
export const metrics = new ServiceMetrics();

export const METRICS_CONTENT_TYPE = client.register.contentType;

const REFUSAL = Symbol('switchyard.refusal');

/** Marks an error that refuses a trigger for a reason its status does not tell (backpressure's 429). */
export function refusalFor<E extends Error>(error: E, reason: string): E {
  return Object.assign(error, { [REFUSAL]: reason });
}

/** Why a trigger was refused: the mark, or what its status says. */
export function refusalReason(error: unknown, status: number): string {
  const marked = (error as { [REFUSAL]?: unknown } | null)?.[REFUSAL];
  if (typeof marked === 'string') return marked;
  if (status === 429) return 'rate_limit';
  if (status === 400 || status === 413 || status === 415 || status === 422) return 'validation';
  if (status === 401 || status === 403) return 'unauthorized';
  if (status === 404) return 'not_found';
  if (status === 503) return 'unavailable';
  return 'error';
}
