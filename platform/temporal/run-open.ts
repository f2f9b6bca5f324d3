/** Whether a workflow's run is open in Temporal (a repair's check before it treats a run as gone). */
import type { TemporalConnection } from './connection';
import { callTemporal, isWorkflowNotFound } from './errors';

/** True while the workflow's latest run is running; false once it closed, or when Temporal has none. */
export async function isWorkflowRunning(
  temporal: Pick<TemporalConnection, 'client' | 'connection'>,
  workflowId: string,
): Promise<boolean> {
  const { client, connection } = temporal;
  try {
    const description = await callTemporal(connection, () =>
      client.workflow.getHandle(workflowId).describe(),
    );
    return description.status.name === 'RUNNING';
  } catch (error) {
    if (isWorkflowNotFound(error)) return false;
    throw error;
  }
}
