/**
 * The floors' activities (bench/workflows/): what the hand-written workflows call, written as a developer
 * on the raw SDK would write them.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { Agent, request } from 'undici';

const dispatcher = new Agent({ connections: 128 });

/** POST a JSON body, answer the status (a 5xx or a network error is retried). */
export async function post_json(url: string, body: unknown): Promise<number> {
  const response = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    dispatcher,
  });
  await response.body.dump();
  if (response.statusCode >= 500) throw ApplicationFailure.retryable(`answered ${response.statusCode}`);
  return response.statusCode;
}

/**
 * One item of map-10k's map: the work of its two rules steps (`square`: item × item, then `plus`:
 * square + index), as code; answers the last one's output, which is what the map collects.
 */
export async function map_item(item: number, index: number): Promise<number> {
  const square = item * item;
  return square + index;
}

export const floorActivities = { post_json, map_item };
export type FloorActivities = typeof floorActivities;
