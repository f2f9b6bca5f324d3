/**
 * The child process of the workflow_replay scenario (bench/scenarios/workflow-replay.ts): replays one
 * history of the replay corpus many times with the SDK's replayer against the built workflow bundle, and
 * sends back what the replays cost. A process of its own because the replayer leaves the SDK's promise hook
 * installed in the thread that ran it (docs/benchmarks.md#the-raw-sdk-floor-earlier-runs), which would slow
 * everything the bench does after it.
 *
 * The replayer runs the workflow code in this process's main thread, so the process's CPU is the workflow
 * code's and the SDK's around it, with no Temporal server and no activities.
 */
import fs from 'node:fs';
import { promiseHooks } from 'node:v8';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import type { HistoryAndWorkflowId } from '@temporalio/client';

export interface ReplayRequest {
  file: string;
  /** The workflow bundle replayed: this build's, or an earlier build's to compare with. */
  bundle: string;
  replays: number;
  warmup: number;
}

export interface ReplayResult {
  replays: number;
  cpu_ms_per_replay: number;
  /**
   * Promises created in workflow code per replay: the SDK marks each with its run's id (`runId`) when it
   * captures its stack trace (@temporalio/worker's workflow/vm-shared.js), which is what each costs.
   */
  workflow_promises_per_replay: number;
}

type History = HistoryAndWorkflowId['history'];

function* copies(history: History, count: number, tag: string): Generator<HistoryAndWorkflowId> {
  for (let i = 0; i < count; i++) yield { workflowId: `${tag}-${i}`, history };
}

async function replayAll(bundle: string, history: History, count: number, tag: string): Promise<void> {
  const results = Worker.runReplayHistories(
    { workflowBundle: { codePath: bundle } },
    copies(history, count, tag),
  );
  for await (const result of results) if (result.error) throw result.error;
}

async function measure(request: ReplayRequest): Promise<ReplayResult> {
  // The replayed runs call the worker's metrics sink, which a replayer does not have: it says so per run.
  Runtime.install({ logger: new DefaultLogger('ERROR', () => undefined) });
  const history = JSON.parse(fs.readFileSync(request.file, 'utf8')) as History;
  await replayAll(request.bundle, history, request.warmup, 'warmup');
  let promises = 0;
  // Registered after the SDK's (installed by the warm-up), so it sees the run id the SDK sets.
  const stop = promiseHooks.onInit((promise) => {
    if ((promise as { runId?: unknown }).runId !== undefined) promises++;
  });
  const before = process.cpuUsage();
  await replayAll(request.bundle, history, request.replays, 'run');
  const used = process.cpuUsage(before);
  stop();
  return {
    replays: request.replays,
    cpu_ms_per_replay: Math.round(((used.user + used.system) / 1000 / request.replays) * 1000) / 1000,
    workflow_promises_per_replay: Math.round((promises / request.replays) * 10) / 10,
  };
}

process.once('message', (request: ReplayRequest) => {
  measure(request).then(
    (result) => process.send!(result, () => process.exit(0)),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
});
