/** The benchmark's Markdown table (bench/report.ts), from a fixed report. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import {
  BENCH_END,
  BENCH_START,
  BENCHMARKS_PAGE,
  RESULTS_DIR,
  archiveStamp,
  describeTemporal,
  markdownTable,
  renderMarkdown,
  renderReportBody,
  replaceBenchBlock,
  reportProblems,
  writeReportFiles,
  type BenchReport,
} from '../../bench/report';

const latency = (p50: number, p99: number) => ({
  count: 10,
  min: 1,
  mean: p50,
  p50,
  p90: p99,
  p99,
  max: p99,
});
const load = (per_sec: number, p50: number, p99: number, concurrency = 32) => ({
  count: 1000,
  concurrency,
  rounds: 4,
  ok: 1000,
  errors: 0,
  error_samples: [],
  duration_ms: 10000,
  per_sec,
  latency_ms: latency(p50, p99),
});
const completion = (completed_per_sec: number, p50: number, p99: number) => ({
  triggered: 300,
  trigger_errors: 0,
  completed: 300,
  not_completed: 0,
  completed_per_sec,
  execution_latency_ms: latency(p50, p99),
});

/** The figures of a real run (bench/results/latest.json of 2026-11-21), trimmed to what matters. */
function fixture(): BenchReport {
  return {
    api_trigger: load(97.3, 307.38, 612.4),
    raw_start: load(125.49, 252.59, 387.9),
    end_to_end: { executions: 500, concurrency: 32, ...completion(44.08, 5945, 8129) },
    read_execution: {
      steps: 20,
      api_get: { ...load(154.92, 5.37, 20.1, 1), count: 500 },
      raw_describe_and_history: { ...load(217.72, 3.95, 13.55, 1), count: 500 },
    },
    five_step_e2e: {
      executions: 300,
      concurrency: 32,
      api: completion(23.2, 4130, 6087),
      baseline: completion(29.81, 3230, 4741),
      results_match: true,
    },
    webhooks: {
      latency: {
        executions: 300,
        concurrency: 16,
        errors: 0,
        not_completed: 0,
        missing: 0,
        duplicates: 0,
        delivery_latency_ms: latency(303, 563),
        delivery_workflows_drained: true,
      },
      fanout: {
        executions: 100,
        endpoints: 10,
        concurrency: 16,
        trigger_errors: 0,
        not_completed: 0,
        missing: 0,
        duplicates: 2,
        deliveries_per_sec: 120.75,
        delivery_workflows_drained: true,
      },
      signatures: {
        requests: 1316,
        signatures_verified: 1316,
        all_signatures_verified: true,
        unexpected_events: 0,
      },
    },
    environment: {
      date: '2026-11-21T22:04:24.186Z',
      switchyard_version: '0.1.0',
      git_commit: 'f1a803c',
      node: 'v20.20.2',
      platform: 'linux 6.18.44 x64',
      cpu_model: 'Intel(R) Xeon(R) Processor',
      cpu_count: 2,
      total_memory_mb: 24106,
      load_average_before: [2.57, 1.71, 1.56],
      temporal_cli: 'temporal version 1.9.1 (Server 1.32.0, UI 2.54.1)',
      database: 'pglite',
      eager_start: true,
    },
    duration_s: 141,
  };
}

const mapSide = (side: 'service' | 'worker', perSec: number, cpu: number, events: number, bytes: number) => ({
  duration_ms: Math.round(10_000_000 / perSec),
  items_per_sec: perSec,
  cpu_ms_per_item: { [side]: cpu - 0.5, dev_server: 0.5, total: cpu },
  outputs_correct: true,
  history: { chunks: 100, largest_history_events: events, largest_history_bytes: bytes },
  read_execution_ms: latency(side === 'service' ? 47.5 : 12.1, side === 'service' ? 91.2 : 30.4),
  read_runs_page_ms: latency(side === 'service' ? 61 : 20.2, side === 'service' ? 120 : 44),
});

/** A map-10k section as run.ts writes it (figures of a subset run, trimmed). */
function mapFixture(): NonNullable<BenchReport['map-10k']> {
  return {
    items: 10000,
    concurrency: 20,
    switchyard: mapSide('service', 728, 2.6, 517, 415_650),
    floor: mapSide('worker', 1000, 2, 505, 262_144),
    goal: {
      cpu_ms_per_item: 2.6,
      onboard_cpu_ms_per_execution: 19.5,
      onboard: { executions: 1000, concurrency: 10, errors: 0, receiver_missing: 0, not_completed: 0 },
    },
  };
}

const parallelSide = (p50: number, p95: number) => ({
  latency_ms: { ...latency(p50, p95 + 10), p95 },
  errors: 0,
});

/** A parallel-5 section as run.ts writes it. */
function parallelFixture(): NonNullable<BenchReport['parallel-5']> {
  return {
    calls: 5,
    delay_ms: 50,
    runs: 200,
    switchyard: { parallel: parallelSide(90, 120), one_call: parallelSide(75, 100) },
    floor: { parallel: parallelSide(70, 90), one_call: parallelSide(64, 80) },
  };
}

/** The rows of the results table from the scenario whose name starts with `name` to the next scenario. */
/** One onboard phase of a report: `cpu` ms per run, `devServer` of them the dev server's, `main` the main thread's. */
function onboardPhase(
  flowProcess: 'service' | 'worker',
  cpu: number,
  main: number,
  eager?: number,
  devServer = 6,
) {
  return {
    concurrency: 10,
    executions: 300,
    errors: 0,
    ...(eager === undefined ? {} : { eager_starts: eager }),
    executions_per_sec: 100 / cpu,
    accept_ms: latency(cpu * 5, cpu * 10),
    trigger_to_receiver_ms: latency(cpu * 10, cpu * 20),
    cpu_ms_per_execution: { [flowProcess]: cpu - devServer, dev_server: devServer, total: cpu },
    cpu_ms_per_execution_by_thread: {
      [flowProcess]: { main: main, node: cpu - devServer - main },
      dev_server: { main: 0, temporal: devServer },
    },
    peak_rss_mb: { [flowProcess]: 300, dev_server: 200 },
    history: {
      runs: 300,
      completed: 300,
      events_per_run: 6,
      bytes_per_run: 1000,
      workflow_tasks_per_run: 1,
      workflow_task_timeouts: 0,
    },
    receiver_missing: 0,
    receiver_duplicates: 0,
  };
}

function scenarioRows(report: BenchReport, name: string): string[][] {
  const rows = tableRows(renderReportBody(report), 'Scenario');
  const first = rows.findIndex((row) => row[0]!.startsWith(name));
  expect(first, `no scenario ${name}`).to.be.at.least(0);
  const next = rows.findIndex((row, i) => i > first && row[0] !== '');
  return rows.slice(first, next < 0 ? undefined : next);
}

/** The cells of each row of the first table under the header row `firstHeader`. */
function tableRows(markdown: string, firstHeader: string): string[][] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((line) => line.startsWith(`| ${firstHeader} `));
  expect(start, `no table starting with ${firstHeader}`).to.be.at.least(0);
  const rows: string[][] = [];
  for (const line of lines.slice(start)) {
    if (!line.startsWith('|')) break;
    if (/^\|[-:| ]+\|$/.test(line)) continue; // the alignment row
    rows.push(
      line
        .slice(1, -1)
        .split(' | ')
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}

describe('benchmark report (bench/report.ts)', () => {
  it('has one row per measurement: Switchyard, the raw Temporal baseline, their ratio', () => {
    expect(tableRows(renderReportBody(fixture()), 'Scenario')).to.deep.equal([
      ['Scenario', 'Metric', 'Switchyard', 'Raw Temporal', 'Ratio', 'Sample'],
      [
        'Start: API trigger vs `client.workflow.start`',
        'throughput (starts/s)',
        '97.3',
        '125',
        '0.78×',
        '1000 starts each, 32 at once',
      ],
      ['', 'latency p50 (ms)', '307', '253', '1.22×', ''],
      ['', 'latency p99 (ms)', '612', '388', '1.58×', ''],
      ['Demo workflow, trigger to closed', 'completions/s', '44.1', '–', '–', '500 runs, 32 at once'],
      [
        'Read a 20-step execution: `GET` vs describe + history',
        'latency p50 (ms)',
        '5.37',
        '3.95',
        '1.36×',
        '500 reads each, 1 at once',
      ],
      ['', 'latency p99 (ms)', '20.1', '13.6', '1.48×', ''],
      [
        '5 steps (rules + connector) vs a hand-written workflow',
        'completions/s',
        '23.2',
        '29.8',
        '0.78×',
        '300 runs each, 32 at once',
      ],
      ['', 'latency p50 (ms)', '4130', '3230', '1.28×', ''],
      ['', 'latency p99 (ms)', '6087', '4741', '1.28×', ''],
      [
        'Webhook delivery after the execution closed',
        'latency p50 (ms)',
        '303',
        '–',
        '–',
        '300 runs, 16 at once',
      ],
      ['', 'latency p99 (ms)', '563', '–', '–', ''],
      ['', 'duplicates / missing', '0 / 0', '–', '–', ''],
      [
        'Webhook fan-out to 10 endpoints',
        'deliveries/s',
        '121',
        '–',
        '–',
        '100 runs × 10 endpoints, 16 at once',
      ],
      ['', 'duplicates / missing', '2 / 0', '–', '–', ''],
    ]);
  });

  it('sets map-10k beside its hand-written floor, then the goal line against an onboard execution', () => {
    const report = { ...fixture(), 'map-10k': mapFixture() };
    expect([...scenarioRows(report, 'A map over'), ...scenarioRows(report, 'Goal:')]).to.deep.equal([
      [
        'A map over 10000 items (two rules steps each), in 100 chunks',
        'items/s',
        '728',
        '1000',
        '0.73×',
        '1 run each, 20 chunks at once',
      ],
      ['', 'trigger to closed (s)', '13.7', '10.0', '1.37×', ''],
      ['', 'CPU ms per item, all processes', '2.60', '2.00', '1.30×', ''],
      ['', 'CPU ms per item: service (floor: worker)', '2.10', '1.50', '1.40×', ''],
      ['', 'CPU ms per item: Temporal dev server', '0.50', '0.50', '1.00×', ''],
      ['', 'largest history: events', '517', '505', '1.02×', ''],
      ['', 'largest history: MB', '0.40', '0.25', '1.59×', ''],
      ['', 'GET the execution p50 (ms)', '47.5', '12.1', '3.93×', ''],
      ['', 'GET the execution p99 (ms)', '91.2', '30.4', '3.00×', ''],
      ['', 'GET a page of 100 runs p50 (ms)', '61.0', '20.2', '3.02×', ''],
      ['', 'GET a page of 100 runs p99 (ms)', '120', '44.0', '2.73×', ''],
      [
        'Goal: a map item costs no more CPU than an onboard run',
        'CPU ms per onboard execution, all processes',
        '19.5',
        '–',
        '–',
        "1000 onboard runs, 10 at once, on the map's service",
      ],
      ['', 'map item ÷ onboard execution, CPU (goal ≤ 1)', '0.13', '–', '–', ''],
    ]);
  });

  it('sets parallel-5 five calls and one call beside the floor, and five over one on each side', () => {
    const report = { ...fixture(), 'parallel-5': parallelFixture() };
    expect(scenarioRows(report, '5 connector calls')).to.deep.equal([
      [
        '5 connector calls at once vs 1 (receiver answers in 50 ms)',
        '5 calls p50 (ms)',
        '90.0',
        '70.0',
        '1.29×',
        '200 runs each, 1 at a time',
      ],
      ['', '5 calls p95 (ms)', '120', '90.0', '1.33×', ''],
      ['', '1 call p50 (ms)', '75.0', '64.0', '1.17×', ''],
      ['', '1 call p95 (ms)', '100', '80.0', '1.25×', ''],
      ['', '5 calls ÷ 1 call, p50', '1.20', '1.09', '1.10×', ''],
      ['', '5 calls ÷ 1 call, p95', '1.20', '1.13', '1.07×', ''],
    ]);
  });

  it("checks map-10k's item outputs and onboard runs, and parallel-5's runs", () => {
    const report: BenchReport = { ...fixture(), 'map-10k': mapFixture(), 'parallel-5': parallelFixture() };
    expect(reportProblems(report)).to.deep.equal([]);
    report['map-10k']!.floor.outputs_correct = false;
    report['map-10k']!.goal!.onboard!.not_completed = 2;
    report['parallel-5']!.switchyard.parallel.errors = 1;
    expect(reportProblems(report)).to.deep.equal([
      'map-10k floor: wrong item outputs',
      'map-10k onboard: 2 not completed',
      'parallel-5 switchyard parallel: 1 errors',
    ]);
  });

  it('still renders the large_map section of a report from before map-10k', () => {
    const report = fixture();
    report.large_map = {
      items: 10000,
      concurrency: 20,
      outputs: 10000,
      duration_ms: 13734,
      chunks: 100,
      execution_history_events: 517,
      execution_history_bytes: 415650,
      largest_history_events: 517,
      largest_history_bytes: 415650,
      read_latency_ms: latency(47.47, 91.17),
    };
    expect(scenarioRows(report, 'A map over')[0]).to.deep.equal([
      'A map over 10000 items (two rules steps each), in 100 chunks',
      'trigger to closed (s)',
      '13.7',
      '–',
      '–',
      '1 run, 20 at once',
    ]);
  });

  it('aligns the figures to the right', () => {
    const body = renderReportBody(fixture());
    expect(body.split('\n')[1]).to.match(/^\| -+ \| -+ \| -+: \| -+: \| -+: \| -+ \|$/);
  });

  it('names the machine and the versions the numbers were measured with', () => {
    expect(tableRows(renderReportBody(fixture()), 'Measured on').slice(1)).to.deep.equal([
      ['Date', '2026-11-21 22:04 UTC'],
      ['Git commit', '`f1a803c` (Switchyard 0.1.0)'],
      ['CPU', 'Intel(R) Xeon(R) Processor, 2 CPUs'],
      ['Memory', '23.5 GiB'],
      ['OS', 'linux 6.18.44 x64'],
      ['Node', 'v20.20.2'],
      ['Temporal', 'CLI 1.9.1, server 1.32.0 (dev server)'],
      ['Database', 'PGlite (embedded PostgreSQL)'],
      ['Load average before (1, 5, 15 min)', '2.57, 1.71, 1.56'],
      ['Benchmark duration', '141 s'],
    ]);
    expect(describeTemporal(null)).to.equal('unknown');
    expect(describeTemporal('temporal 2.0')).to.equal('temporal 2.0');
  });

  it('says whether every check passed, and lists what went wrong otherwise', () => {
    expect(renderReportBody(fixture())).to.include(
      'Checks: no errors, every execution completed, no webhook missing (1316 of 1316 webhook signatures verified).',
    );
    const report = fixture();
    report.api_trigger!.errors = 3;
    report.webhooks!.fanout!.missing = 1;
    report.five_step_e2e!.results_match = false;
    expect(reportProblems(report)).to.deep.equal([
      'api_trigger: 3 errors',
      'five_step_e2e: the two sides came to different results',
      'webhooks fanout: 1 missing',
    ]);
    expect(renderReportBody(report)).to.include('Checks: **failed**: api_trigger: 3 errors; ');
  });

  it('sets onboard variants beside the tight floor, the loose floor among them, split by process and thread', () => {
    const report: BenchReport = {
      onboard: {
        hook_pglite: { phases: { c10: onboardPhase('service', 15, 5) } },
        floor_tight: { phases: { c10: onboardPhase('service', 12, 2, 300) } },
        floor: { phases: { c10: onboardPhase('worker', 18, 4) } },
      },
    };
    const ours = scenarioRows(report, 'Onboard (signed hook → rules → HTTP), PGlite');
    expect(ours.map((row) => row.slice(1, 5))).to.deep.equal([
      ['executions/s', '6.67', '8.33', '0.80×'],
      ['accept p50 (ms)', '75.0', '60.0', '1.25×'],
      ['trigger → receiver p50 (ms)', '150', '120', '1.25×'],
      ['trigger → receiver p99 (ms)', '300', '240', '1.25×'],
      ['CPU ms per execution, all processes', '15.0', '12.0', '1.25×'],
      ["CPU ms: the flow's process (service; loose floor: worker)", '9.00', '6.00', '1.50×'],
      ['CPU ms: its main thread', '5.00', '2.00', '2.50×'],
      ['CPU ms: its other threads', '4.00', '4.00', '1.00×'],
      ['CPU ms: Temporal dev server', '6.00', '6.00', '1.00×'],
      ["peak RSS MB: the flow's process", '300', '300', '1.00×'],
      ['peak RSS MB: sum of the measured processes', '500', '500', '1.00×'],
      ['history events per run', '6.00', '6.00', '1.00×'],
      ['history bytes per run', '1000', '1000', '1.00×'],
      ['workflow tasks per run', '1.00', '1.00', '1.00×'],
      ['eager starts / runs', '–', '300 / 300', '–'],
      ['workflow-task timeouts; duplicates / missing', '0; 0 / 0', '0; 0 / 0', '–'],
    ]);
    const loose = scenarioRows(report, 'Onboard, the loose raw-SDK floor');
    expect(loose[5]!.slice(1, 5)).to.deep.equal([
      "CPU ms: the flow's process (service; loose floor: worker)",
      '12.0',
      '6.00',
      '2.00×',
    ]);
    expect(renderReportBody(report)).not.to.include('floor_tight');
  });

  it('sets our variants beside the floor that carries what the contract adds, and that floor beside the tight one', () => {
    const report: BenchReport = {
      onboard: {
        hook_pglite: { phases: { c10: onboardPhase('service', 16, 3, 300, 8) } },
        floor_tight: { phases: { c10: onboardPhase('service', 10, 1, 300, 5) } },
        floor_contract: { phases: { c10: onboardPhase('service', 12.8, 1.5, 300, 7.2) } },
      },
    };
    const ours = scenarioRows(report, 'Onboard (signed hook → rules → HTTP), PGlite').map((row) =>
      row.slice(1, 5),
    );
    expect(ours).to.deep.include.members([
      ['CPU ms per execution, all processes', '16.0', '10.0', '1.60×'],
      ['CPU ms per execution, all processes (baseline: floor_contract)', '16.0', '12.8', '1.25×'],
      ['CPU ms: Temporal dev server (baseline: floor_contract)', '8.00', '7.20', '1.11×'],
    ]);
    const contract = scenarioRows(report, 'Onboard, the tight floor with what our contract adds').map((row) =>
      row.slice(1, 5),
    );
    expect(contract).to.deep.include.members([
      ['CPU ms per execution, all processes', '12.8', '10.0', '1.28×'],
      ['CPU ms: Temporal dev server', '7.20', '5.00', '1.44×'],
    ]);
    expect(contract.map((row) => row[0]).join('\n')).not.to.include('baseline: floor_contract');
  });

  it('shows what workflow code costs per replay of each history, with no baseline', () => {
    const report: BenchReport = {
      workflow_replay: {
        'execution-connector': { replays: 500, cpu_ms_per_replay: 5.3, workflow_promises_per_replay: 20 },
      },
    };
    expect(scenarioRows(report, 'Workflow code: a replay of `execution-connector`')).to.deep.equal([
      [
        'Workflow code: a replay of `execution-connector`',
        'CPU ms per replay',
        '5.30',
        '–',
        '–',
        '500 replays, no server',
      ],
      ['', 'promises of workflow code per replay', '20.0', '–', '–', ''],
    ]);
  });

  it("sets flow control beside the same flow without it, and workspace B beside A's backlog", () => {
    const cpu = (total: number) => ({ bench: total - 5, dev_server: 5, total });
    const report: BenchReport = {
      ...fixture(),
      'flow-control': {
        throughput: {
          runs: 2000,
          concurrency: 20,
          keys: 10,
          limit: 10,
          plain: { ...completion(40, 400, 1400), cpu_ms_per_run: cpu(30) },
          keyed: { ...completion(36, 440, 1500), cpu_ms_per_run: cpu(40), max_queued: 0 },
        },
        admission: {
          runs: 200,
          keys: 5,
          limit: 2,
          hold_ms: 50,
          trigger_errors: 0,
          handoff_ms: latency(80, 200),
          queue_wait_ms: latency(1500, 2500),
        },
        throttle: { runs: 200, limit_per_sec: 20, starts: { achieved_per_sec: 18.5 } },
        fairness: {
          backlog: 10000,
          limit: 5,
          trigger_errors: 2,
          enqueue_ms: 250000,
          drain_per_sec: 40,
          b_alone_ms: latency(60, 90),
          b_beside_backlog_ms: latency(63, 120),
        },
      },
    };
    const rows = tableRows(renderReportBody(report), 'Scenario');
    const from = rows.findIndex((row) => row[0]!.startsWith('Flow control'));
    expect(rows.slice(from, from + 11)).to.deep.equal([
      [
        'Flow control: a concurrency key (10 keys, limit 10) vs none',
        'completions/s',
        '36.0',
        '40.0',
        '0.90×',
        '2000 runs each, 20 at once',
      ],
      ['', 'CPU ms per run (service and load, dev server)', '40.0', '30.0', '1.33×', ''],
      ['', 'latency p50 (ms)', '440', '400', '1.10×', ''],
      [
        'Flow control: a limit that binds (5 keys, limit 2)',
        'place freed to next call p50 (ms)',
        '80.0',
        '–',
        '–',
        '200 runs, calls held 50 ms',
      ],
      ['', 'place freed to next call p99 (ms)', '200', '–', '–', ''],
      [
        'Flow control: a throttle of 20 per second (vs its limit)',
        'starts/s',
        '18.5',
        '20.0',
        '0.93×',
        '200 runs of one key',
      ],
      [
        "Workspace B's run beside workspace A's 10000 queued runs (vs B alone)",
        'B trigger to result p50 (ms)',
        '63.0',
        '60.0',
        '1.05×',
        "A: one key, limit 5; B's runs 1 at a time",
      ],
      ['', 'B trigger to result p99 (ms)', '120', '90.0', '1.33×', ''],
      ['', "A's runs all enqueued (s)", '250', '–', '–', ''],
      ['', "A's backlog drained (runs/s)", '40.0', '–', '–', ''],
      [
        'Webhook fan-out to 10 endpoints',
        'deliveries/s',
        '121',
        '–',
        '–',
        '100 runs × 10 endpoints, 16 at once',
      ],
    ]);
    expect(reportProblems(report)).to.include('flow-control fairness: 2 trigger errors');
  });

  it('checks the measured onboard variants and passes over the derived comparisons (tracing_cost)', () => {
    const report = fixture();
    const phase = { history: { runs: 10, completed: 9 } };
    report.onboard = {
      hook_pglite: { phases: { c10: phase } },
      tracing_cost: { phases: { c10: { cpu_ms_added_per_execution: 4.6 } } },
    } as unknown as BenchReport['onboard'];
    expect(reportProblems(report)).to.deep.equal(['onboard hook_pglite c10: 1 not completed']);
  });

  it('leaves out scenarios an older report lacks and shows figures JSON could not hold as n/a', () => {
    const report = fixture();
    delete report.webhooks;
    delete report.five_step_e2e;
    report.raw_start!.latency_ms.p99 = null;
    const rows = tableRows(renderReportBody(report), 'Scenario');
    expect(rows.map((row) => row[0]).filter(Boolean)).to.deep.equal([
      'Scenario',
      'Start: API trigger vs `client.workflow.start`',
      'Demo workflow, trigger to closed',
      'Read a 20-step execution: `GET` vs describe + history',
    ]);
    expect(rows[3]).to.deep.equal(['', 'latency p99 (ms)', '612', 'n/a', 'n/a', '']);
  });

  it('lays tables out as Prettier does, so docs/benchmarks.md stays formatted', async () => {
    const prettier = await import('prettier');
    const options = { ...(await prettier.resolveConfig(BENCHMARKS_PAGE)), parser: 'markdown' };
    const markdown = renderMarkdown({
      ...fixture(),
      'map-10k': mapFixture(),
      'parallel-5': parallelFixture(),
    });
    expect(await prettier.format(markdown, options)).to.equal(markdown);
    const table = markdownTable(['a', 'b'], [['x | y', '1']], ['left', 'right']);
    expect(await prettier.format(`${table}\n`, options)).to.equal(`${table}\n`);
  });

  it('replaces only the block between the markers, idempotently', () => {
    const page = `# Title\n\n## Performance\n\nText.\n\n${BENCH_START}\n\nold table\n\n${BENCH_END}\n\n## Next\n`;
    const once = replaceBenchBlock(page, 'new table');
    expect(once).to.equal(
      `# Title\n\n## Performance\n\nText.\n\n${BENCH_START}\n\nnew table\n\n${BENCH_END}\n\n## Next\n`,
    );
    expect(replaceBenchBlock(once, 'new table')).to.equal(once);
    expect(() => replaceBenchBlock('# Title\n', 'x')).to.throw(/bench:start/);
    expect(() => replaceBenchBlock(`${BENCH_END}\n${BENCH_START}\n`, 'x')).to.throw(/exactly one/);
    expect(() => replaceBenchBlock(`${BENCH_START}${BENCH_START}${BENCH_END}`, 'x')).to.throw(/exactly one/);
  });

  it('writes latest.md, the dated copies only when asked, and the block of the benchmarks page', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sy-bench-report-'));
    try {
      const pageFile = path.join(dir, 'benchmarks.md');
      fs.writeFileSync(pageFile, `# R\n\n${BENCH_START}\n${BENCH_END}\n`);
      const report = fixture();
      const written = writeReportFiles(report, { resultsDir: dir, pageFile, archive: false });
      expect(written.map((file) => path.basename(file))).to.deep.equal(['latest.md', 'benchmarks.md']);
      expect(fs.readFileSync(path.join(dir, 'latest.md'), 'utf8')).to.equal(renderMarkdown(report));
      expect(fs.readFileSync(pageFile, 'utf8')).to.include(renderReportBody(report));

      const again = writeReportFiles(report, { resultsDir: dir, pageFile, archive: true });
      expect(again.map((file) => path.basename(file))).to.deep.equal([
        'latest.md',
        '2026-11-21T22-04-24Z.json',
        '2026-11-21T22-04-24Z.md',
      ]);
      expect(JSON.parse(fs.readFileSync(path.join(dir, '2026-11-21T22-04-24Z.json'), 'utf8'))).to.deep.equal(
        report,
      );
      expect(fs.readdirSync(dir).filter((name) => name.endsWith('.tmp'))).to.deep.equal([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('docs/benchmarks.md holds the block that bench/results/latest.json renders (npm run bench:report)', () => {
    const report = JSON.parse(fs.readFileSync(path.join(RESULTS_DIR, 'latest.json'), 'utf8')) as BenchReport;
    const page = fs.readFileSync(BENCHMARKS_PAGE, 'utf8');
    expect(replaceBenchBlock(page, renderReportBody(report)), 'run `npm run bench:report`').to.equal(page);
  });

  it('names dated copies after the run, safely for every file system', () => {
    expect(archiveStamp('2026-11-21T22:04:24.186Z')).to.equal('2026-11-21T22-04-24Z');
    expect(archiveStamp('not a date')).to.match(/^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ$/);
  });
});
