/** The floor's one activity: POST a JSON body, answer the status (a 5xx or a network error is retried). */
import { ApplicationFailure } from '@temporalio/activity';
import { Agent, request } from 'undici';

const dispatcher = new Agent({ connections: 128 });

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

export const floorActivities = { post_json };
export type FloorActivities = typeof floorActivities;
