/**
 * The `previous_chunk_result` local activity: in a retry, a chunk of a large map (workflows/map-chunk.ts)
 * reads what its own workflow id's run in the failed execution returned, to keep the items that succeeded
 * there. A run that did not complete (or whose history Temporal no longer keeps) gives null: every item of
 * the chunk runs again.
 */
import { WorkflowFailedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { MapChunkResult } from '../../core/execution-types';

export interface PreviousChunk {
  /** The chunk's own workflow id (a chunk reads only its own earlier runs). */
  workflow_id: string;
  run_id: string;
}

export function createPreviousChunkReader(client: Client) {
  return async function previous_chunk_result(previous: PreviousChunk): Promise<MapChunkResult | null> {
    try {
      const handle = client.workflow.getHandle(previous.workflow_id, previous.run_id, { followRuns: false });
      return (await handle.result()) as MapChunkResult;
    } catch (error) {
      if (error instanceof WorkflowFailedError || error instanceof WorkflowNotFoundError) return null;
      throw error;
    }
  };
}
