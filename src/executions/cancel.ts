/**
 * Cancel a queued, running or waiting execution (docs/api.md#cancel): a Temporal cancellation request. Temporal
 * records it in the run's history at once, and the workflow acts on it at its next workflow task, which
 * only a worker of the run's build takes: with none running, the API answers 503 `worker_unavailable`
 * and sends nothing (src/executions/worker-presence.ts).
 */
import { AppError, workerUnavailable } from '../../platform/errors';
import type { Services } from '../services';
import { callTemporal } from '../../platform/temporal/errors';
import { buildWithoutWorker } from './worker-presence';
import { locateExecution } from './locate';

export async function cancelExecution(
  services: Services,
  workspaceId: string,
  executionId: string,
): Promise<void> {
  const { handle, description, status } = await locateExecution(services, workspaceId, executionId);
  if (status !== 'queued' && status !== 'running' && status !== 'waiting') {
    throw new AppError(
      409,
      'execution_not_running',
      `Only a queued, running or waiting execution can be canceled; this one is ${status}.`,
    );
  }
  const absent = await buildWithoutWorker(services, description);
  if (absent) {
    throw workerUnavailable(
      absent.buildId,
      `No worker of build ${absent.buildId} is running to cancel execution '${executionId}'; the request ` +
        'did nothing. Start a worker of that build, or move the run onto a running build ' +
        '(docs/operations.md#a-run-whose-build-has-no-worker).',
    );
  }
  await callTemporal(services.temporal.connection, () => handle.cancel());
}
