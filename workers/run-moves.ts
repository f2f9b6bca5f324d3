/**
 * Moving running executions from one worker build to another (docs/operations.md#moving-runs-between-builds),
 * only where the target build's workflow code replays the run's history: a run moved onto code that
 * cannot replay it would fail every workflow task from then on (a non-determinism error) instead of
 * waiting for its own build's workers.
 *
 * Each run is replayed against the target's bundle first; a run that replays is pinned to the target
 * (a versioning override), one that does not stays where it is, with the replay's error as the reason.
 * A run whose old worker added events between the check and the move is checked again on its longer
 * history, and put back where it was when that one does not replay.
 */
import type { Client } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { Worker, type ReplayWorkerOptions, type WorkflowBundleOption } from '@temporalio/worker';
import { globalHandlers } from '@temporalio/worker/lib/workflow/vm-shared';
import type { Logger } from '../platform/logger';
import { pinnedElsewhereQuery, pinRun, setVersioningOverride } from '../platform/temporal/worker-deployment';
import { metricsSinks } from './telemetry';

type History = temporal.api.history.v1.IHistory;
type VersioningOverride = temporal.api.workflow.v1.IVersioningOverride;

export interface RunToMove {
  workflowId: string;
  runId: string;
}

/** What happened to one run. */
export interface MoveOutcome extends RunToMove {
  /** The build the run was pinned to before (its override's, else the one that started it). */
  fromBuild: string | undefined;
  /** moved: pinned to the target now; would-move: replays, left as is (dry run); kept: does not replay. */
  result: 'moved' | 'would-move' | 'kept';
  /** Why a run was kept: the replay's error, first line. */
  reason?: string;
}

export interface MoveRequest {
  client: Client;
  target: WorkerDeploymentVersion;
  /** The target build's workflow code. */
  bundle: WorkflowBundleOption;
  /** The data converter the target build's workers use (payload codecs included). */
  dataConverter: ReplayWorkerOptions['dataConverter'];
  runs: AsyncIterable<RunToMove> | Iterable<RunToMove>;
  /** Recorded by Temporal as who changed the runs. */
  identity: string;
  /** Replay only: report what would move. */
  dryRun?: boolean;
  /** Told about each run as soon as it is decided (progress). */
  onOutcome?: (outcome: MoveOutcome) => void;
  /** Stops before the next run once aborted (the worker is stopping); the runs decided so far stand. */
  signal?: AbortSignal;
}

interface Checked {
  run: RunToMove;
  fromBuild: string | undefined;
  previousOverride: VersioningOverride | null;
  /** Events in the history that was replayed. */
  events: number;
}

/** Moves the runs that replay on the target and keeps the others; returns every run's outcome. */
export async function moveRuns(request: MoveRequest): Promise<MoveOutcome[]> {
  const outcomes: MoveOutcome[] = [];
  const checked = new Map<string, Checked>();
  const report = (outcome: MoveOutcome) => {
    outcomes.push(outcome);
    request.onOutcome?.(outcome);
  };
  const histories = async function* () {
    for await (const run of request.runs) {
      if (request.signal?.aborted) return;
      const description = await request.client.workflow.getHandle(run.workflowId, run.runId).describe();
      const versioning = description.raw.workflowExecutionInfo?.versioningInfo;
      const override = versioning?.versioningOverride ?? null;
      const fromBuild =
        override?.pinned?.version?.buildId ?? versioning?.deploymentVersion?.buildId ?? undefined;
      const history = await request.client.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
      // By workflow id: a replay names the run as the history does, and an execution has one open run.
      checked.set(run.workflowId, {
        run,
        fromBuild,
        previousOverride: override,
        events: history.events?.length ?? 0,
      });
      yield { workflowId: run.workflowId, history };
    }
  };
  if (request.signal?.aborted) return outcomes;
  const options = replayOptions(request);
  const hooksBefore = globalHandlers.installed;
  try {
    await replayAndMove(request, options, histories(), checked, report);
  } finally {
    // A replay runs workflow code in this thread, and the SDK then installs a V8 promise hook and a
    // stack-trace hook for the whole thread and never removes them (it expects replays in tests or in
    // worker threads). Left in a service process, the hook slowed every promise: JSONata-heavy steps
    // ran several times slower after one replay (docs/benchmarks.md). Removed unless they were there.
    if (!hooksBefore && globalHandlers.installed) globalHandlers.uninstall();
  }
  return outcomes;
}

async function replayAndMove(
  request: MoveRequest,
  options: ReplayWorkerOptions,
  histories: AsyncIterable<{ workflowId: string; history: History }>,
  checked: Map<string, Checked>,
  report: (outcome: MoveOutcome) => void,
): Promise<void> {
  for await (const result of Worker.runReplayHistories(options, histories)) {
    const entry = checked.get(result.workflowId);
    if (!entry) throw new Error(`Replay answered for ${result.workflowId}, which was not asked for`);
    const { run, fromBuild } = entry;
    if (result.error) {
      report({ ...run, fromBuild, result: 'kept', reason: firstLine(result.error) });
    } else if (request.dryRun) {
      report({ ...run, fromBuild, result: 'would-move' });
    } else {
      report(await pinAndConfirm(request, options, entry));
    }
  }
}

/** Pins the run to the target, then makes sure no event its old build added since the check breaks it. */
async function pinAndConfirm(
  request: MoveRequest,
  options: ReplayWorkerOptions,
  entry: Checked,
): Promise<MoveOutcome> {
  const { run, fromBuild } = entry;
  await pinRun(request.client, run, request.target, request.identity);
  const handle = request.client.workflow.getHandle(run.workflowId, run.runId);
  const length = Number((await handle.describe()).historyLength);
  if (length > entry.events) {
    const history: History = await handle.fetchHistory();
    const failure = await Worker.runReplayHistory(options, history, run.workflowId).then(
      () => undefined,
      (error: unknown) => error,
    );
    if (failure !== undefined) {
      await setVersioningOverride(request.client, run, entry.previousOverride, request.identity);
      return { ...run, fromBuild, result: 'kept', reason: firstLine(failure) };
    }
  }
  return { ...run, fromBuild, result: 'moved' };
}

function replayOptions(request: MoveRequest): ReplayWorkerOptions {
  return {
    workflowBundle: request.bundle,
    dataConverter: request.dataConverter,
    // The workflows call these sinks; during replay they are not called, but they must exist.
    sinks: metricsSinks,
    replayName: `move onto ${request.target.buildId}`,
  };
}

function firstLine(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.split('\n', 1)[0]!.slice(0, 500);
}

export interface AdoptionRequest {
  client: Client;
  /** The worker is stopping: no further run is checked. */
  signal?: AbortSignal;
  taskQueue: string;
  version: WorkerDeploymentVersion;
  bundle: WorkflowBundleOption;
  dataConverter: ReplayWorkerOptions['dataConverter'];
  identity: string;
  logger: Logger;
}

/**
 * WORKER_ROLLOUT=replace, once this build is current: moves the runs pinned to other builds of the
 * deployment onto it where they replay, and says which stayed and why.
 */
export async function adoptReplayableRuns(request: AdoptionRequest): Promise<MoveOutcome[]> {
  const { client, version, logger } = request;
  const query = pinnedElsewhereQuery(request.taskQueue, version);
  const runs: RunToMove[] = [];
  for await (const run of client.workflow.list({ query }))
    runs.push({ workflowId: run.workflowId, runId: run.runId });
  // Most starts have nothing to move: no replay worker is started for nothing.
  if (runs.length === 0) return [];
  const outcomes = await moveRuns({ ...request, target: version, runs });
  const fields = { deployment: version.deploymentName, buildId: version.buildId };
  const moved = outcomes.filter((o) => o.result === 'moved');
  const kept = outcomes.filter((o) => o.result === 'kept');
  if (moved.length > 0)
    logger.info(
      { ...fields, runs: moved.length, from: [...new Set(moved.map((o) => o.fromBuild))] },
      'Moved runs pinned to other builds onto this build (their histories replay on it)',
    );
  if (kept.length > 0)
    logger.warn(
      {
        ...fields,
        runs: kept.length,
        examples: kept
          .slice(0, 5)
          .map((o) => ({ execution: o.workflowId, build: o.fromBuild, reason: o.reason })),
      },
      'Left runs on their builds: their histories do not replay on this build. Keep a worker of their ' +
        'build running until they finish (docs/operations.md#moving-runs-between-builds)',
    );
  return outcomes;
}
