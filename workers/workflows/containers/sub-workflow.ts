/**
 * The `workflow` step (docs/definitions.md#composition): starts an execution of another workflow of the
 * workspace as a Temporal child workflow, whose workflow id is the child's execution id, so that it is an
 * execution of its own (listed, read, canceled like any other) with `parent` naming this step.
 * `prepare_child` (workers/activities/sub-workflow.ts) has read and checked what the child starts with.
 *
 * `wait: true` (default): the step ends when the child does: output {execution_id, status, output}; a child
 * that does not succeed fails the step with `child_failed` and the child's error in `details`. Canceling
 * the parent cancels the child (parent close policy REQUEST_CANCEL). `wait: false`: the step succeeds once
 * the child has started, with {execution_id}; the child lives on whatever the parent does (ABANDON).
 */
import {
  ApplicationFailure,
  ChildWorkflowFailure,
  isCancellation,
  ParentClosePolicy,
  proxyLocalActivities,
  startChild,
  uuid4,
} from '@temporalio/workflow';
import type { Duration } from '@temporalio/common';
import type { Activities } from '../../activities';
import type { WorkflowStep } from '../../../core/definitions/schema';
import type { ExecutionError } from '../../../core/error-detail';
import {
  EXECUTION_WORKFLOW_TYPE,
  STEP_ERROR_CODES,
  type ExecutionResult,
} from '../../../core/execution-types';
import { workspacePriority } from '../../../core/fairness';
import { executionSearchAttributes } from '../../../core/search-attributes';
import { contextFor } from '../batches';
import { errorPath, frameContext, StepFailure, type Frame, type Run } from '../frame';

const { prepare_child } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '1m',
  // A refusal is a result; what throws is the worker's trouble (the database), retried until it is over.
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
});

export async function runSubWorkflow(
  run: Run,
  frame: Frame,
  step: WorkflowStep,
  depth: number,
): Promise<unknown> {
  const fail = (error: Omit<ExecutionError, 'step' | 'path'>): never => {
    throw new StepFailure({ step: step.id, path: errorPath(frame, step.id), ...error });
  };
  const { input: template, ...rest } = step;
  const prepared = await prepare_child({
    workspace_id: run.workspaceId,
    step: { ...rest, ...(template !== undefined && { input: template }) },
    context: contextFor(frameContext(run, frame), [template ?? null]),
    parent: {
      execution_id: run.context.execution.id,
      step: step.id,
      depth: depth + 1,
      ...(frame.path.length > 0 && { path: frame.path }),
    },
  });
  if ('error' in prepared) return fail(prepared.error);
  const child = prepared.child;
  const childId = `ex_${uuid4().replace(/-/g, '')}`;
  const wait = step.wait !== false;
  const handle = await startChild(EXECUTION_WORKFLOW_TYPE, {
    workflowId: childId,
    args: [child],
    parentClosePolicy: wait ? ParentClosePolicy.REQUEST_CANCEL : ParentClosePolicy.ABANDON,
    typedSearchAttributes: executionSearchAttributes(child),
    memo: { parent: { execution_id: run.context.execution.id, step: step.id } },
    priority: workspacePriority(run.workspaceId),
    staticSummary: `${child.workflow.definition.name ?? child.workflow.id} (${child.workflow.id} v${child.workflow.version}), from step "${step.id}" of ${run.context.execution.id}`,
    ...(child.workflow.definition.timeout !== undefined && {
      workflowExecutionTimeout: child.workflow.definition.timeout as Duration,
    }),
  });
  if (!wait) return { execution_id: childId };
  try {
    const result = (await handle.result()) as ExecutionResult;
    return { execution_id: childId, status: 'success', output: result.output ?? null };
  } catch (error) {
    if (isCancellation(error) || !(error instanceof ChildWorkflowFailure)) throw error;
    const cause = error.cause;
    const childError =
      cause instanceof ApplicationFailure && cause.details?.[0]
        ? (cause.details[0] as ExecutionError)
        : { step: null, code: cause?.name ?? 'failed', message: cause?.message ?? error.message };
    return fail({
      code: STEP_ERROR_CODES.childFailed,
      message: `Child execution ${childId} did not succeed: ${childError.message}`,
      details: [{ execution_id: childId, ...childError }],
    });
  }
}
