/**
 * A trigger of a definition with `debounce` (docs/flow-control.md#debounce): its key is evaluated over the
 * input, then the trigger either makes the key's new waiting execution (whose run this starts, queued from
 * its first moment) or coalesces into the waiting one, replacing its input; either way it answers that
 * execution's id. The rows and their locking are platform/store/debounces.ts; the run's wait is
 * workers/workflows/debounce.ts.
 *
 * Nothing accepted is lost: the row is committed before the run is started, and a run that a dying process
 * never started is started by the sweeper (debounce-sweeper.ts) from the row's `start`.
 */
import { AppError } from '../../platform/errors';
import { pausingBudget, workspaceEvaluator } from '../../platform/compute/evaluation';
import { closeDebounce, debounceTrigger, markDebounceStarted } from '../../platform/store/debounces';
import { isWorkflowRunning } from '../../platform/temporal/run-open';
import type { Services } from '../services';
import type { ExecutionInput } from '../../core/execution-types';
import { ExpressionError } from '../../core/expressions/errors';
import { DEFAULT_LIMITS } from '../../core/expressions/limits';
import { admissionKeyOf } from '../../core/flow-control';
import { durationMs } from '../../core/step-defaults';

/** A key is a small expression over the input: the same budget as the worker's flow control keys. */
const KEY_LIMITS = { ...DEFAULT_LIMITS, maxSteps: 5_000 };

export interface DebounceStart {
  executionId: string;
  /** An Idempotency-Key sent with the trigger. */
  idempotencyKey?: string;
}

/**
 * Debounces the trigger; `start` starts the run of a new execution (trigger.ts), which `input.debounce` makes
 * wait. Returns the execution the trigger belongs to.
 */
export async function debounce(
  services: Services,
  input: ExecutionInput,
  request: DebounceStart,
  start: (executionId: string, input: ExecutionInput) => Promise<boolean>,
): Promise<{ executionId: string }> {
  const settings = input.workflow.definition.debounce!;
  const key = await keyOf(services, input, settings.key);
  const debounced: ExecutionInput = { ...input, debounce: true };
  const result = await debounceTrigger(services.db, {
    workspace_id: input.workspaceId,
    workflow_id: input.workflow.id,
    key,
    candidate_id: request.executionId,
    input: input.input,
    ...(input.trigger.body !== undefined && { body: input.trigger.body }),
    ...(input.trigger.event && { event: input.trigger.event }),
    period_ms: durationMs(settings.period),
    ...(settings.max_wait !== undefined && { max_wait_ms: durationMs(settings.max_wait) }),
    start: debounced,
    ...(request.idempotencyKey !== undefined && { idempotency_key: request.idempotencyKey }),
  });
  if (result.outcome === 'created')
    await startOrClose(services, result.execution_id, () => start(result.execution_id, debounced));
  return { executionId: result.execution_id };
}

/**
 * Starts a new row's run and marks it started. When Temporal has a run of that id already: a live one (the
 * sweeper started it first) keeps the row; a closed one (a signed hook's delivery repeated after its run
 * ended, the row gone with it) must not collect triggers, so the row goes.
 */
export async function startOrClose(
  services: Services,
  executionId: string,
  start: () => Promise<boolean>,
): Promise<void> {
  if ((await start()) || (await isWorkflowRunning(services.temporal, executionId)))
    await markDebounceStarted(services.db, executionId);
  else await closeDebounce(services.db, executionId);
}

/** The trigger's key: null without a key expression; an evaluation error is the caller's 400. */
async function keyOf(services: Services, input: ExecutionInput, expression: string | undefined) {
  if (expression === undefined) return null;
  const evaluate = workspaceEvaluator(services.compute, input.workspaceId);
  const budget = pausingBudget();
  try {
    return admissionKeyOf(await evaluate(expression, { input: input.input }, KEY_LIMITS, budget));
  } catch (error) {
    if (!(error instanceof ExpressionError)) throw error;
    throw new AppError(
      400,
      'invalid_input',
      `The definition's debounce key "${error.expression}" failed on this input: ${error.message}`,
      { details: [{ path: '/debounce/key', message: error.message }] },
    );
  }
}
