/**
 * Whether a worker serves a run (docs/api.md#when-no-worker-serves-a-run). With worker versioning on
 * (docs/operations.md#deploys-worker-builds-and-versioning) a run is pinned to the build that started it,
 * and only a worker of that build takes its workflow tasks: while none polls, an approval, a cancellation
 * or a retry's new run waits in Temporal for one. The API asks this before sending any of them, so that
 * it can answer 503 `worker_unavailable` naming the build instead of waiting for nothing.
 *
 * Liveness comes from the task queue's pollers (DescribeTaskQueue, workflow task type): one entry per
 * worker identity and build, with the time the worker last polled; and from the workers that reported
 * they stopped (ListWorkers).
 */
import type { WorkflowExecutionDescription } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Services } from '../services';
import { callTemporal, TEMPORAL_CALL_TIMEOUT_MS } from '../../platform/temporal/errors';
import { visibilityString } from '../../platform/temporal/visibility-query';

/**
 * How recently a worker of a build must have polled to count as running. A poller's last access is when
 * its last long poll began, and a long poll of an idle task queue lasts about a minute: measured on the
 * dev server (Temporal CLI 1.9.1, server 1.32, SDK 1.24), the last poll of an idle live worker was up to
 * 54 s old, then began again. A worker that stops, gracefully or not, stays in the list with its last poll
 * time, ageing: it was dropped 282 s after a SIGTERM and after a SIGKILL (five minutes after its last
 * poll). Only this window tells a crashed worker from a live one (a graceful stop is known at once: below).
 * It leaves a margin over the minute for a loaded server; a worker that crashed within it still counts as
 * running, and then the request's own deadline finds out (src/executions/decide.ts).
 */
export const POLLER_LIVENESS_MS = 75_000;

/**
 * The build a run is pinned to: an operator's pinned override (a move), else the build that completed its
 * last workflow task. Undefined when neither is known (worker versioning off, or the run has not completed
 * a workflow task yet: it then goes to the deployment's current build).
 */
export function pinnedBuildOf(
  description: WorkflowExecutionDescription,
): WorkerDeploymentVersion | undefined {
  const info = description.raw.workflowExecutionInfo?.versioningInfo;
  const override = info?.versioningOverride;
  const pinned = override?.pinned?.version ?? parseVersion(override?.pinnedVersion);
  if (pinned?.buildId && pinned.deploymentName) return version(pinned.deploymentName, pinned.buildId);
  // An auto-upgrade override follows the deployment's current build, like a run without a build.
  if (override?.autoUpgrade) return undefined;
  const last = info?.deploymentVersion;
  if (last?.buildId && last.deploymentName) return version(last.deploymentName, last.buildId);
  return undefined;
}

/**
 * How long a build with no poller listed at all is looked for again before the answer is "no worker". A
 * worker that has just started makes its build current as soon as Temporal registered it, which one poll
 * does; the task queue's description lists that poller a moment later. Measured on the dev server, on this
 * machine with both cores busy: 95–214 ms after the worker's start returned with its build current. In that
 * window every approval, cancellation and retry would otherwise be answered 503 although a worker serves
 * them (a deploy's first moment). A build whose poller is listed but aged or stopped is not waited for.
 */
export const STARTING_WORKER_GRACE_MS = 1_000;
const STARTING_WORKER_RECHECK_MS = 200;

export interface TaskQueueWorkers {
  /** The builds with a worker that polled within POLLER_LIVENESS_MS and has not reported stopping since. */
  live: WorkerDeploymentVersion[];
  /** The builds with a poller listed at all, live or not. */
  listed: WorkerDeploymentVersion[];
  /** The build new runs go to (the deployment's current version), if the task queue has one. */
  current: WorkerDeploymentVersion | undefined;
  /** The build a share of new runs goes to while a rollout ramps, if any. */
  ramping: WorkerDeploymentVersion | undefined;
}

/** The execution task queue's live worker builds and where its new runs go. */
async function taskQueueWorkers(services: Services): Promise<TaskQueueWorkers> {
  const { connection, namespace } = services.temporal;
  const [response, lastHeartbeats] = await Promise.all([
    callTemporal(connection, () =>
      connection.workflowService.describeTaskQueue({
        namespace,
        taskQueue: {
          name: services.config.temporal.taskQueue,
          kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL,
        },
        taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
      }),
    ),
    lastWorkerHeartbeats(services),
  ]);
  const now = Date.now();
  const live: WorkerDeploymentVersion[] = [];
  const listed: WorkerDeploymentVersion[] = [];
  for (const poller of response.pollers ?? []) {
    const options = poller.deploymentOptions;
    const lastPoll = optionalTsToMs(poller.lastAccessTime);
    if (!options?.buildId || !options.deploymentName || lastPoll === undefined) continue;
    listed.push(version(options.deploymentName, options.buildId));
    if (now - lastPoll > POLLER_LIVENESS_MS) continue;
    const last = lastHeartbeats.get(workerKey(poller.identity ?? '', options.buildId));
    if (last && !last.running && last.at >= lastPoll) continue;
    live.push(version(options.deploymentName, options.buildId));
  }
  const routing = response.versioningInfo;
  const ramps = (routing?.rampingVersionPercentage ?? 0) > 0;
  return {
    live,
    listed,
    current: versionOf(routing?.currentDeploymentVersion),
    ramping: ramps ? versionOf(routing?.rampingDeploymentVersion) : undefined,
  };
}

/**
 * The last heartbeat of each worker of the task queue, by identity and build: when, and whether the worker
 * was running or stopping. A worker that stops gracefully (SIGTERM, a deploy) reports it at once in its last
 * heartbeat (status ShuttingDown; Temporal's worker heartbeats, on in the dev server and in servers that
 * enable them), so its poller is gone when that report came after the poller's last poll; one that polled
 * since (the same identity started again, often within a second) is not. Heartbeats carry the worker's
 * clock, polls the server's, compared without leeway: a worker clock behind the server's can make a
 * stopped worker count as running until POLLER_LIVENESS_MS (the slower, still truthful answer), while
 * leeway would make a worker restarted within it count as stopped. Empty where the server keeps no worker
 * heartbeats (ListWorkers unimplemented or off): pollers then age out of POLLER_LIVENESS_MS alone.
 */
async function lastWorkerHeartbeats(
  services: Services,
): Promise<Map<string, { at: number; running: boolean }>> {
  const { connection, namespace } = services.temporal;
  const last = new Map<string, { at: number; running: boolean }>();
  try {
    const response = await connection.withDeadline(Date.now() + TEMPORAL_CALL_TIMEOUT_MS, () =>
      connection.workflowService.listWorkers({
        namespace,
        pageSize: 1000,
        query: `TaskQueue = ${visibilityString(services.config.temporal.taskQueue)}`,
      }),
    );
    for (const { workerHeartbeat: beat } of response.workersInfo ?? []) {
      const at = optionalTsToMs(beat?.heartbeatTime);
      const buildId = beat?.deploymentVersion?.buildId;
      if (!beat?.workerIdentity || !buildId || at === undefined) continue;
      const key = workerKey(beat.workerIdentity, buildId);
      const running = beat.status === temporal.api.enums.v1.WorkerStatus.WORKER_STATUS_RUNNING;
      if (at >= (last.get(key)?.at ?? -Infinity)) last.set(key, { at, running });
    }
  } catch (error) {
    services.logger.debug({ err: error }, 'Could not read the workers` heartbeats (ListWorkers)');
  }
  return last;
}

const workerKey = (identity: string, buildId: string): string => `${buildId}\n${identity}`;

const sameBuild = (a: WorkerDeploymentVersion, b: WorkerDeploymentVersion): boolean =>
  a.buildId === b.buildId && a.deploymentName === b.deploymentName;

/**
 * The build that would take the next workflow task of a run (`description`), or of a new run (none), when
 * no worker of it polls now; undefined when one does. A run goes to the build it is pinned to, else (its
 * first task) where new runs go: the current build, or the ramping one for a share of them. With worker
 * versioning off every worker takes every run, and nothing is checked; so too when the deployment has no
 * current build (no versioned worker ever took a run of this task queue).
 */
export async function buildWithoutWorker(
  services: Services,
  description?: WorkflowExecutionDescription,
): Promise<WorkerDeploymentVersion | undefined> {
  if (!services.config.workerVersioning) return undefined;
  const pinned = description && pinnedBuildOf(description);
  const deadline = Date.now() + STARTING_WORKER_GRACE_MS;
  for (;;) {
    const workers = await taskQueueWorkers(services);
    const builds = pinned ? [pinned] : [workers.current, workers.ramping];
    const absent = builds.find(
      (build) => build !== undefined && !workers.live.some((v) => sameBuild(v, build)),
    );
    // A build never listed may have a worker starting this moment (STARTING_WORKER_GRACE_MS).
    const starting = absent && !workers.listed.some((v) => sameBuild(v, absent));
    if (!starting || Date.now() + STARTING_WORKER_RECHECK_MS > deadline) return absent;
    await sleep(STARTING_WORKER_RECHECK_MS);
  }
}

/** Temporal's older string form of a version, `<deployment>.<build>` (a deployment name has no dot). */
function parseVersion(text: string | null | undefined): WorkerDeploymentVersion | undefined {
  const dot = text ? text.indexOf('.') : -1;
  if (!text || dot <= 0) return undefined;
  return version(text.slice(0, dot), text.slice(dot + 1));
}

function versionOf(
  v: { deploymentName?: string | null; buildId?: string | null } | null | undefined,
): WorkerDeploymentVersion | undefined {
  return v?.buildId && v.deploymentName ? version(v.deploymentName, v.buildId) : undefined;
}

function version(deploymentName: string, buildId: string): WorkerDeploymentVersion {
  return { deploymentName, buildId };
}
