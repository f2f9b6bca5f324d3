/** What every scenario receives, and the workload they share (the seeded demo workflow). */
import { CUSTOMER_ONBOARDING } from '../../processes/demo-definition';
import type { Definition } from '../../core/definitions/schema';
import { DEFAULT_WORKSPACE_ID } from '../../platform/store/workspaces';
import { WORKFLOW_ATTRIBUTE, WORKSPACE_ATTRIBUTE } from '../../core/search-attributes';
import type { ApiClient } from '../http-load';
import type { BenchStack } from '../stack';
import { quote } from '../visibility';

export interface BenchSettings {
  /** Measured operations per throughput scenario (BENCH_TRIGGERS). */
  triggers: number;
  /** Alternating rounds the throughput scenarios are split into (BENCH_ROUNDS). */
  rounds: number;
  /** Operations in flight at once (BENCH_CONCURRENCY). */
  concurrency: number;
  /** Unmeasured operations before each throughput scenario (BENCH_WARMUP). */
  warmup: number;
  /** Executions of the end-to-end scenario (BENCH_E2E). */
  e2e: number;
  /** Measured reads of one execution per contender in read_execution (BENCH_READS). */
  reads: number;
  /** Reads in flight at once in read_execution (BENCH_READ_CONCURRENCY). */
  readConcurrency: number;
  /** Executions per contender in five_step_e2e (BENCH_FIVE_STEP). */
  fiveStep: number;
  /** Alternating rounds five_step_e2e is split into (BENCH_FIVE_STEP_ROUNDS). */
  fiveStepRounds: number;
  /** Unmeasured executions per contender before five_step_e2e (BENCH_FIVE_STEP_WARMUP). */
  fiveStepWarmup: number;
  /** Measured executions of the webhooks delivery-latency part (BENCH_WEBHOOK_EXECUTIONS). */
  webhookExecutions: number;
  /** Executions in flight at once in the webhooks scenario (BENCH_WEBHOOK_CONCURRENCY). */
  webhookConcurrency: number;
  /** Unmeasured executions before the webhooks delivery-latency part (BENCH_WEBHOOK_WARMUP). */
  webhookWarmup: number;
  /** Executions of the webhooks fan-out part (BENCH_WEBHOOK_FANOUT_EXECUTIONS). */
  webhookFanoutExecutions: number;
  /** Endpoints every fan-out execution is delivered to (BENCH_WEBHOOK_FANOUT_ENDPOINTS). */
  webhookFanoutEndpoints: number;
}

export interface BenchContext {
  stack: BenchStack;
  settings: BenchSettings;
  /** Keep-alive HTTP client with the BOOTSTRAP key, one connection per concurrent caller. */
  api: ApiClient;
}

/** The seeded demo workflow (rules steps only, so every run succeeds without the network). */
export const DEMO_WORKFLOW_ID = CUSTOMER_ONBOARDING.id;
export const DEMO_WORKSPACE_ID = DEFAULT_WORKSPACE_ID;

/** The input schema of the benchmark's own workflows: a customer and a plan, as demoInput sends. */
export const CUSTOMER_INPUT_SCHEMA: NonNullable<Definition['input_schema']> = {
  type: 'object',
  required: ['customer', 'plan'],
  properties: { customer: { type: 'string' }, plan: { type: 'string' } },
};

/** The trigger body of operation `index`: both plans that succeed, alternately. */
export function demoInput(index: number): { customer: string; plan: string } {
  return { customer: `Customer ${index}`, plan: index % 2 === 0 ? 'starter' : 'enterprise' };
}

/** Visibility query of every execution of the demo workflow in the benchmark's workspace. */
export const DEMO_EXECUTIONS_QUERY = `${WORKSPACE_ATTRIBUTE.name} = ${quote(DEMO_WORKSPACE_ID)} AND ${WORKFLOW_ATTRIBUTE.name} = ${quote(DEMO_WORKFLOW_ID)}`;

/** `total` split into `parts` near-equal non-empty sizes. */
export function split(total: number, parts: number): number[] {
  const n = Math.max(1, Math.min(parts, total));
  return Array.from({ length: n }, (_, i) => Math.floor(total / n) + (i < total % n ? 1 : 0)).filter(
    (size) => size > 0,
  );
}

/** An integer of at least `min` from the environment variable `name`, `fallback` when it is unset or empty. */
export function intFromEnv(name: string, fallback: number, min = 1): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min)
    throw new Error(`${name} must be an integer of at least ${min}, got '${raw}'`);
  return value;
}
