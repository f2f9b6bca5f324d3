/**
 * Event triggers (docs/events.md#event-triggers): for one stored event, each workflow whose latest version
 * has `trigger: {type: "event", event: <its name>}` and whose `if` holds over `{id, name, data}` starts one
 * execution with the event's data as input, through the trigger endpoint's own path (input_schema,
 * admission, search attributes). Data the input_schema refuses starts nothing; the event's read says why.
 *
 * Dispatch is at least once, so this runs again for an event after a crash or a failure half-way. It acts
 * once all the same: the execution id is derived from the workspace, workflow and event id (Temporal
 * refuses a second run of it), and each workflow's outcome is one row, recorded once, after which that
 * workflow is left alone.
 */
import type { Definition } from '../../core/definitions/schema';
import type { EventContext } from '../../core/events';
import { ExpressionError } from '../../core/expressions/errors';
import { isTruthy } from '../../core/expressions/evaluate';
import { pausingBudget, workspaceEvaluator } from '../../platform/compute/evaluation';
import { AppError } from '../../platform/errors';
import { eventExecutionId } from '../../platform/ids';
import {
  eventKey,
  recordTriggerOutcome,
  triggeredWorkflows,
  type ClaimedEvent,
  type TriggerOutcome,
} from '../../platform/store/events';
import type { WorkflowVersionRecord } from '../../platform/store/workflows';
import type { Services } from '../services';
import { triggerExecution } from '../executions/trigger';

type EventTrigger = Extract<NonNullable<Definition['trigger']>, { type: 'event' }>;
type TriggeredVersion = Pick<WorkflowVersionRecord, 'workflow_id' | 'version' | 'definition'>;

/** Refusals of the data, recorded on the event rather than retried: the same data is refused every time. */
const REFUSALS = new Set(['invalid_input', 'invalid_definition']);

/**
 * Starts the executions of each event's triggers that have not acted on it yet. What they did before is read
 * for the whole claim at once (its events whose names some trigger names).
 */
export async function startEventTriggers(
  services: Services,
  events: readonly ClaimedEvent[],
): Promise<(event: ClaimedEvent) => Promise<void>> {
  const workflowsOf = new Map<ClaimedEvent, TriggeredVersion[]>();
  for (const event of events) {
    const workflows = await services.reads.eventTriggeredWorkflows(event.workspace_id, event.name);
    if (workflows.length > 0) workflowsOf.set(event, workflows);
  }
  const acted = await triggeredWorkflows(services.db, [...workflowsOf.keys()]);
  return async (event) => {
    const workflows = workflowsOf.get(event);
    if (!workflows) return;
    const done = acted.get(eventKey(event.workspace_id, event.id));
    for (const workflow of workflows) {
      if (done?.has(workflow.workflow_id)) continue;
      const outcome = await triggerWorkflow(services, event, workflow);
      if (outcome)
        await recordTriggerOutcome(
          services.db,
          { workspaceId: event.workspace_id, eventId: event.id, workflowId: workflow.workflow_id },
          outcome,
        );
    }
  };
}

/**
 * What one workflow's trigger does with the event: the execution it started (or had started before), why
 * it started none, or undefined when its `if` does not hold (or the workflow is gone). Throws what may
 * pass (Temporal or the database unavailable, a 429 of the admission): the event is dispatched again later.
 */
async function triggerWorkflow(
  services: Services,
  event: ClaimedEvent,
  workflow: TriggeredVersion,
): Promise<TriggerOutcome | undefined> {
  const condition = (workflow.definition.trigger as EventTrigger).if;
  if (condition !== undefined) {
    try {
      if (!(await conditionHolds(services, event, condition))) return undefined;
    } catch (error) {
      if (!(error instanceof ExpressionError)) throw error;
      return {
        error: { code: 'expression_error', message: `The trigger's if failed: ${error.message}` },
      };
    }
  }
  try {
    const { executionId } = await triggerExecution(services, {
      workspaceId: event.workspace_id,
      workflowId: workflow.workflow_id,
      version: workflow.version,
      body: event.data,
      executionId: eventExecutionId(event.workspace_id, workflow.workflow_id, event.id),
      triggerType: 'event',
      event: { id: event.id, name: event.name },
    });
    return { executionId };
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    if (REFUSALS.has(error.code)) return { error: { code: error.code, message: error.message } };
    // Deleted since it was found: it has no trigger any more.
    if (error.code === 'workflow_not_found') return undefined;
    throw error;
  }
}

/** The trigger's `if` over the event, evaluated as a step's expressions are (limits, RE2, compute threads). */
async function conditionHolds(services: Services, event: ClaimedEvent, condition: string): Promise<boolean> {
  const context: EventContext = { id: event.id, name: event.name, data: event.data };
  const evaluate = workspaceEvaluator(services.compute, event.workspace_id);
  const budget = pausingBudget();
  return isTruthy(await evaluate(condition, context, {}, budget));
}
