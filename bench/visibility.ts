/** Watching executions through Temporal visibility: counts by query, and waiting for a backlog to drain. */
import type { Client } from '@temporalio/client';
import { performance } from 'node:perf_hooks';

const POLL_INTERVAL_MS = 200;

export async function countExecutions(client: Client, query: string): Promise<number> {
  return (await client.workflow.count(query)).count;
}

/** Quotes a value for a visibility query. */
export function quote(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/**
 * Waits until no execution matching `query` is running, so that the next measurement does not share
 * the worker and the dev server with the previous one's backlog. Resolves with the milliseconds it took.
 */
export async function waitUntilNoneRunning(
  client: Client,
  query: string,
  timeoutMs = 10 * 60_000,
): Promise<number> {
  const started = performance.now();
  const running = `(${query}) AND ExecutionStatus = 'Running'`;
  for (;;) {
    const count = await countExecutions(client, running);
    if (count === 0) return performance.now() - started;
    if (performance.now() - started > timeoutMs)
      throw new Error(`${count} executions still running after ${timeoutMs} ms (${query})`);
    await sleep(POLL_INTERVAL_MS);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
