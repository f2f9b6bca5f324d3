/**
 * The Markdown summary of a benchmark report (bench/results/latest.json): one table row per measurement
 * with Switchyard's figure, the raw Temporal baseline beside it where the scenario has one, and their
 * ratio, then the machine and versions it ran on. `npm run bench` writes it to bench/results/latest.md
 * and into docs/benchmarks.md between BENCH_START and BENCH_END; `npm run bench:report` does the same
 * from the existing latest.json. The tables are laid out as Prettier lays them out, so the page stays
 * formatted.
 */
import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../platform/paths';
import { ratio } from './stats';

export const BENCH_START = '<!-- bench:start -->';
export const BENCH_END = '<!-- bench:end -->';
export const RESULTS_DIR = path.join(projectRoot, 'bench', 'results');
/** The docs page that holds the generated block. */
export const BENCHMARKS_PAGE = path.join(projectRoot, 'docs', 'benchmarks.md');

/** JSON turns NaN (a percentile of no samples) into null; sections of older reports may be absent. */
type Figure = number | null | undefined;

interface Percentiles {
  p50: Figure;
  p99: Figure;
}

interface LoadFigures {
  count?: number;
  concurrency?: number;
  errors?: number;
  per_sec: Figure;
  latency_ms: Percentiles;
}

interface CompletionFigures {
  trigger_errors?: number;
  not_completed?: number;
  completed_per_sec: Figure;
  execution_latency_ms: Percentiles;
}

interface OnboardPhase {
  concurrency?: number;
  executions?: number;
  errors?: number;
  retried_starts?: number;
  /** Where the starter knows (the tight floor's). */
  eager_starts?: number;
  executions_per_sec: Figure;
  /** Absent from older reports. */
  accept_ms?: Percentiles;
  trigger_to_receiver_ms: Percentiles;
  cpu_ms_per_execution: Record<string, Figure>;
  /** Each process's CPU by thread group (`main`, the others by name); absent from older reports. */
  cpu_ms_per_execution_by_thread?: Record<string, Record<string, Figure>>;
  peak_rss_mb: Record<string, Figure>;
  history: {
    runs?: number;
    completed?: number;
    events_per_run: Figure;
    bytes_per_run?: Figure;
    workflow_tasks_per_run: Figure;
    workflow_task_timeouts?: number;
  };
  receiver_missing?: number;
  receiver_duplicates?: number;
}

interface OnboardVariant {
  phases: Record<string, OnboardPhase>;
}

/** One side of map-10k: Switchyard's execution or the floor's hand-written workflow. */
interface MapSide {
  duration_ms: Figure;
  items_per_sec: Figure;
  cpu_ms_per_item: Record<string, Figure>;
  outputs_correct?: boolean;
  history: { chunks?: number; largest_history_events: Figure; largest_history_bytes: Figure };
  read_execution_ms: Percentiles;
  read_runs_page_ms: Percentiles;
}

/** One contender of parallel-5. */
interface ParallelSide {
  latency_ms: Percentiles & { p95: Figure };
  errors?: number;
}

/** What the generator reads of the report run.ts writes (the type checks that it still matches). */
/** The flow-control scenario's figures the table shows (bench/scenarios/flow-control.ts). */
interface FlowControlFigures {
  throughput: {
    runs?: number;
    concurrency?: number;
    keys?: number;
    limit?: number;
    plain: CompletionFigures & { cpu_ms_per_run: Record<string, Figure> };
    keyed: CompletionFigures & { cpu_ms_per_run: Record<string, Figure>; max_queued?: number };
  };
  admission: {
    runs?: number;
    keys?: number;
    limit?: number;
    hold_ms?: number;
    trigger_errors?: number;
    handoff_ms: Percentiles;
    queue_wait_ms: Percentiles;
  };
  throttle: {
    runs?: number;
    limit_per_sec: number;
    trigger_errors?: number;
    starts: { achieved_per_sec: Figure; most_in_any_second?: number };
  };
  fairness: {
    backlog?: number;
    limit?: number;
    trigger_errors?: number;
    enqueue_ms: Figure;
    drain_per_sec: Figure;
    b_alone_ms: Percentiles;
    b_beside_backlog_ms: Percentiles;
  };
}

export interface BenchReport {
  /** By history of the replay corpus (bench/scenarios/workflow-replay.ts). */
  workflow_replay?: Record<
    string,
    { replays?: number; cpu_ms_per_replay: Figure; workflow_promises_per_replay: Figure }
  >;
  onboard?: {
    settings?: { count?: number };
    hook_pglite?: OnboardVariant;
    hook_traced?: OnboardVariant;
    hook_encrypted?: OnboardVariant;
    trigger_pglite?: OnboardVariant;
    hook_postgres?: OnboardVariant;
    floor_tight?: OnboardVariant;
    floor_contract?: OnboardVariant;
    floor?: OnboardVariant;
    before?: OnboardVariant;
    before_commit?: string | null;
  };
  api_trigger?: LoadFigures;
  raw_start?: LoadFigures;
  end_to_end?: CompletionFigures & { executions?: number; concurrency?: number };
  read_execution?: {
    steps?: number;
    api_get: LoadFigures;
    raw_describe_and_history: LoadFigures;
  };
  five_step_e2e?: {
    executions?: number;
    concurrency?: number;
    api: CompletionFigures;
    baseline: CompletionFigures;
    /** null when no run of one side could be compared. */
    results_match?: boolean | null;
  };
  webhooks?: {
    latency?: {
      executions?: number;
      concurrency?: number;
      errors?: number;
      not_completed?: number;
      missing?: number;
      duplicates?: number;
      delivery_latency_ms: Percentiles;
      delivery_workflows_drained?: boolean;
    };
    fanout?: {
      executions?: number;
      endpoints?: number;
      concurrency?: number;
      trigger_errors?: number;
      not_completed?: number;
      missing?: number;
      duplicates?: number;
      deliveries_per_sec: Figure;
      delivery_workflows_drained?: boolean;
    };
    signatures?: {
      requests?: number;
      signatures_verified?: number;
      all_signatures_verified?: boolean;
      unexpected_events?: number;
    };
  };
  large_map?: {
    items: number;
    concurrency: number;
    outputs: number;
    duration_ms: number;
    chunks: number;
    execution_history_events: number;
    execution_history_bytes: number;
    largest_history_events: number;
    largest_history_bytes: number;
    read_latency_ms: Percentiles;
  };
  'map-10k'?: {
    items?: number;
    concurrency?: number;
    switchyard: MapSide;
    floor: MapSide;
    goal?: {
      cpu_ms_per_item: Figure;
      onboard_cpu_ms_per_execution: Figure;
      onboard?: {
        executions?: number;
        concurrency?: number;
        errors?: number;
        receiver_missing?: number;
        not_completed?: number;
      };
    };
  };
  'parallel-5'?: {
    calls?: number;
    delay_ms?: number;
    runs?: number;
    switchyard: { parallel: ParallelSide; one_call: ParallelSide };
    floor: { parallel: ParallelSide; one_call: ParallelSide };
  };
  isolation?: {
    runs?: number;
    loops?: number;
    quiet_latency_ms: Percentiles;
    beside_loops_latency_ms: Percentiles;
  };
  fairness?: {
    flood?: number;
    slow_ms?: number;
    flood_trigger_errors?: number;
    idle_latency_ms: Percentiles & { p90?: Figure };
    under_flood_latency_ms: Percentiles & { p90?: Figure };
  };
  'flow-control'?: FlowControlFigures;
  environment?: {
    date?: string;
    switchyard_version?: string;
    git_commit?: string | null;
    node?: string;
    platform?: string;
    cpu_model?: string | null;
    cpu_count?: number;
    total_memory_mb?: number;
    load_average_before?: number[];
    temporal_cli?: string | null;
    database?: string | null;
    eager_start?: boolean | null;
  };
  duration_s?: number;
}

/** One table row; `scenario` and `sample` are empty on the further rows of a scenario. */
export interface ReportRow {
  scenario: string;
  metric: string;
  switchyard: string;
  baseline: string;
  ratio: string;
  sample: string;
}

const NONE = '–';
const MISSING = 'n/a';

function isNumber(value: Figure): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

/** Three significant digits at most, whole numbers from 100 on: 4130, 307, 97.3, 5.37. */
export function formatFigure(value: Figure): string {
  if (!isNumber(value)) return MISSING;
  const magnitude = Math.abs(value);
  if (magnitude >= 100) return String(Math.round(value));
  return value.toFixed(magnitude >= 10 ? 1 : 2);
}

/** Switchyard over the baseline, as `1.22×`. */
export function formatRatio(switchyard: Figure, baseline: Figure): string {
  const value = isNumber(switchyard) && isNumber(baseline) ? ratio(switchyard, baseline) : null;
  return value === null ? MISSING : `${value.toFixed(2)}×`;
}

function count(value: number | undefined): string {
  return value === undefined ? '?' : String(value);
}

function atOnce(concurrency: number | undefined): string {
  return `${count(concurrency)} at once`;
}

/** The rows of one scenario: the first carries its name and sample size. */
function scenario(
  name: string,
  sample: string,
  rows: { metric: string; switchyard: string; baseline?: string; ratio?: string }[],
): ReportRow[] {
  return rows.map((row, index) => ({
    scenario: index === 0 ? name : '',
    metric: row.metric,
    switchyard: row.switchyard,
    baseline: row.baseline ?? NONE,
    ratio: row.ratio ?? NONE,
    sample: index === 0 ? sample : '',
  }));
}

/** A metric measured on both sides. */
function compared(metric: string, switchyard: Figure, baseline: Figure) {
  return {
    metric,
    switchyard: formatFigure(switchyard),
    baseline: formatFigure(baseline),
    ratio: formatRatio(switchyard, baseline),
  };
}

function duplicatesAndMissing(duplicates: number | undefined, missing: number | undefined) {
  return { metric: 'duplicates / missing', switchyard: `${count(duplicates)} / ${count(missing)}` };
}

const ONBOARD_LABELS = {
  hook_pglite: 'Onboard (signed hook → rules → HTTP), PGlite',
  hook_traced: 'Onboard (signed hook), PGlite, OpenTelemetry traces on',
  hook_encrypted: 'Onboard (signed hook), PGlite, step data encrypted',
  trigger_pglite: 'Onboard through the trigger endpoint, PGlite',
  hook_postgres: 'Onboard (signed hook), PostgreSQL server',
  before: 'Onboard (signed hook), PGlite, an earlier build (BENCH_ONBOARD_BEFORE)',
  floor: 'Onboard, the loose raw-SDK floor (`floor`) in the Switchyard column',
  floor_contract:
    'Onboard, the tight floor with what our contract adds (`floor_contract`) in the Switchyard column',
} as const;

/** The variants with every row: CPU by process and thread, memory, history. */
const ONBOARD_FULL = new Set(['hook_pglite', 'hook_encrypted', 'floor', 'floor_contract']);

/** The process that runs the flow's code: the service's, the tight floor's, or the loose floor's worker. */
function flowProcess(phase: OnboardPhase | undefined): string {
  return phase?.cpu_ms_per_execution['service'] === undefined ? 'worker' : 'service';
}

/** CPU ms per execution of that process's main thread (the event loop), and of its other threads. */
function threadSplit(phase: OnboardPhase | undefined): { main: Figure; others: Figure } {
  const name = flowProcess(phase);
  const main = phase?.cpu_ms_per_execution_by_thread?.[name]?.['main'];
  const total = phase?.cpu_ms_per_execution[name];
  return {
    main,
    others: isNumber(main) && isNumber(total) ? Math.round((total - main) * 10) / 10 : undefined,
  };
}

function peakRssAll(phase: OnboardPhase | undefined): Figure {
  const peaks = Object.values(phase?.peak_rss_mb ?? {});
  return peaks.length > 0 && peaks.every(isNumber) ? peaks.reduce((sum, mb) => sum + mb, 0) : undefined;
}

function eagerStarts(phase: OnboardPhase | undefined): string {
  return phase?.eager_starts === undefined ? NONE : `${phase.eager_starts} / ${count(phase.history.runs)}`;
}

/**
 * The onboard scenario: each variant and concurrency beside the floor's phase at the same concurrency,
 * the tight floor's when it ran (the loose floor then has rows of its own), else the loose floor's.
 */
function onboardRows(onboard: NonNullable<BenchReport['onboard']>): ReportRow[] {
  const rows: ReportRow[] = [];
  const baseline = onboard.floor_tight ?? onboard.floor;
  for (const [variant, label] of Object.entries(ONBOARD_LABELS) as [keyof typeof ONBOARD_LABELS, string][]) {
    const measured = onboard[variant];
    if (!measured || measured === baseline) continue;
    for (const [key, phase] of Object.entries(measured.phases)) {
      const floor = baseline?.phases[key];
      const metrics: ReturnType<typeof compared>[] = [
        compared('executions/s', phase.executions_per_sec, floor?.executions_per_sec),
        compared(
          'trigger → receiver p50 (ms)',
          phase.trigger_to_receiver_ms.p50,
          floor?.trigger_to_receiver_ms.p50,
        ),
        compared(
          'trigger → receiver p99 (ms)',
          phase.trigger_to_receiver_ms.p99,
          floor?.trigger_to_receiver_ms.p99,
        ),
        compared(
          'CPU ms per execution, all processes',
          phase.cpu_ms_per_execution['total'],
          floor?.cpu_ms_per_execution['total'],
        ),
      ];
      // Beside the floor that carries what the contract adds, the share of the cost that is ours.
      const ownCode = variant !== 'floor' && variant !== 'floor_contract';
      const contract = ownCode ? onboard.floor_contract?.phases[key] : undefined;
      if (contract && ONBOARD_FULL.has(variant))
        metrics.push(
          compared(
            'CPU ms per execution, all processes (baseline: floor_contract)',
            phase.cpu_ms_per_execution['total'],
            contract.cpu_ms_per_execution['total'],
          ),
          compared(
            'CPU ms: Temporal dev server (baseline: floor_contract)',
            phase.cpu_ms_per_execution['dev_server'],
            contract.cpu_ms_per_execution['dev_server'],
          ),
        );
      // Figures older reports lack: shown where either side has them.
      const lateFigure = (metric: string, ours: Figure, theirs: Figure) =>
        isNumber(ours) || isNumber(theirs) ? [compared(metric, ours, theirs)] : [];
      metrics.splice(1, 0, ...lateFigure('accept p50 (ms)', phase.accept_ms?.p50, floor?.accept_ms?.p50));
      if (ONBOARD_FULL.has(variant)) {
        const ours = threadSplit(phase);
        const theirs = threadSplit(floor);
        metrics.push(
          compared(
            "CPU ms: the flow's process (service; loose floor: worker)",
            phase.cpu_ms_per_execution[flowProcess(phase)],
            floor?.cpu_ms_per_execution[flowProcess(floor)],
          ),
          ...lateFigure('CPU ms: its main thread', ours.main, theirs.main),
          ...lateFigure('CPU ms: its other threads', ours.others, theirs.others),
          compared(
            'CPU ms: Temporal dev server',
            phase.cpu_ms_per_execution['dev_server'],
            floor?.cpu_ms_per_execution['dev_server'],
          ),
          compared(
            "peak RSS MB: the flow's process",
            phase.peak_rss_mb[flowProcess(phase)],
            floor?.peak_rss_mb[flowProcess(floor)],
          ),
          compared('peak RSS MB: sum of the measured processes', peakRssAll(phase), peakRssAll(floor)),
          compared('history events per run', phase.history.events_per_run, floor?.history.events_per_run),
          ...lateFigure('history bytes per run', phase.history.bytes_per_run, floor?.history.bytes_per_run),
          compared(
            'workflow tasks per run',
            phase.history.workflow_tasks_per_run,
            floor?.history.workflow_tasks_per_run,
          ),
          ...(phase.eager_starts === undefined && floor?.eager_starts === undefined
            ? []
            : [
                {
                  metric: 'eager starts / runs',
                  switchyard: eagerStarts(phase),
                  baseline: eagerStarts(floor),
                  ratio: NONE,
                },
              ]),
          {
            metric: 'workflow-task timeouts; duplicates / missing',
            switchyard: `${count(phase.history.workflow_task_timeouts)}; ${count(phase.receiver_duplicates)} / ${count(phase.receiver_missing)}`,
            baseline: floor
              ? `${count(floor.history.workflow_task_timeouts)}; ${count(floor.receiver_duplicates)} / ${count(floor.receiver_missing)}`
              : NONE,
            ratio: NONE,
          },
        );
      }
      rows.push(...scenario(label, `${count(phase.executions)} runs, ${atOnce(phase.concurrency)}`, metrics));
    }
  }
  return rows;
}

const MB = 1024 * 1024;

/** map-10k: Switchyard's map beside the hand-written floor, then the goal line. */
function mapRows(map: NonNullable<BenchReport['map-10k']>): ReportRow[] {
  const { switchyard: ours, floor } = map;
  const seconds = (ms: Figure) => (isNumber(ms) ? ms / 1000 : ms);
  const megabytes = (bytes: Figure) => (isNumber(bytes) ? bytes / MB : bytes);
  const rows = scenario(
    `A map over ${count(map.items)} items (two rules steps each), in ${count(ours.history.chunks)} chunks`,
    `1 run each, ${count(map.concurrency)} chunks at once`,
    [
      compared('items/s', ours.items_per_sec, floor.items_per_sec),
      compared('trigger to closed (s)', seconds(ours.duration_ms), seconds(floor.duration_ms)),
      compared(
        'CPU ms per item, all processes',
        ours.cpu_ms_per_item['total'],
        floor.cpu_ms_per_item['total'],
      ),
      compared(
        'CPU ms per item: service (floor: worker)',
        ours.cpu_ms_per_item['service'],
        floor.cpu_ms_per_item['worker'],
      ),
      compared(
        'CPU ms per item: Temporal dev server',
        ours.cpu_ms_per_item['dev_server'],
        floor.cpu_ms_per_item['dev_server'],
      ),
      compared(
        'largest history: events',
        ours.history.largest_history_events,
        floor.history.largest_history_events,
      ),
      compared(
        'largest history: MB',
        megabytes(ours.history.largest_history_bytes),
        megabytes(floor.history.largest_history_bytes),
      ),
      compared('GET the execution p50 (ms)', ours.read_execution_ms.p50, floor.read_execution_ms.p50),
      compared('GET the execution p99 (ms)', ours.read_execution_ms.p99, floor.read_execution_ms.p99),
      compared('GET a page of 100 runs p50 (ms)', ours.read_runs_page_ms.p50, floor.read_runs_page_ms.p50),
      compared('GET a page of 100 runs p99 (ms)', ours.read_runs_page_ms.p99, floor.read_runs_page_ms.p99),
    ],
  );
  const goal = map.goal;
  if (goal) {
    const share =
      isNumber(goal.cpu_ms_per_item) && isNumber(goal.onboard_cpu_ms_per_execution)
        ? ratio(goal.cpu_ms_per_item, goal.onboard_cpu_ms_per_execution)
        : null;
    rows.push(
      ...scenario(
        'Goal: a map item costs no more CPU than an onboard run',
        `${count(goal.onboard?.executions)} onboard runs, ${atOnce(goal.onboard?.concurrency)}, on the map's service`,
        [
          {
            metric: 'CPU ms per onboard execution, all processes',
            switchyard: formatFigure(goal.onboard_cpu_ms_per_execution),
          },
          {
            metric: 'map item ÷ onboard execution, CPU (goal ≤ 1)',
            switchyard: formatFigure(share),
          },
        ],
      ),
    );
  }
  return rows;
}

/** parallel-5: five calls at once and one call, each side; then five over one on each side. */
function parallelRows(parallel: NonNullable<BenchReport['parallel-5']>): ReportRow[] {
  const { switchyard: ours, floor } = parallel;
  const calls = count(parallel.calls);
  const over = (a: Figure, b: Figure) => (isNumber(a) && isNumber(b) ? ratio(a, b) : null);
  return scenario(
    `${calls} connector calls at once vs 1 (receiver answers in ${count(parallel.delay_ms)} ms)`,
    `${count(parallel.runs)} runs each, 1 at a time`,
    [
      compared(`${calls} calls p50 (ms)`, ours.parallel.latency_ms.p50, floor.parallel.latency_ms.p50),
      compared(`${calls} calls p95 (ms)`, ours.parallel.latency_ms.p95, floor.parallel.latency_ms.p95),
      compared('1 call p50 (ms)', ours.one_call.latency_ms.p50, floor.one_call.latency_ms.p50),
      compared('1 call p95 (ms)', ours.one_call.latency_ms.p95, floor.one_call.latency_ms.p95),
      compared(
        `${calls} calls ÷ 1 call, p50`,
        over(ours.parallel.latency_ms.p50, ours.one_call.latency_ms.p50),
        over(floor.parallel.latency_ms.p50, floor.one_call.latency_ms.p50),
      ),
      compared(
        `${calls} calls ÷ 1 call, p95`,
        over(ours.parallel.latency_ms.p95, ours.one_call.latency_ms.p95),
        over(floor.parallel.latency_ms.p95, floor.one_call.latency_ms.p95),
      ),
    ],
  );
}

/** Flow control: a concurrency key beside none, a limit that binds, a throttle, another workspace's backlog. */
function flowControlRows(flow: FlowControlFigures): ReportRow[] {
  const { throughput: t, admission: a, throttle, fairness: f } = flow;
  return [
    ...scenario(
      `Flow control: a concurrency key (${count(t.keys)} keys, limit ${count(t.limit)}) vs none`,
      `${count(t.runs)} runs each, ${atOnce(t.concurrency)}`,
      [
        compared('completions/s', t.keyed.completed_per_sec, t.plain.completed_per_sec),
        compared(
          'CPU ms per run (service and load, dev server)',
          t.keyed.cpu_ms_per_run['total'],
          t.plain.cpu_ms_per_run['total'],
        ),
        compared('latency p50 (ms)', t.keyed.execution_latency_ms.p50, t.plain.execution_latency_ms.p50),
      ],
    ),
    ...scenario(
      `Flow control: a limit that binds (${count(a.keys)} keys, limit ${count(a.limit)})`,
      `${count(a.runs)} runs, calls held ${count(a.hold_ms)} ms`,
      [
        { metric: 'place freed to next call p50 (ms)', switchyard: formatFigure(a.handoff_ms.p50) },
        { metric: 'place freed to next call p99 (ms)', switchyard: formatFigure(a.handoff_ms.p99) },
      ],
    ),
    ...scenario(
      `Flow control: a throttle of ${count(throttle.limit_per_sec)} per second (vs its limit)`,
      `${count(throttle.runs)} runs of one key`,
      [compared('starts/s', throttle.starts.achieved_per_sec, throttle.limit_per_sec)],
    ),
    ...scenario(
      `Workspace B's run beside workspace A's ${count(f.backlog)} queued runs (vs B alone)`,
      `A: one key, limit ${count(f.limit)}; B's runs 1 at a time`,
      [
        compared('B trigger to result p50 (ms)', f.b_beside_backlog_ms.p50, f.b_alone_ms.p50),
        compared('B trigger to result p99 (ms)', f.b_beside_backlog_ms.p99, f.b_alone_ms.p99),
        {
          metric: "A's runs all enqueued (s)",
          switchyard: formatFigure(isNumber(f.enqueue_ms) ? f.enqueue_ms / 1000 : null),
        },
        { metric: "A's backlog drained (runs/s)", switchyard: formatFigure(f.drain_per_sec) },
      ],
    ),
  ];
}

/** One row per measurement, in the report's order; scenarios absent from the report are left out. */
export function reportRows(report: BenchReport): ReportRow[] {
  const rows: ReportRow[] = [];
  if (report.onboard) rows.push(...onboardRows(report.onboard));
  for (const [history, replay] of Object.entries(report.workflow_replay ?? {}))
    rows.push(
      ...scenario(
        `Workflow code: a replay of \`${history}\``,
        `${count(replay.replays)} replays, no server`,
        [
          { metric: 'CPU ms per replay', switchyard: formatFigure(replay.cpu_ms_per_replay) },
          {
            metric: 'promises of workflow code per replay',
            switchyard: formatFigure(replay.workflow_promises_per_replay),
          },
        ],
      ),
    );
  const { api_trigger: api, raw_start: raw } = report;
  if (api && raw)
    rows.push(
      ...scenario(
        'Start: API trigger vs `client.workflow.start`',
        `${count(api.count)} starts each, ${atOnce(api.concurrency)}`,
        [
          compared('throughput (starts/s)', api.per_sec, raw.per_sec),
          compared('latency p50 (ms)', api.latency_ms.p50, raw.latency_ms.p50),
          compared('latency p99 (ms)', api.latency_ms.p99, raw.latency_ms.p99),
        ],
      ),
    );

  const e2e = report.end_to_end;
  if (e2e)
    rows.push(
      ...scenario(
        'Demo workflow, trigger to closed',
        `${count(e2e.executions)} runs, ${atOnce(e2e.concurrency)}`,
        [{ metric: 'completions/s', switchyard: formatFigure(e2e.completed_per_sec) }],
      ),
    );

  const read = report.read_execution;
  if (read) {
    const { api_get: get, raw_describe_and_history: rawRead } = read;
    rows.push(
      ...scenario(
        `Read a ${count(read.steps)}-step execution: \`GET\` vs describe + history`,
        `${count(get.count)} reads each, ${atOnce(get.concurrency)}`,
        [
          compared('latency p50 (ms)', get.latency_ms.p50, rawRead.latency_ms.p50),
          compared('latency p99 (ms)', get.latency_ms.p99, rawRead.latency_ms.p99),
        ],
      ),
    );
  }

  const five = report.five_step_e2e;
  if (five) {
    const { api: ours, baseline } = five;
    rows.push(
      ...scenario(
        '5 steps (rules + connector) vs a hand-written workflow',
        `${count(five.executions)} runs each, ${atOnce(five.concurrency)}`,
        [
          compared('completions/s', ours.completed_per_sec, baseline.completed_per_sec),
          compared('latency p50 (ms)', ours.execution_latency_ms.p50, baseline.execution_latency_ms.p50),
          compared('latency p99 (ms)', ours.execution_latency_ms.p99, baseline.execution_latency_ms.p99),
        ],
      ),
    );
  }

  const latency = report.webhooks?.latency;
  if (latency)
    rows.push(
      ...scenario(
        'Webhook delivery after the execution closed',
        `${count(latency.executions)} runs, ${atOnce(latency.concurrency)}`,
        [
          { metric: 'latency p50 (ms)', switchyard: formatFigure(latency.delivery_latency_ms.p50) },
          { metric: 'latency p99 (ms)', switchyard: formatFigure(latency.delivery_latency_ms.p99) },
          duplicatesAndMissing(latency.duplicates, latency.missing),
        ],
      ),
    );

  // Reports from before map-10k replaced it.
  const largeMap = report.large_map;
  if (largeMap)
    rows.push(
      ...scenario(
        `A map over ${count(largeMap.items)} items (two rules steps each), in ${count(largeMap.chunks)} chunks`,
        `1 run, ${atOnce(largeMap.concurrency)}`,
        [
          { metric: 'trigger to closed (s)', switchyard: formatFigure(largeMap.duration_ms / 1000) },
          { metric: 'largest history: events', switchyard: formatFigure(largeMap.largest_history_events) },
          {
            metric: 'largest history: MB',
            switchyard: formatFigure(largeMap.largest_history_bytes / MB),
          },
          { metric: 'GET the execution p50 (ms)', switchyard: formatFigure(largeMap.read_latency_ms.p50) },
          { metric: 'GET the execution p99 (ms)', switchyard: formatFigure(largeMap.read_latency_ms.p99) },
        ],
      ),
    );

  const map = report['map-10k'];
  if (map) rows.push(...mapRows(map));
  const parallel = report['parallel-5'];
  if (parallel) rows.push(...parallelRows(parallel));

  const isolation = report.isolation;
  if (isolation)
    rows.push(
      ...scenario(
        `A normal run beside ${count(isolation.loops)} endless loops (vs a quiet service)`,
        `${count(isolation.runs)} runs each, 1 at a time`,
        [
          compared(
            'trigger to closed p50 (ms)',
            isolation.beside_loops_latency_ms.p50,
            isolation.quiet_latency_ms.p50,
          ),
          compared(
            'trigger to closed p99 (ms)',
            isolation.beside_loops_latency_ms.p99,
            isolation.quiet_latency_ms.p99,
          ),
        ],
      ),
    );

  const fairness = report.fairness;
  if (fairness)
    rows.push(
      ...scenario(
        `Workspace B's run while workspace A floods ${count(fairness.flood)} slow runs (vs B alone)`,
        `A's receiver answers after ${count(fairness.slow_ms)} ms; B's runs 1 at a time`,
        [
          compared(
            'B trigger to result p50 (ms)',
            fairness.under_flood_latency_ms.p50,
            fairness.idle_latency_ms.p50,
          ),
          compared(
            'B trigger to result p90 (ms)',
            fairness.under_flood_latency_ms.p90,
            fairness.idle_latency_ms.p90,
          ),
        ],
      ),
    );

  const flow = report['flow-control'];
  if (flow) rows.push(...flowControlRows(flow));

  const fanout = report.webhooks?.fanout;
  if (fanout)
    rows.push(
      ...scenario(
        `Webhook fan-out to ${count(fanout.endpoints)} endpoints`,
        `${count(fanout.executions)} runs × ${count(fanout.endpoints)} endpoints, ${atOnce(fanout.concurrency)}`,
        [
          { metric: 'deliveries/s', switchyard: formatFigure(fanout.deliveries_per_sec) },
          duplicatesAndMissing(fanout.duplicates, fanout.missing),
        ],
      ),
    );
  return rows;
}

/** What went wrong during the run (errors, runs that did not complete, lost webhooks): none is expected. */
export function reportProblems(report: BenchReport): string[] {
  const problems: string[] = [];
  const note = (what: string, value: number | undefined, label: string) => {
    if (value !== undefined && value > 0) problems.push(`${what}: ${value} ${label}`);
  };
  const flag = (what: string, ok: boolean | null | undefined, label: string) => {
    if (ok === false) problems.push(`${what}: ${label}`);
  };
  // The measured variants; the derived comparisons (tracing_cost, ...) carry phases of figures, no runs.
  for (const variant of [...Object.keys(ONBOARD_LABELS), 'floor_tight'] as const) {
    const result = report.onboard?.[variant as keyof typeof ONBOARD_LABELS | 'floor_tight'];
    if (typeof result !== 'object' || result === null || !('phases' in result)) continue;
    for (const [key, phase] of Object.entries(result.phases)) {
      note(`onboard ${variant} ${key}`, phase.errors, 'errors');
      note(`onboard ${variant} ${key}`, phase.receiver_missing, 'executions missing at the receiver');
      note(`onboard ${variant} ${key}`, phase.receiver_duplicates, 'duplicated executions');
      const { runs, completed } = phase.history;
      if (runs !== undefined && completed !== undefined)
        note(`onboard ${variant} ${key}`, runs - completed, 'not completed');
    }
  }
  note('api_trigger', report.api_trigger?.errors, 'errors');
  note('raw_start', report.raw_start?.errors, 'errors');
  note('end_to_end', report.end_to_end?.trigger_errors, 'trigger errors');
  note('end_to_end', report.end_to_end?.not_completed, 'not completed');
  note('read_execution', report.read_execution?.api_get.errors, 'API errors');
  note('read_execution', report.read_execution?.raw_describe_and_history.errors, 'raw errors');
  const five = report.five_step_e2e;
  for (const [side, figures] of [
    ['api', five?.api],
    ['baseline', five?.baseline],
  ] as const) {
    note(`five_step_e2e ${side}`, figures?.trigger_errors, 'trigger errors');
    note(`five_step_e2e ${side}`, figures?.not_completed, 'not completed');
  }
  flag('five_step_e2e', five?.results_match, 'the two sides came to different results');
  const map = report['map-10k'];
  flag('map-10k switchyard', map?.switchyard.outputs_correct, 'wrong item outputs');
  flag('map-10k floor', map?.floor.outputs_correct, 'wrong item outputs');
  const onboard = map?.goal?.onboard;
  note('map-10k onboard', onboard?.errors, 'errors');
  note('map-10k onboard', onboard?.receiver_missing, 'executions missing at the receiver');
  note('map-10k onboard', onboard?.not_completed, 'not completed');
  const parallel = report['parallel-5'];
  for (const side of ['switchyard', 'floor'] as const)
    for (const [kind, figures] of Object.entries(parallel?.[side] ?? {}))
      note(`parallel-5 ${side} ${kind}`, figures.errors, 'errors');
  const { latency, fanout, signatures } = report.webhooks ?? {};
  note('webhooks latency', latency?.errors, 'errors');
  note('webhooks latency', latency?.not_completed, 'not completed');
  note('webhooks latency', latency?.missing, 'missing');
  flag('webhooks latency', latency?.delivery_workflows_drained, 'delivery workflows still running');
  note('webhooks fanout', fanout?.trigger_errors, 'trigger errors');
  note('webhooks fanout', fanout?.not_completed, 'not completed');
  note('webhooks fanout', fanout?.missing, 'missing');
  flag('webhooks fanout', fanout?.delivery_workflows_drained, 'delivery workflows still running');
  flag('webhooks', signatures?.all_signatures_verified, 'signatures not verified');
  const flow = report['flow-control'];
  for (const side of ['plain', 'keyed'] as const) {
    note(`flow-control ${side}`, flow?.throughput[side].trigger_errors, 'trigger errors');
    note(`flow-control ${side}`, flow?.throughput[side].not_completed, 'not completed');
  }
  note('flow-control admission', flow?.admission.trigger_errors, 'trigger errors');
  note('flow-control throttle', flow?.throttle.trigger_errors, 'trigger errors');
  note('flow-control fairness', flow?.fairness.trigger_errors, 'trigger errors');
  note('webhooks', signatures?.unexpected_events, 'unexpected events');
  return problems;
}

function checksLine(report: BenchReport): string {
  const problems = reportProblems(report);
  if (problems.length > 0) return `Checks: **failed**: ${problems.join('; ')}.`;
  const signatures = report.webhooks?.signatures;
  const verified =
    signatures?.signatures_verified === undefined
      ? ''
      : ` (${signatures.signatures_verified} of ${count(signatures.requests)} webhook signatures verified)`;
  return `Checks: no errors, every execution completed, no webhook missing${verified}.`;
}

/** `temporal version 1.9.1 (Server 1.32.0, UI 2.54.1)` → `CLI 1.9.1, server 1.32.0`. */
export function describeTemporal(cli: string | null | undefined): string {
  if (!cli) return 'unknown';
  const match = /version (\S+) \(Server ([^,)\s]+)/.exec(cli);
  return match ? `CLI ${match[1]}, server ${match[2]} (dev server)` : cli;
}

function describeDatabase(kind: string | null | undefined): string {
  if (kind === 'pglite') return 'PGlite (embedded PostgreSQL)';
  if (kind === 'postgres') return 'PostgreSQL server';
  return kind ?? 'unknown';
}

/** `2026-11-21T22:04:24.186Z` → `2026-11-21 22:04 UTC`. */
function describeDate(date: string | undefined): string {
  return date && /^\d{4}-\d\d-\d\dT\d\d:\d\d/.test(date)
    ? `${date.slice(0, 10)} ${date.slice(11, 16)} UTC`
    : (date ?? 'unknown');
}

/** The machine and versions the numbers were measured with, as [label, value] pairs. */
export function environmentRows(report: BenchReport): [string, string][] {
  const env = report.environment ?? {};
  const memory =
    env.total_memory_mb === undefined ? 'unknown' : `${(env.total_memory_mb / 1024).toFixed(1)} GiB`;
  const load = env.load_average_before;
  const rows: [string, string][] = [
    ['Date', describeDate(env.date)],
    [
      'Git commit',
      `${env.git_commit ? `\`${env.git_commit}\`` : 'unknown'} (Switchyard ${env.switchyard_version ?? '?'})`,
    ],
    ['CPU', `${env.cpu_model ?? 'unknown'}, ${count(env.cpu_count)} CPUs`],
    ['Memory', memory],
    ['OS', env.platform ?? 'unknown'],
    ['Node', env.node ?? 'unknown'],
    ['Temporal', describeTemporal(env.temporal_cli)],
    ['Database', describeDatabase(env.database)],
  ];
  if (load && load.length > 0) rows.push(['Load average before (1, 5, 15 min)', load.join(', ')]);
  if (report.duration_s !== undefined) rows.push(['Benchmark duration', `${report.duration_s} s`]);
  return rows;
}

type Align = 'left' | 'right';

function escapeCell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
}

/** Prettier's layout: columns padded to their widest cell (at least 3), right-aligned ones on the left. */
export function markdownTable(header: string[], rows: string[][], align: Align[]): string {
  const cells = [header, ...rows].map((row) => header.map((_, i) => escapeCell(row[i] ?? '')));
  const widths = header.map((_, i) => Math.max(3, ...cells.map((row) => [...row[i]!].length)));
  const pad = (text: string, i: number) => {
    const space = ' '.repeat(widths[i]! - [...text].length);
    return align[i] === 'right' ? space + text : text + space;
  };
  const line = (row: string[]) => `| ${row.map(pad).join(' | ')} |`;
  const rule = `| ${widths.map((width, i) => (align[i] === 'right' ? `${'-'.repeat(width - 1)}:` : '-'.repeat(width))).join(' | ')} |`;
  const [head, ...body] = cells;
  return [line(head!), rule, ...body.map(line)].join('\n');
}

/** The tables and notes, without a heading: the content of latest.md and of the docs page's block. */
export function renderReportBody(report: BenchReport): string {
  const results = markdownTable(
    ['Scenario', 'Metric', 'Switchyard', 'Raw Temporal', 'Ratio', 'Sample'],
    reportRows(report).map((row) => [
      row.scenario,
      row.metric,
      row.switchyard,
      row.baseline,
      row.ratio,
      row.sample,
    ]),
    ['left', 'left', 'right', 'right', 'right', 'left'],
  );
  const environment = markdownTable(['Measured on', ''], environmentRows(report), ['left', 'left']);
  return [
    results,
    `Ratio: Switchyard ÷ raw Temporal; a rate below 1 or a latency above 1 is Switchyard's cost (${NONE}: no baseline).`,
    checksLine(report),
    environment,
  ].join('\n\n');
}

/** bench/results/latest.md. */
export function renderMarkdown(report: BenchReport): string {
  return [
    `# Switchyard benchmark, ${describeDate(report.environment?.date)}`,
    'Generated from latest.json by `npm run bench` or `npm run bench:report` (bench/report.ts): do not edit.',
    renderReportBody(report),
  ]
    .join('\n\n')
    .concat('\n');
}

/** `page` with the text between BENCH_START and BENCH_END replaced by `body`. */
export function replaceBenchBlock(page: string, body: string): string {
  const start = page.indexOf(BENCH_START);
  const end = page.indexOf(BENCH_END);
  if (start < 0 || end < start || page.indexOf(BENCH_START, start + 1) >= 0)
    throw new Error(`the benchmarks page needs exactly one ${BENCH_START} … ${BENCH_END} block`);
  return `${page.slice(0, start + BENCH_START.length)}\n\n${body}\n\n${page.slice(end)}`;
}

/** `2026-11-21T22:04:24.186Z` → `2026-11-21T22-04-24Z`: the name of a run's dated copies. */
export function archiveStamp(date: string | undefined): string {
  const iso = date && !Number.isNaN(Date.parse(date)) ? new Date(date) : new Date();
  return `${iso.toISOString().slice(0, 19).replace(/:/g, '-')}Z`;
}

/** Write via a temporary file and a rename, so a reader never sees half a file. */
function writeAtomically(file: string, text: string): void {
  const staging = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(staging, text);
  fs.renameSync(staging, file);
}

export interface WriteReportOptions {
  resultsDir?: string;
  /** The page with the BENCH_START … BENCH_END block (default: docs/benchmarks.md). */
  pageFile?: string;
  /** Also keep dated copies (`<date>.json`, `<date>.md`); default: BENCH_ARCHIVE=1. */
  archive?: boolean;
}

/**
 * Writes latest.md (and, when archiving, the run's dated .json and .md) beside latest.json and rewrites
 * the block of docs/benchmarks.md; returns the files it changed. The page is written last: without its
 * markers the results are still on disk when this throws.
 */
export function writeReportFiles(report: BenchReport, options: WriteReportOptions = {}): string[] {
  const resultsDir = options.resultsDir ?? RESULTS_DIR;
  const pageFile = options.pageFile ?? BENCHMARKS_PAGE;
  const archive = options.archive ?? ['1', 'true'].includes(process.env['BENCH_ARCHIVE'] ?? '');
  const markdown = renderMarkdown(report);
  const written: string[] = [];
  fs.mkdirSync(resultsDir, { recursive: true });
  const write = (file: string, text: string) => {
    writeAtomically(file, text);
    written.push(file);
  };
  write(path.join(resultsDir, 'latest.md'), markdown);
  if (archive) {
    const stamp = archiveStamp(report.environment?.date);
    write(path.join(resultsDir, `${stamp}.json`), `${JSON.stringify(report, null, 2)}\n`);
    write(path.join(resultsDir, `${stamp}.md`), markdown);
  }
  const page = fs.readFileSync(pageFile, 'utf8');
  const updated = replaceBenchBlock(page, renderReportBody(report));
  if (updated !== page) write(pageFile, updated);
  return written;
}
