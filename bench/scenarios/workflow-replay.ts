/**
 * `workflow_replay`: what our workflow code costs per run, apart from Temporal, the dev server and the
 * activities. Histories of the replay corpus (test/replay/histories) are each replayed BENCH_REPLAYS (500)
 * times, after BENCH_REPLAY_WARMUP (50), by the SDK's replayer against the built workflow bundle, in a child
 * process (bench/workflow-replay-process.ts): its CPU per replay, and the promises workflow code makes per
 * replay (the SDK captures a stack trace for each one, in the worker's workflow thread as in the replayer).
 * BENCH_REPLAY_HISTORIES: comma-separated file names of the corpus (the onboard flow's shapes by default);
 * BENCH_REPLAY_BUNDLE: another workflow bundle to replay instead (an earlier build's dist/workflow-bundle.js).
 *
 * Replays of the same history by two builds measure a change to workflow code precisely: a few percent,
 * where the onboard scenario's CPU per run moves by more between two runs of the same build.
 */
import { fork } from 'node:child_process';
import path from 'node:path';
import { projectRoot, workflowBundlePath } from '../../platform/paths';
import { progress } from '../stack';
import type { ReplayRequest, ReplayResult } from '../workflow-replay-process';

/** A rules step then a connector step; one connector step in a workspace with a cap (its place asked and given back in the batch). */
const DEFAULT_HISTORIES = ['execution-connector.json', 'execution-workspace-cap-open.json'];

export interface WorkflowReplaySettings {
  histories: string[];
  bundle: string;
  replays: number;
  warmup: number;
}

export function workflowReplaySettingsFromEnv(env: NodeJS.ProcessEnv = process.env): WorkflowReplaySettings {
  const int = (name: string, fallback: number) => {
    const raw = env[name];
    const value = raw === undefined || raw === '' ? fallback : Number(raw);
    if (!Number.isInteger(value) || value < 1)
      throw new Error(`${name}: a positive whole number, got "${raw}"`);
    return value;
  };
  const histories = env['BENCH_REPLAY_HISTORIES']
    ?.split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  return {
    histories: histories?.length ? histories : DEFAULT_HISTORIES,
    bundle: env['BENCH_REPLAY_BUNDLE'] ? path.resolve(env['BENCH_REPLAY_BUNDLE']) : workflowBundlePath,
    replays: int('BENCH_REPLAYS', 500),
    warmup: int('BENCH_REPLAY_WARMUP', 50),
  };
}

function replayInChild(request: ReplayRequest): Promise<ReplayResult> {
  return new Promise((resolve, reject) => {
    const child = fork(path.join(__dirname, '..', 'workflow-replay-process.js'), [], {
      execArgv: [],
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    let result: ReplayResult | undefined;
    child.once('message', (message: ReplayResult) => (result = message));
    child.once('error', reject);
    child.once('exit', (code) =>
      result ? resolve(result) : reject(new Error(`the replay process exited with ${code}`)),
    );
    child.send(request);
  });
}

export async function benchWorkflowReplay(
  settings: WorkflowReplaySettings,
): Promise<Record<string, ReplayResult>> {
  const results: Record<string, ReplayResult> = {};
  for (const name of settings.histories) {
    const file = path.join(projectRoot, 'test', 'replay', 'histories', name);
    const result = await replayInChild({
      file,
      bundle: settings.bundle,
      replays: settings.replays,
      warmup: settings.warmup,
    });
    progress(
      `workflow_replay ${name}: ${result.cpu_ms_per_replay} ms CPU per replay, ${result.workflow_promises_per_replay} workflow promises`,
    );
    results[name.replace(/\.json$/, '')] = result;
  }
  return results;
}
