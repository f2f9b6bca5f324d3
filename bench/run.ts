/**
 * `npm run bench`: starts its own stack (Temporal dev server + one service process on PGlite), runs
 * every scenario against it in one go, and prints one JSON document on stdout (also written to
 * bench/results/latest.json, with its Markdown table in latest.md and the README: bench/report.ts).
 * Progress and logs go to stderr. It measures only: no thresholds.
 *
 * Sizes: BENCH_TRIGGERS (starts per throughput scenario), BENCH_ROUNDS, BENCH_CONCURRENCY, BENCH_WARMUP,
 * BENCH_E2E, BENCH_READS and BENCH_READ_CONCURRENCY (read_execution), BENCH_FIVE_STEP,
 * BENCH_FIVE_STEP_ROUNDS and BENCH_FIVE_STEP_WARMUP (five_step_e2e); BENCH_WEBHOOK_EXECUTIONS,
 * BENCH_WEBHOOK_CONCURRENCY, BENCH_WEBHOOK_WARMUP, BENCH_WEBHOOK_FANOUT_EXECUTIONS and
 * BENCH_WEBHOOK_FANOUT_ENDPOINTS (webhooks); BENCH_LOG_LEVEL for the service's logs (warn);
 * BENCH_ARCHIVE=1 also keeps dated copies of the results.
 * A scenario is a function of the BenchContext returning its JSON section; add new ones to `main`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../src/paths';
import { describeEnvironment } from './environment';
import { createApiClient } from './http-load';
import { writeReportFiles } from './report';
import type { BenchContext, BenchSettings } from './scenarios/common';
import { benchEndToEnd } from './scenarios/end-to-end';
import { benchFiveStep } from './scenarios/five-step';
import { benchReadExecution } from './scenarios/read-execution';
import { benchApiVersusRaw } from './scenarios/trigger';
import { benchWebhooks } from './scenarios/webhooks';
import { progress, startBenchStack } from './stack';

const RESULTS_FILE = path.join(projectRoot, 'bench', 'results', 'latest.json');

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

function writeResults(report: unknown): string {
  const json = `${JSON.stringify(report, null, 2)}\n`;
  fs.mkdirSync(path.dirname(RESULTS_FILE), { recursive: true });
  const staging = `${RESULTS_FILE}.${process.pid}.tmp`;
  fs.writeFileSync(staging, json);
  fs.renameSync(staging, RESULTS_FILE);
  return json;
}

async function runScenarios(ctx: BenchContext) {
  return {
    ...(await benchApiVersusRaw(ctx)),
    end_to_end: await benchEndToEnd(ctx),
    read_execution: await benchReadExecution(ctx),
    five_step_e2e: await benchFiveStep(ctx),
    webhooks: await benchWebhooks(ctx),
  };
}

async function main(): Promise<void> {
  const settings = readSettings();
  const began = Date.now();
  const loadBefore = os.loadavg();
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
    const results = await runScenarios({ stack, settings, api });
    const report = {
      benchmark: 'switchyard',
      settings,
      ...results,
      environment: await describeEnvironment(stack, loadBefore),
      duration_s: Math.round((Date.now() - began) / 1000),
    };
    process.stdout.write(writeResults(report));
    for (const file of [RESULTS_FILE, ...writeReportFiles(report)])
      progress(`written to ${path.relative(process.cwd(), file) || file}`);
  } finally {
    progress('stopping the stack');
    await api.close();
    await stack.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    progress(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
