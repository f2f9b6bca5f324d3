/** Builders for workflow definitions and helpers to follow executions through the API. */
import { expect } from 'chai';
import { randomBase62 } from '../../platform/ids';
import type { ApiClient } from './stack';
import { waitFor } from './wait';

export const uniqueId = (prefix = 'wf'): string => `${prefix}-${randomBase62(8).toLowerCase()}`;

export interface StepSpec {
  id: string;
  kind: string;
  [key: string]: unknown;
}

export function rulesStep(id: string, rules: unknown[], extra: Record<string, unknown> = {}): StepSpec {
  return { id, kind: 'rules', rules, ...extra };
}

export function httpStep(
  id: string,
  request: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): StepSpec {
  return { id, kind: 'connector', connector: 'http', request, ...extra };
}

/** Fast retries so failing steps fail within a second or two. */
export const FAST_RETRY = { max_attempts: 3, initial_interval: '100ms', backoff: 1, max_interval: '100ms' };

export function definition(steps: StepSpec[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { id: uniqueId(), name: 'Test workflow', steps, ...extra };
}

/** Creates a workflow through the API and returns its id. */
export async function createWorkflow(api: ApiClient, body: Record<string, unknown>): Promise<string> {
  const res = await api.post('/v1/workflows', body);
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return res.body.id as string;
}

export async function trigger(api: ApiClient, workflowId: string, input: unknown = {}): Promise<string> {
  const res = await api.post(`/v1/workflows/${workflowId}/trigger`, input);
  expect(res.status, JSON.stringify(res.body)).to.equal(202);
  return res.body.execution_id as string;
}

export interface StepBody {
  id: string;
  name: string;
  kind: string;
  status: string;
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
  attempts: number;
  input: unknown;
  output: unknown;
  error: { code: string; message: string } | null;
  next_attempt_at?: string;
  /** A sleeping step: its timer (docs/api.md#executions). */
  waiting_for?: { type: string; until: string };
  /** A container step (docs/api.md#steps-that-hold-steps). */
  runs_total?: number;
  runs?: RunBody[];
}

/** One run of a container step. */
export interface RunBody {
  key: string;
  path: string[];
  status: string;
  started_at: string | null;
  finished_at: string | null;
  steps: StepBody[];
}

export interface ExecutionBody {
  /** When it succeeded: the definition's output, or the last step's. */
  output?: unknown;
  execution_id: string;
  workflow: string;
  workflow_version: number;
  status: string;
  trigger: { type: string };
  started_at: string;
  finished_at: string | null;
  duration_ms: number;
  error: { step: string | null; code: string; message: string } | null;
  /** Flow control: when it was queued and admitted, and for how long (null when it never queued). */
  queued_at?: string | null;
  admitted_at?: string | null;
  queued_ms?: number | null;
  stalled: {
    reason: string;
    message: string;
    attempts: number;
    build_id: string | null;
    since: string;
  } | null;
  steps: StepBody[];
}

export const FINAL_STATUSES = ['success', 'failed', 'canceled', 'terminated', 'timed_out'];

/** Polls GET /v1/executions/{id} until `done` holds (by default: a final status). */
export async function waitForExecution(
  api: ApiClient,
  executionId: string,
  done: (execution: ExecutionBody) => boolean = (e) => FINAL_STATUSES.includes(e.status),
  timeoutMs = 30_000,
): Promise<ExecutionBody> {
  let last: ExecutionBody | undefined;
  try {
    return await waitFor(
      async () => {
        const res = await api.get(`/v1/executions/${executionId}`);
        if (res.status !== 200)
          throw new Error(`GET execution answered ${res.status}: ${JSON.stringify(res.body)}`);
        last = res.body as ExecutionBody;
        return done(last) ? last : undefined;
      },
      { timeoutMs, what: `execution ${executionId}` },
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}; last seen: ${JSON.stringify(last)}`);
  }
}

export function stepOf(execution: ExecutionBody, id: string): StepBody {
  const step = execution.steps.find((s) => s.id === id);
  if (!step) throw new Error(`No step "${id}" in ${JSON.stringify(execution.steps.map((s) => s.id))}`);
  return step;
}

/** Expects the contract's error body with this status and code. */
export function expectError(res: { status: number; body: unknown }, status: number, code: string): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  const body = res.body as {
    error?: { code?: string; message?: string; request_id?: string; details?: unknown };
  };
  expect(body.error?.code, JSON.stringify(res.body)).to.equal(code);
  expect(body.error?.message).to.be.a('string').and.not.equal('');
  expect(body.error?.request_id).to.be.a('string').and.not.equal('');
  expect(body.error?.details).to.be.an('array');
}
