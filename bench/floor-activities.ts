/**
 * The floors' activities (bench/workflows/): what the hand-written workflows call, written as a developer
 * on the raw SDK would write them.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { Agent, request } from 'undici';

const dispatcher = new Agent({ connections: 128 });

/** A POST's answer as a step record of ours holds it: status, headers, the body parsed when JSON. */
export interface PostAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

function postJson(url: string, body: unknown) {
  return request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    dispatcher,
  });
}

/** POST a JSON body, answer the status, headers and body (a 5xx or a network error is retried). */
export async function post_json_answer(url: string, body: unknown): Promise<PostAnswer> {
  const response = await postJson(url, body);
  const text = await response.body.text();
  if (response.statusCode >= 500) throw ApplicationFailure.retryable(`answered ${response.statusCode}`);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers)) {
    if (typeof value === 'string') headers[name] = value;
  }
  const json = headers['content-type']?.includes('json') && text !== '';
  return { status: response.statusCode, headers, body: json ? (JSON.parse(text) as unknown) : text };
}

/** POST a JSON body, answer the status (a 5xx or a network error is retried). */
export async function post_json(url: string, body: unknown): Promise<number> {
  const response = await postJson(url, body);
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
