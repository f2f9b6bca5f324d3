/** Cancel a running or waiting execution (docs/api.md#cancel): a Temporal cancellation request. */
import { AppError } from '../errors';
import type { Services } from '../services';
import { callTemporal } from '../temporal/errors';
import { locateExecution } from './locate';

export async function cancelExecution(
  services: Services,
  workspaceId: string,
  executionId: string,
): Promise<void> {
  const { handle, status } = await locateExecution(services, workspaceId, executionId);
  if (status !== 'running' && status !== 'waiting') {
    throw new AppError(
      409,
      'execution_not_running',
      `Only a running or waiting execution can be canceled; this one is ${status}.`,
    );
  }
  await callTemporal(services.temporal.connection, () => handle.cancel());
}
