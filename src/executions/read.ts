/**
 * Reading one execution (docs/api.md#executions): describe (status, pending attempts) and history (steps) in
 * parallel, strongly consistent, never a replay. Another workspace's execution is a plain 404.
 */
import { notFound } from '../errors';
import { EXECUTION_ID_PATTERN } from '../ids';
import type { Services } from '../services';
import { callTemporal, isWorkflowNotFound } from '../temporal/errors';
import { decodeFailure, decodeHistory, mapExecution } from '../temporal/history-mapper';
import { EXECUTION_WORKFLOW_TYPE } from '../../core/execution-types';
import { WAITING_ATTRIBUTE, WORKSPACE_ATTRIBUTE } from '../../core/search-attributes';
import type { ExecutionView } from './views';

/** describe + the whole history: more than one call's worth. */
const HISTORY_TIMEOUT_MS = 10_000;

const executionNotFound = (executionId: string) =>
  notFound('execution_not_found', `No execution '${executionId}' in this workspace.`);

export async function readExecution(
  services: Services,
  workspaceId: string,
  executionId: string,
): Promise<ExecutionView> {
  if (!EXECUTION_ID_PATTERN.test(executionId)) throw executionNotFound(executionId);
  const { client, connection } = services.temporal;
  const handle = client.workflow.getHandle(executionId);
  try {
    const [description, history] = await callTemporal(
      connection,
      () => Promise.all([handle.describe(), handle.fetchHistory()]),
      HISTORY_TIMEOUT_MS,
    );
    if (
      description.type !== EXECUTION_WORKFLOW_TYPE ||
      description.typedSearchAttributes.get(WORKSPACE_ATTRIBUTE) !== workspaceId
    ) {
      throw executionNotFound(executionId);
    }
    const events = history.events ?? [];
    await decodeHistory(events, services.temporal.payloadCodecs);
    const pendingActivities = description.raw.pendingActivities ?? [];
    await Promise.all(
      pendingActivities.map((pending) => decodeFailure(pending.lastFailure, services.temporal.payloadCodecs)),
    );
    return mapExecution(executionId, {
      events,
      pendingActivities,
      waiting: description.typedSearchAttributes.get(WAITING_ATTRIBUTE) === true,
    });
  } catch (error) {
    if (isWorkflowNotFound(error)) throw executionNotFound(executionId);
    throw error;
  }
}
