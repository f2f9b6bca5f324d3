/**
 * The execution resources of the API (docs/api.md#executions), as plain types shared by mappers and routes.
 */
import type { TriggerType } from '../../core/definitions/schema';
import type { TriggerEvent, WaitingFor } from '../../core/execution-types';

export const EXECUTION_STATUSES = [
  'queued',
  'running',
  'waiting',
  'success',
  'failed',
  'canceled',
  'terminated',
  'timed_out',
] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];

export const STEP_STATUSES = ['running', 'waiting', 'success', 'failed', 'skipped', 'canceled'] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

export interface ErrorView {
  step: string | null;
  /** The containers around the failed step with their run keys, then the step; absent without a step. */
  path?: string[];
  code: string;
  message: string;
  /** child_failed: the child execution's error. */
  details?: unknown[];
}

/**
 * An execution's error as the API shows it: with a step, its `path` too (`[step]` at the top level; runs
 * recorded before containers existed kept none).
 */
export function errorViewOf(error: {
  step: string | null;
  path?: string[];
  code: string;
  message: string;
  details?: unknown[];
}): ErrorView {
  const view: ErrorView = { step: error.step, code: error.code, message: error.message };
  if (error.step !== null) view.path = error.path ?? [error.step];
  if (error.details) view.details = error.details;
  return view;
}

export interface ExecutionSummary {
  execution_id: string;
  workflow: string;
  workflow_version: number;
  status: ExecutionStatus;
  /** `workflow`: a child execution, started by its parent's workflow step (see `parent`). */
  trigger: { type: TriggerType | 'workflow' };
  /** A child execution: the execution and step that started it; null otherwise. */
  parent: { execution_id: string; step: string } | null;
  started_at: string;
  finished_at: string | null;
  duration_ms: number;
  error: ErrorView | null;
}

export interface StepView {
  id: string;
  name: string;
  kind: string;
  status: StepStatus;
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
  attempts: number;
  input: unknown;
  output: unknown;
  error: { code: string; message: string } | null;
  /** The trigger step of an event trigger's execution: the event that started it. */
  event?: TriggerEvent;
  /** The trigger step of a debounced execution whose wait ended: the triggers it took in. */
  coalesced?: number;
  /** While an attempt failed and the next one is scheduled. */
  next_attempt_at?: string;
  /** While a sleep step sleeps: its timer and when it fires. */
  waiting_for?: WaitingFor;
  /** A container step (parallel, map, switch, loop): how many runs it has (a map: one per item). */
  runs_total?: number;
  /** A container step: its runs in order (in an execution's read, the first RUNS_SHOWN of them). */
  runs?: RunView[];
}

/**
 * Statuses of a container's run. `pending`: a map item not started yet (at most `concurrency` run at once);
 * once the map has ended without starting it, `canceled`.
 */
export const RUN_STATUSES = ['pending', 'running', 'waiting', 'success', 'failed', 'canceled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** One run of a container: a parallel branch, a map item, the switch case taken, a loop iteration. */
export interface RunView {
  /** The branch id, the item index ("3"), the case id ("default" for the default steps), the iteration ("0"). */
  key: string;
  /** The containers around the run with their run keys, ending with this container and `key` (RunPath). */
  path: string[];
  status: RunStatus;
  started_at: string | null;
  finished_at: string | null;
  /** The run's steps that have started or were skipped, as in the execution's `steps`; none before it starts. */
  steps: StepView[];
}

/** Runs of a container that an execution's read shows; the rest through its runs list. */
export const RUNS_SHOWN = 20;

export const STALLED_REASONS = [
  'nondeterminism',
  'workflow_code_error',
  'workflow_task_timed_out',
  'workflow_task_failed',
] as const;
export type StalledReason = (typeof STALLED_REASONS)[number];

/** An open execution whose workflow task keeps failing, so nothing moves (src/executions/stalled.ts). */
export interface StalledView {
  reason: StalledReason;
  /** The failure's message only (no stack trace), truncated. */
  message: string;
  /** The attempt of the workflow task now pending: it failed or timed out attempts − 1 times. */
  attempts: number;
  /** The build its workflow tasks go to; null for runs of unversioned workers. */
  build_id: string | null;
  /** When the first failure of the streak happened. */
  since: string;
}

export interface ExecutionView extends ExecutionSummary {
  /** A rerun (docs/operations.md#bulk-operations): the execution whose input it ran again; null otherwise. */
  rerun_of: string | null;
  /**
   * Flow control (docs/flow-control.md#what-queued-means): when the run was queued, when it was admitted
   * (null while queued, or when it ended queued), and how long it was queued (to now while it is); all
   * null for a run that never queued.
   */
  queued_at: string | null;
  admitted_at: string | null;
  queued_ms: number | null;
  stalled: StalledView | null;
  /** When it succeeded: the definition's `output`, or the output of the last step that ran; null otherwise. */
  output: unknown;
  steps: StepView[];
}

export function durationMs(start: Date, end: Date | null | undefined, now: Date = new Date()): number {
  return Math.max(0, (end ?? now).getTime() - start.getTime());
}
