/**
 * Reading one execution (docs/api.md#executions): describe (status, pending attempts, a workflow task being
 * retried, and whose it is), then the history (steps, and why a stuck run is stuck) of the run described,
 * strongly consistent, never a replay. Another workspace's execution, or an id that exists nowhere, is a
 * plain 404 decided by the describe alone: the history (which can be large) is fetched only for the
 * caller's own executions.
 */
import type { Services } from '../services';
import { callTemporal, isWorkflowNotFound } from '../../platform/temporal/errors';
import {
  decodeFailure,
  decodeHistory,
  mapExecutionWithAllRuns,
  shownRuns,
  withFirstRuns,
  type HistorySource,
} from './history-mapper';
import { showChunkItemSteps } from './chunk-steps';
import { QUEUED_ATTRIBUTE, WAITING_ATTRIBUTE } from '../../core/search-attributes';
import { executionNotFound, locateExecution } from './locate';
import type { ExecutionView } from './views';

/** The whole history: more than one call's worth. */
const HISTORY_TIMEOUT_MS = 10_000;

export async function readExecution(
  services: Services,
  workspaceId: string,
  executionId: string,
): Promise<ExecutionView> {
  const view = mapExecutionWithAllRuns(
    executionId,
    await readExecutionHistory(services, workspaceId, executionId),
  );
  // The items of a large map that the read shows: their steps are in their chunks' histories.
  await showChunkItemSteps(services, shownRuns(view.steps));
  return { ...view, steps: view.steps.map(withFirstRuns) };
}

/** What an execution is read from: its history and what describe tells of the open run. */
export async function readExecutionHistory(
  services: Services,
  workspaceId: string,
  executionId: string,
): Promise<HistorySource> {
  // Ownership first: describe is one small call, and answers 404 for other workspaces' ids.
  const { description } = await locateExecution(services, workspaceId, executionId);
  const { client, connection } = services.temporal;
  // The run just described (a newer run started since would not be the one whose ownership was checked).
  const handle = client.workflow.getHandle(executionId, description.runId);
  try {
    const history = await callTemporal(connection, () => handle.fetchHistory(), HISTORY_TIMEOUT_MS);
    const events = history.events ?? [];
    await decodeHistory(events, services.temporal.payloadCodecs);
    const pendingActivities = description.raw.pendingActivities ?? [];
    await Promise.all(
      pendingActivities.map((pending) => decodeFailure(pending.lastFailure, services.temporal.payloadCodecs)),
    );
    return {
      events,
      pendingActivities,
      waiting: description.typedSearchAttributes.get(WAITING_ATTRIBUTE) === true,
      queued: description.typedSearchAttributes.get(QUEUED_ATTRIBUTE) === true,
      pendingWorkflowTask: description.raw.pendingWorkflowTask,
      versioningInfo: description.raw.workflowExecutionInfo?.versioningInfo,
    };
  } catch (error) {
    if (isWorkflowNotFound(error)) throw executionNotFound(executionId);
    throw error;
  }
}
