/** Finding an execution the caller may see: its Temporal handle and description, or a plain 404. */
import type { WorkflowExecutionDescription, WorkflowHandle } from '@temporalio/client';
import { notFound, type AppError } from '../../platform/errors';
import { EXECUTION_ID_PATTERN } from '../../platform/ids';
import type { Services } from '../services';
import { callTemporal, isWorkflowNotFound } from '../../platform/temporal/errors';
import { applyDebounceEnd, debounceEndOf, decodeHistory, firstPayload } from './history-mapper';
import { EXECUTION_WORKFLOW_TYPE, type ExecutionInput } from '../../core/execution-types';
import { QUEUED_ATTRIBUTE, WAITING_ATTRIBUTE, WORKSPACE_ATTRIBUTE } from '../../core/search-attributes';
import { executionStatus } from './status';
import type { ExecutionStatus } from './views';

export const executionNotFound = (executionId: string): AppError =>
  notFound('execution_not_found', `No execution '${executionId}' in this workspace.`);

/** True when the description belongs to an execution of this workspace (another's is "not found"). */
export function isVisibleTo(description: WorkflowExecutionDescription, workspaceId: string): boolean {
  return (
    description.type === EXECUTION_WORKFLOW_TYPE &&
    description.typedSearchAttributes.get(WORKSPACE_ATTRIBUTE) === workspaceId
  );
}

export interface LocatedExecution {
  handle: WorkflowHandle;
  description: WorkflowExecutionDescription;
  status: ExecutionStatus;
}

export function statusOf(description: WorkflowExecutionDescription): ExecutionStatus {
  return executionStatus(description.status.code, {
    waiting: description.typedSearchAttributes.get(WAITING_ATTRIBUTE) === true,
    queued: description.typedSearchAttributes.get(QUEUED_ATTRIBUTE) === true,
  });
}

export async function locateExecution(
  services: Services,
  workspaceId: string,
  executionId: string,
): Promise<LocatedExecution> {
  if (!EXECUTION_ID_PATTERN.test(executionId)) throw executionNotFound(executionId);
  const { client, connection } = services.temporal;
  const handle = client.workflow.getHandle(executionId);
  try {
    const description = await callTemporal(connection, () => handle.describe());
    if (!isVisibleTo(description, workspaceId)) throw executionNotFound(executionId);
    return { handle, description, status: statusOf(description) };
  } catch (error) {
    if (isWorkflowNotFound(error)) throw executionNotFound(executionId);
    throw error;
  }
}

/** The workflow input of a run (its first history event): the definition snapshot and the input. */
export async function executionInputOf(
  services: Services,
  executionId: string,
  runId: string,
): Promise<ExecutionInput> {
  const { connection, namespace } = services.temporal;
  const page = await callTemporal(connection, () =>
    connection.workflowService.getWorkflowExecutionHistory({
      namespace,
      execution: { workflowId: executionId, runId },
      maximumPageSize: 1,
    }),
  );
  const started = page.history?.events?.[0]?.workflowExecutionStartedEventAttributes;
  if (!started) throw new Error(`The history of ${executionId} does not start with its input`);
  await decodeHistory(
    [{ workflowExecutionStartedEventAttributes: started }],
    services.temporal.payloadCodecs,
  );
  const input = firstPayload(started.input) as ExecutionInput;
  // A debounced run ran with the last coalesced trigger's input, which a later event of its history holds.
  if (input.debounce && !input.resume) {
    const history = await callTemporal(connection, () =>
      services.temporal.client.workflow.getHandle(executionId, runId).fetchHistory(),
    );
    const events = history.events ?? [];
    await decodeHistory(events, services.temporal.payloadCodecs);
    applyDebounceEnd(input, debounceEndOf(input, events));
  }
  return input;
}
