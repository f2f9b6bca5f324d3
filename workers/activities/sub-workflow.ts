/**
 * The `prepare_child` local activity: what a workflow step (docs/definitions.md#composition) needs before its
 * workflow code starts the child execution. It resolves the step's `input` templates, reads the child's
 * definition version (latest unless `version`), and validates the input against the child's input_schema
 * in the workspace's name, as the trigger endpoint does. Its answer is recorded in history, so the child
 * starts with exactly what was checked.
 */
import {
  MAX_CHILD_DEPTH,
  STEP_ERROR_CODES,
  type ChildPreparation,
  type ChildRequest,
} from '../../core/execution-types';
import { ExpressionError } from '../../core/expressions/errors';
import { DEFAULT_LIMITS } from '../../core/expressions/limits';
import { resolveTemplates } from '../../core/expressions/templates';
import type { ComputePool } from '../../platform/compute/pool';
import { SchemaError } from '../../core/definitions/input-schema';
import type { SchemaValidation } from '../../platform/compute/schemas';
import type { WorkflowVersionRecord } from '../../platform/store/workflows';
import { pausingBudget, workspaceEvaluator } from '../../platform/compute/evaluation';
import { runDefinition } from '../../core/definitions/run-definition';

export interface SubWorkflowDeps {
  compute: ComputePool;
  schemas: SchemaValidation;
  /** A version of a workflow of the workspace (the latest when `version` is undefined). */
  workflowVersion(
    workspaceId: string,
    workflowId: string,
    version?: number,
  ): Promise<WorkflowVersionRecord | undefined>;
}

export function createChildPreparer(deps: SubWorkflowDeps) {
  return async function prepare_child(request: ChildRequest): Promise<ChildPreparation> {
    const at = new Date().toISOString();
    const fail = (code: string, message: string): ChildPreparation => ({ at, error: { code, message } });
    const { step, parent } = request;
    if (parent.depth > MAX_CHILD_DEPTH)
      return fail(
        STEP_ERROR_CODES.childDepthExceeded,
        `Step "${step.id}" would start an execution ${parent.depth} levels deep; children nest at most ${MAX_CHILD_DEPTH} deep.`,
      );
    const record = await deps.workflowVersion(request.workspace_id, step.workflow, step.version);
    if (!record)
      return fail(
        STEP_ERROR_CODES.workflowNotFound,
        step.version === undefined
          ? `Step "${step.id}": no workflow '${step.workflow}' in this workspace.`
          : `Step "${step.id}": no version ${step.version} of workflow '${step.workflow}' in this workspace.`,
      );
    let input: unknown;
    try {
      input = await resolveTemplates(step.input ?? {}, request.context, {
        limits: { ...DEFAULT_LIMITS, maxSteps: 50_000 },
        budget: pausingBudget(),
        evaluate: workspaceEvaluator(deps.compute, request.workspace_id),
      });
    } catch (error) {
      if (error instanceof ExpressionError)
        return fail(STEP_ERROR_CODES.expression, `Expression "${error.expression}" failed: ${error.message}`);
      throw error;
    }
    const schema = record.definition.input_schema;
    if (schema) {
      let checked;
      try {
        checked = await deps.schemas.validate(request.workspace_id, schema, input);
      } catch (error) {
        if (!(error instanceof SchemaError)) throw error;
        return fail(
          STEP_ERROR_CODES.invalidInput,
          `Version ${record.version} of '${record.workflow_id}' has an input_schema that is no longer accepted: ${error.message}.`,
        );
      }
      const [first] = checked.problems;
      if (first)
        return fail(
          STEP_ERROR_CODES.invalidInput,
          `The input of step "${step.id}" does not match the input_schema of '${record.workflow_id}': ${first.path || '/'} ${first.message}.`,
        );
      input = checked.value;
    }
    return {
      at,
      child: {
        workspaceId: request.workspace_id,
        workflow: {
          id: record.workflow_id,
          version: record.version,
          definition: runDefinition(record.definition),
        },
        trigger: { type: 'workflow' },
        input,
        parent,
      },
    };
  };
}
