/**
 * What the API hands to the execution workflow, and what steps exchange with their activities.
 * Types only: both the API and the deterministic workflow code import this module.
 */
import type { Definition, TriggerType } from '../../src/definitions/schema';

/** Workflow type name of executions in Temporal. */
export const EXECUTION_WORKFLOW_TYPE = 'execution';

export interface ExecutionInput {
  workspaceId: string;
  /** The definition snapshot: edits to the workflow never change a run in flight, and a retry re-runs it. */
  workflow: { id: string; version: number; definition: Definition };
  trigger: {
    type: TriggerType;
    /** The request body as received, only when it differs from `input` (schema defaults filled in). */
    body?: unknown;
  };
  /** The validated input. */
  input: unknown;
}

export interface ExecutionResult {
  status: 'success';
  /** The rules step whose `stop` action ended the run early, if any. */
  stopped_at?: string;
}

/** The error the workflow fails with, also kept in the memo so that lists can show it without history. */
export interface ExecutionError {
  step: string | null;
  code: string;
  message: string;
}

/** Evaluation context of expressions and templates (CONTRACT §4). */
export interface ExpressionContext {
  input: unknown;
  steps: Record<string, { output: unknown; status: string }>;
  execution: { id: string; workflow: string; version: number };
}

export interface RuleSpec {
  when: string;
  output?: unknown;
  action?: 'continue' | 'fail' | 'stop';
  message?: string;
}

/** Input of the rules activity: the rules as written and the part of the context they read. */
export interface RulesActivityInput {
  rules: RuleSpec[];
  default?: unknown;
  data: Partial<ExpressionContext>;
}

export interface RulesActivityResult {
  /** Index of the first matching rule, or null when `default` applied. */
  matched: number | null;
  action: 'continue' | 'fail' | 'stop';
  output: unknown;
  message?: string;
}

/** A connector request after templates were resolved (secrets templates stay as written until the activity). */
export interface HttpRequestSpec {
  method: string;
  url: string;
  headers?: Record<string, string>;
  query?: Record<string, string | number | boolean>;
  body?: unknown;
  follow_redirects?: boolean;
}

export interface HttpResponseOutput {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/**
 * What a step activity receives besides its input. Kept out of the first argument so that the step's
 * recorded input (history, API) is exactly its resolved configuration.
 */
export interface StepMeta {
  workspaceId: string;
  /** JSON pointers of the strings in the input that hold `{{ secrets.NAME }}` templates. */
  secretPointers: string[];
}

/** The `ai` step's request, after templates (secrets templates stay as written until the activity). */
export interface AiRequestSpec {
  model: string | null;
  system: string | null;
  prompt: string;
  temperature: number | null;
  max_tokens: number | null;
  output_schema: Record<string, unknown> | null;
}

export interface AiOutput {
  text?: string;
  json?: unknown;
  model: string;
  usage: Record<string, number> | null;
}

/** What the `approval` activity records when an approval is requested. */
export interface ApprovalRequestSpec {
  message: unknown;
  /** The step's `timeout` (how long the decision may take), or null for no limit. */
  timeout: string | null;
}

/** Update `decide`: what the API sends when someone approves or rejects. */
export interface ApprovalDecisionRequest {
  step: string;
  decision: 'approve' | 'reject';
  comment: string | null;
  /** The id of the API key that decided. */
  decided_by: string;
}

/** The approval step's output once decided. */
export interface ApprovalDecision {
  decision: 'approved' | 'rejected';
  decided_by: string;
  comment: string | null;
  decided_at: string;
}

export const DECIDE_UPDATE = 'decide';
export const RETRY_SIGNAL = 'retry';

/**
 * Sent to the run a retry created (a reset run), which waits for it at the failed step: the run id
 * says which reset it belongs to, `input` corrects the input of the failed step and later ones.
 */
export interface RetrySignal {
  for_run: string;
  input?: unknown;
}

/** ApplicationFailure types (the `code` of step and execution errors) that the API shows as they are. */
export const STEP_ERROR_CODES = {
  ruleFailed: 'rule_failed',
  expression: 'expression_error',
  httpStatus: 'http_error',
  network: 'network_error',
  timeout: 'step_timed_out',
  destination: 'destination_not_allowed',
  responseTooLarge: 'response_too_large',
  invalidRequest: 'invalid_step_request',
  aiNotConfigured: 'ai_not_configured',
  aiProvider: 'ai_provider_error',
  aiInvalidOutput: 'ai_invalid_output',
  approvalRejected: 'approval_rejected',
  approvalTimedOut: 'approval_timed_out',
  stepNotWaiting: 'step_not_waiting',
  secretNotFound: 'secret_not_found',
  canceled: 'canceled',
  stepFailed: 'step_failed',
} as const;
