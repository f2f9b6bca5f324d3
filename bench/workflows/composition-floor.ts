/**
 * The floors of map-10k and parallel-5: the same work hand-written on the raw SDK, as a developer
 * writing it without Switchyard would, in the shape Switchyard gives it (bench/scenarios/map-10k.ts,
 * parallel-5.ts):
 *
 * - `mapFloor`: the items in child workflows of FLOOR_CHUNK_ITEMS (`mapFloorChunk`), `concurrency` of
 *   them at once, each running its items one after another, one local activity per item (`map_item`: the
 *   two steps' work); answers every item's output in order.
 * - `parallelFloor`: `calls` POSTs to the receiver at once, each a local activity (as Switchyard makes a
 *   connector step's first attempt); answers their statuses.
 *
 * Deterministic workflow code: only @temporalio/workflow, and types of the activities.
 */
import { executeChild, proxyLocalActivities, workflowInfo } from '@temporalio/workflow';
import type { FloorActivities } from '../floor-activities';

export const MAP_FLOOR_WORKFLOW_TYPE = 'mapFloor';
export const PARALLEL_FLOOR_WORKFLOW_TYPE = 'parallelFloor';
/** Items per child workflow: what Switchyard's map puts in one chunk. */
export const FLOOR_CHUNK_ITEMS = 100;

const { map_item, post_json } = proxyLocalActivities<FloorActivities>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 3, initialInterval: '1s' },
});

export interface MapFloorInput {
  /** The items are 1..items, as the definition's `[1..items]`. */
  items: number;
  concurrency: number;
}

export interface MapFloorChunkInput {
  items: number[];
  /** The index of the chunk's first item. */
  first: number;
}

export async function mapFloor({ items, concurrency }: MapFloorInput): Promise<number[]> {
  const all = Array.from({ length: items }, (_, i) => i + 1);
  const chunks = Math.ceil(items / FLOOR_CHUNK_ITEMS);
  const outputs = new Array<number>(items);
  const parent = workflowInfo().workflowId;
  let next = 0;
  const lane = async () => {
    while (next < chunks) {
      const chunk = next++;
      const first = chunk * FLOOR_CHUNK_ITEMS;
      const result = await executeChild(mapFloorChunk, {
        workflowId: `${parent}/chunk-${chunk}`,
        args: [{ items: all.slice(first, first + FLOOR_CHUNK_ITEMS), first }],
      });
      result.forEach((output, offset) => (outputs[first + offset] = output));
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, chunks) }, lane));
  return outputs;
}

export async function mapFloorChunk({ items, first }: MapFloorChunkInput): Promise<number[]> {
  const outputs: number[] = [];
  for (const [offset, item] of items.entries()) outputs.push(await map_item(item, first + offset));
  return outputs;
}

export interface ParallelFloorInput {
  url: string;
  calls: number;
  /** Sent in every call's body, as the definition sends `input.n`. */
  n: number;
}

export async function parallelFloor({ url, calls, n }: ParallelFloorInput): Promise<number[]> {
  return Promise.all(Array.from({ length: calls }, (_, i) => post_json(url, { n, call: i + 1 })));
}
