/**
 * Executions completed per second: trigger a batch of demo runs through the API at the benchmark's
 * concurrency, then wait until Temporal visibility shows every one of them closed. The wall time runs
 * from the first trigger to the last CloseTime Temporal recorded (same host, same clock).
 */
import { runToCompletion, summarizeCompletions } from '../completion';
import { waitUntilNoneRunning } from '../visibility';
import { DEMO_EXECUTIONS_QUERY, DEMO_WORKFLOW_ID, demoInput, type BenchContext } from './common';

export async function benchEndToEnd(ctx: BenchContext) {
  const { settings, stack, api } = ctx;
  const client = stack.runtime.services.temporal.client;
  await waitUntilNoneRunning(client, DEMO_EXECUTIONS_QUERY);
  const run = await runToCompletion({
    client,
    label: 'end_to_end',
    query: DEMO_EXECUTIONS_QUERY,
    count: settings.e2e,
    concurrency: settings.concurrency,
    start: (index) => api.trigger(DEMO_WORKFLOW_ID, demoInput(index)),
  });
  return { executions: settings.e2e, concurrency: settings.concurrency, ...summarizeCompletions([run]) };
}
