/**
 * The steps of a large map's items (docs/api.md#steps-that-hold-steps): they ran in the map's chunks, child
 * workflows with histories of their own (workers/workflows/map-chunk.ts), so a read that shows such items
 * reads the histories of their chunks and fills their steps in (step-lists.ts chunkItemOf). A read shows at
 * most a page of runs, which lie in a few chunks; past MAX_CHUNKS_READ chunks, the runs of the others show
 * no steps, and neither do those of a chunk whose history Temporal no longer has.
 */
import type { Services } from '../services';
import { callTemporal } from '../../platform/temporal/errors';
import { chunkSourcesOf, decodeHistory } from './history-mapper';
import { chunkItemOf, type ChunkItem } from './step-lists';
import type { RunView } from './views';

/** Chunk histories one read fetches at most (each up to about 0.5 MB: 100 items). */
export const MAX_CHUNKS_READ = 4;
const CHUNK_HISTORY_TIMEOUT_MS = 5_000;

/** Fills in the steps of the chunked map items among `runs` from their chunks' histories. */
export async function showChunkItemSteps(services: Services, runs: RunView[]): Promise<void> {
  const byChunk = new Map<string, ChunkItem[]>();
  for (const run of runs) {
    const item = chunkItemOf(run);
    if (!item) continue;
    const items = byChunk.get(item.chunk.runId);
    if (items) items.push(item);
    else if (byChunk.size < MAX_CHUNKS_READ) byChunk.set(item.chunk.runId, [item]);
  }
  const { client, connection, payloadCodecs } = services.temporal;
  await Promise.all(
    [...byChunk.values()].map(async (items) => {
      const { workflowId, runId } = items[0]!.chunk;
      const handle = client.workflow.getHandle(workflowId, runId);
      let history;
      try {
        history = await callTemporal(connection, () => handle.fetchHistory(), CHUNK_HISTORY_TIMEOUT_MS);
      } catch (error) {
        services.logger.warn(
          { err: error, workflowId, runId },
          'Could not read a chunk history; its items show no steps',
        );
        return;
      }
      const events = history.events ?? [];
      await decodeHistory(events, payloadCodecs);
      const sources = chunkSourcesOf(events);
      for (const item of items) item.fill(sources);
    }),
  );
}
