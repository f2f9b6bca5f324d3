/**
 * `npm run bench`: runs the onboard scenario on stacks of its own, map-10k and parallel-5 on one more
 * (scenarios/composition-stack.ts), then starts its own stack (Temporal dev server + one service process
 * on PGlite) and runs every other scenario against it in one go, and prints one JSON document on stdout (also written to
 * bench/results/latest.json, with its Markdown table in latest.md and docs/benchmarks.md: bench/report.ts).
 * Progress and logs go to stderr. It measures only: no thresholds.
 *
 * Sizes: BENCH_TRIGGERS (starts per throughput scenario), BENCH_ROUNDS, BENCH_CONCURRENCY, BENCH_WARMUP,
 * BENCH_E2E, BENCH_READS and BENCH_READ_CONCURRENCY (read_execution), BENCH_FIVE_STEP,
 * BENCH_FIVE_STEP_ROUNDS and BENCH_FIVE_STEP_WARMUP (five_step_e2e); BENCH_WEBHOOK_EXECUTIONS,
 * BENCH_WEBHOOK_CONCURRENCY, BENCH_WEBHOOK_WARMUP, BENCH_WEBHOOK_FANOUT_EXECUTIONS and
 * BENCH_WEBHOOK_FANOUT_ENDPOINTS (webhooks); BENCH_FAIRNESS_FLOOD, BENCH_FAIRNESS_SLOW_MS,
 * BENCH_FAIRNESS_SAMPLES and BENCH_FAIRNESS_CONCURRENCY (fairness); BENCH_LOG_LEVEL for the service's logs (warn);
 * BENCH_DATABASE_URL: the in-process stack on that PostgreSQL database (an empty one) instead of PGlite;
 * map-10k, parallel-5, events, flow-control and workflow_replay read theirs in their modules (BENCH_MAP_*, BENCH_PARALLEL_*,
 * BENCH_EVENT_*, BENCH_FC_*); workflow_replay BENCH_REPLAYS, BENCH_REPLAY_WARMUP and BENCH_REPLAY_HISTORIES.
 * BENCH_ARCHIVE=1 also keeps dated copies of the results. BENCH_SCENARIOS=console_execution (not in the full run):
 * the console's 200-step run page in Chromium (BENCH_CONSOLE_LOADS warm loads).
 * A scenario is a function of the BenchContext returning its JSON section; add new ones to `main`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../platform/paths';
import { describeEnvironment } from './environment';
import { createApiClient } from './http-load';
import { writeReportFiles } from './report';
import type { BenchContext, BenchSettings } from './scenarios/common';
import { benchConsoleExecution } from './scenarios/console-execution';
import { benchEndToEnd } from './scenarios/end-to-end';
import { benchEvents } from './scenarios/events';
import { benchFairness } from './scenarios/fairness';
import { benchFiveStep } from './scenarios/five-step';
import { benchFlowControl } from './scenarios/flow-control';
import { benchIsolation } from './scenarios/isolation';
import { startCompositionStack } from './scenarios/composition-stack';
import { benchMap10k } from './scenarios/map-10k';
import { benchOnboard, onboardSettingsFromEnv } from './scenarios/onboard';
import { benchParallel5 } from './scenarios/parallel-5';
import { benchReadExecution } from './scenarios/read-execution';
import { benchApiVersusRaw } from './scenarios/trigger';
import { benchWebhooks } from './scenarios/webhooks';
import { benchWorkflowReplay, workflowReplaySettingsFromEnv } from './scenarios/workflow-replay';
import { progress, stackDescription, startBenchStack } from './stack';
import { createLogger } from '../platform/logger';
import { ensureTemporalCli } from '../platform/temporal/cli';

const RESULTS_FILE = path.join(projectRoot, 'bench', 'results', 'latest.json');
/** Where a run of some scenarios only (BENCH_SCENARIOS) writes its results (not kept in git). */
const SUBSET_RESULTS_FILE = path.join(projectRoot, 'bench', 'results', 'subset.json');

function nonNegativeIntFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0)
    throw new Error(`${name} must be a non-negative integer, got '${raw}'`);
  return value;
}

function readSettings(): BenchSettings {
  return {
    triggers: nonNegativeIntFromEnv('BENCH_TRIGGERS', 1000),
    rounds: Math.max(1, nonNegativeIntFromEnv('BENCH_ROUNDS', 4)),
    concurrency: Math.max(1, nonNegativeIntFromEnv('BENCH_CONCURRENCY', 32)),
    warmup: nonNegativeIntFromEnv('BENCH_WARMUP', 100),
    e2e: nonNegativeIntFromEnv('BENCH_E2E', 500),
    reads: nonNegativeIntFromEnv('BENCH_READS', 500),
    readConcurrency: Math.max(1, nonNegativeIntFromEnv('BENCH_READ_CONCURRENCY', 1)),
    fiveStep: nonNegativeIntFromEnv('BENCH_FIVE_STEP', 300),
    fiveStepRounds: Math.max(1, nonNegativeIntFromEnv('BENCH_FIVE_STEP_ROUNDS', 2)),
    fiveStepWarmup: nonNegativeIntFromEnv('BENCH_FIVE_STEP_WARMUP', 32),
    webhookExecutions: nonNegativeIntFromEnv('BENCH_WEBHOOK_EXECUTIONS', 300),
    webhookConcurrency: Math.max(1, nonNegativeIntFromEnv('BENCH_WEBHOOK_CONCURRENCY', 16)),
    webhookWarmup: nonNegativeIntFromEnv('BENCH_WEBHOOK_WARMUP', 16),
    webhookFanoutExecutions: nonNegativeIntFromEnv('BENCH_WEBHOOK_FANOUT_EXECUTIONS', 100),
    webhookFanoutEndpoints: Math.max(1, nonNegativeIntFromEnv('BENCH_WEBHOOK_FANOUT_ENDPOINTS', 10)),
  };
}

function writeResults(report: unknown, file: string): string {
  const json = `${JSON.stringify(report, null, 2)}\n`;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const staging = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(staging, json);
  fs.renameSync(staging, file);
  return json;
}

/** The scenarios that run against the in-process stack (bench/stack.ts). */
const STACK_SCENARIOS = [
  'trigger',
  'end_to_end',
  'read_execution',
  'five_step_e2e',
  'webhooks',
  'isolation',
  'fairness',
  'events',
  'flow-control',
] as const;
/** The scenarios that run on the composition stack (bench/scenarios/composition-stack.ts), beside their floors. */
const COMPOSITION_SCENARIOS = ['map-10k', 'parallel-5'] as const;
const SCENARIOS = ['onboard', 'workflow_replay', ...COMPOSITION_SCENARIOS, ...STACK_SCENARIOS] as const;
/** Former names BENCH_SCENARIOS still accepts. */
const ALIASES: Readonly<Record<string, Scenario>> = { large_map: 'map-10k' };
/**
 * Scenarios that run only when BENCH_SCENARIOS names them, on the in-process stack: console_execution
 * (the console's 200-step run page in Chromium) measures a browser, not the service's throughput.
 */
const OPTIONAL_SCENARIOS = ['console_execution'] as const;
type Scenario = (typeof SCENARIOS)[number] | (typeof OPTIONAL_SCENARIOS)[number];

/** BENCH_SCENARIOS: a comma-separated subset of SCENARIOS and OPTIONAL_SCENARIOS (SCENARIOS by default). */
function selectedScenarios(): Set<Scenario> {
  const raw = process.env['BENCH_SCENARIOS'];
  if (!raw) return new Set(SCENARIOS);
  const names = raw.split(',').map((name) => {
    const trimmed = name.trim();
    return Object.hasOwn(ALIASES, trimmed) ? ALIASES[trimmed]! : trimmed;
  });
  const known: readonly string[] = [...SCENARIOS, ...OPTIONAL_SCENARIOS];
  for (const name of names)
    if (!known.includes(name))
      throw new Error(`BENCH_SCENARIOS: unknown scenario "${name}" (${known.join(', ')})`);
  return new Set(names as Scenario[]);
}

async function runScenarios(ctx: BenchContext, selected: Set<Scenario>) {
  return {
    ...(selected.has('trigger') ? await benchApiVersusRaw(ctx) : {}),
    ...(selected.has('end_to_end') ? { end_to_end: await benchEndToEnd(ctx) } : {}),
    ...(selected.has('read_execution') ? { read_execution: await benchReadExecution(ctx) } : {}),
    ...(selected.has('five_step_e2e') ? { five_step_e2e: await benchFiveStep(ctx) } : {}),
    ...(selected.has('webhooks') ? { webhooks: await benchWebhooks(ctx) } : {}),
    ...(selected.has('isolation') ? { isolation: await benchIsolation(ctx) } : {}),
    ...(selected.has('fairness') ? { fairness: await benchFairness(ctx) } : {}),
    ...(selected.has('events') ? { events: await benchEvents(ctx) } : {}),
    ...(selected.has('flow-control') ? { 'flow-control': await benchFlowControl(ctx) } : {}),
    ...(selected.has('console_execution')
      ? {
          console_execution: await benchConsoleExecution(
            ctx,
            nonNegativeIntFromEnv('BENCH_CONSOLE_LOADS', 10),
          ),
        }
      : {}),
  };
}

/** map-10k and parallel-5, on one composition stack started for them (none when neither is selected). */
async function runCompositionScenarios(selected: Set<Scenario>) {
  if (!COMPOSITION_SCENARIOS.some((scenario) => selected.has(scenario))) return {};
  const stack = await startCompositionStack();
  try {
    return {
      ...(selected.has('map-10k') ? { 'map-10k': await benchMap10k(stack) } : {}),
      ...(selected.has('parallel-5') ? { 'parallel-5': await benchParallel5(stack) } : {}),
    };
  } finally {
    progress('stopping the composition stack');
    await stack.stop();
  }
}

async function main(): Promise<void> {
  const settings = readSettings();
  const selected = selectedScenarios();
  const began = Date.now();
  const loadBefore = os.loadavg();
  // First, on stacks of its own (the service as `npm start` runs it), before the in-process stack exists.
  const onboard = selected.has('onboard') ? await benchOnboard(onboardSettingsFromEnv()) : undefined;
  // In child processes of its own, no stack.
  const workflowReplay = selected.has('workflow_replay')
    ? await benchWorkflowReplay(workflowReplaySettingsFromEnv())
    : undefined;
  const composition = await runCompositionScenarios(selected);
  const needsStack = [...STACK_SCENARIOS, ...OPTIONAL_SCENARIOS].some((scenario) => selected.has(scenario));
  let results: Awaited<ReturnType<typeof runScenarios>> = {};
  let environment: Awaited<ReturnType<typeof describeEnvironment>>;
  if (needsStack) {
    const starting = startBenchStack();
    const interrupted = () => {
      progress('interrupted: stopping the stack');
      void starting
        .then((stack) => stack.stop())
        .catch(() => undefined)
        .finally(() => process.exit(130));
    };
    process.once('SIGINT', interrupted);
    process.once('SIGTERM', interrupted);
    const stack = await starting;
    const api = createApiClient(stack.baseUrl, stack.apiKey, settings.concurrency);
    try {
      results = await runScenarios({ stack, settings, api }, selected);
      environment = await describeEnvironment(stackDescription(stack), loadBefore);
    } finally {
      progress('stopping the stack');
      await api.close();
      await stack.stop();
    }
  } else {
    environment = await describeEnvironment(
      { cliPath: await ensureTemporalCli(process.env['TEMPORAL_CLI_PATH'], createLogger('silent')) },
      loadBefore,
    );
  }
  const report = {
    benchmark: 'switchyard',
    settings,
    scenarios: [...selected],
    ...(onboard ? { onboard } : {}),
    ...(workflowReplay ? { workflow_replay: workflowReplay } : {}),
    ...composition,
    ...results,
    environment,
    duration_s: Math.round((Date.now() - began) / 1000),
  };
  if (selected.size < SCENARIOS.length || OPTIONAL_SCENARIOS.some((scenario) => selected.has(scenario))) {
    // A subset does not replace the full results (latest.json, latest.md, docs/benchmarks.md's table).
    process.stdout.write(writeResults(report, SUBSET_RESULTS_FILE));
    progress(`written to ${path.relative(process.cwd(), SUBSET_RESULTS_FILE)}`);
    return;
  }
  process.stdout.write(writeResults(report, RESULTS_FILE));
  for (const file of [RESULTS_FILE, ...writeReportFiles(report)])
    progress(`written to ${path.relative(process.cwd(), file) || file}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    progress(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
