/**
 * Worker Deployment Versioning (docs/operations.md#deploys-worker-builds-and-versioning). Each worker
 * declares its build — by default a hash of the workflow bundle, so new workflow code is a new build and
 * unchanged code keeps its id — in a Worker Deployment named after its task queue. An execution is pinned to
 * the build that started it (workers/workflows/execution.ts), so a rolling deploy never replays a run on code
 * it was not written for; new runs, and retries (new runs too: src/executions/retry.ts), go to the
 * deployment's current build.
 *
 * At start, per WORKER_ROLLOUT, a worker makes its build current once Temporal has seen it poll, but only a
 * new build (rolloutDecision): an old build restarted after another became current stays as it is, so a
 * process manager's restart never rolls a deployment back. In `replace` mode the current build's worker
 * then moves the runs pinned to other builds onto its own, each only if its history replays on this
 * build's code (workers/run-moves.ts); the others stay on their build for its workers to finish.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { status as grpcStatus } from '@grpc/grpc-js';
import type { Client } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import type { WorkflowBundleOption } from '@temporalio/worker';
import type { WorkerVersioning } from '../config';
import type { Logger } from '../logger';
import { visibilityString } from './visibility-query';

/** Characters of the bundle's SHA-256 kept as its build id (48 bits: no collision between builds in practice). */
const BUILD_ID_LENGTH = 12;

/** This worker's version: its deployment, and its build (configured, or the bundle's hash). */
export function workerVersion(
  versioning: WorkerVersioning,
  bundle: WorkflowBundleOption,
): WorkerDeploymentVersion {
  return { deploymentName: versioning.deploymentName, buildId: versioning.buildId ?? bundleBuildId(bundle) };
}

/**
 * The bundle's inline source map: the only part of it that names the folder it was built in (absolute
 * paths of the sources), and no part of what runs.
 */
const INLINE_SOURCE_MAP = /\n\/\/# sourceMappingURL=data:[^\n]*\s*$/;

/**
 * A hash of the code the bundle runs, so one commit is one build wherever and whenever it is built
 * (test/unit/build-id.test.ts builds it in two folders).
 */
export function bundleBuildId(bundle: WorkflowBundleOption): string {
  const code = 'code' in bundle ? bundle.code : fs.readFileSync(bundle.codePath, 'utf8');
  return crypto
    .createHash('sha256')
    .update(code.replace(INLINE_SOURCE_MAP, ''))
    .digest('hex')
    .slice(0, BUILD_ID_LENGTH);
}

/** How a version is written in Temporal's search attributes (TemporalWorkerDeploymentVersion). */
function searchAttributeValue(version: WorkerDeploymentVersion): string {
  return `${version.deploymentName}:${version.buildId}`;
}

/** Answers that mean "ask again shortly": not registered yet, a concurrent change, a blip. */
const NOT_READY_YET = new Set<number>([
  grpcStatus.NOT_FOUND,
  grpcStatus.FAILED_PRECONDITION,
  grpcStatus.ABORTED, // another worker of the deployment changed it at the same moment (conflict token)
  grpcStatus.UNAVAILABLE,
]);

const POLL_INTERVAL_MS = 100;

type DeploymentInfo = temporal.api.deployment.v1.IWorkerDeploymentInfo;

/**
 * What a starting worker does with its build:
 * - `current`: it already is the deployment's current build;
 * - `make-current`: it is a new build (never current, and no other build became current after it first
 *   polled), so it takes new runs;
 * - `stay`: an operator (or a worker of another build) made `current` the current build after this
 *   build existed, so this is an old build restarted: it serves only the runs pinned to it. Making it
 *   current would roll the deployment back, which only an operator may decide.
 */
export type RolloutDecision =
  | { action: 'current' }
  | { action: 'make-current'; previous: string | undefined }
  | { action: 'stay'; current: string; why: string };

/** The decision for `buildId`, from the deployment as Temporal describes it (its versions and routing). */
export function rolloutDecision(info: DeploymentInfo | null | undefined, buildId: string): RolloutDecision {
  const routing = info?.routingConfig;
  const current = routing?.currentDeploymentVersion?.buildId ?? undefined;
  if (current === buildId) return { action: 'current' };
  if (routing?.rampingDeploymentVersion?.buildId === buildId)
    return {
      action: 'stay',
      current: current ?? '(none)',
      why: 'an operator is ramping this build, and decides when it becomes current',
    };
  if (!current) return { action: 'make-current', previous: undefined };
  const summary = info?.versionSummaries?.find((v) => v.deploymentVersion?.buildId === buildId);
  const wasCurrentUntil =
    optionalTsToMs(summary?.lastDeactivationTime) ?? optionalTsToMs(summary?.lastCurrentTime);
  if (wasCurrentUntil !== undefined || optionalTsToMs(summary?.firstActivationTime) !== undefined) {
    return {
      action: 'stay',
      current,
      why:
        `this build was current before and build ${current} replaced it` +
        (wasCurrentUntil === undefined ? '' : ` (${new Date(wasCurrentUntil).toISOString()})`),
    };
  }
  const firstPolled = optionalTsToMs(summary?.createTime);
  const currentSince = optionalTsToMs(routing?.currentVersionChangedTime);
  if (firstPolled !== undefined && currentSince !== undefined && currentSince > firstPolled) {
    return {
      action: 'stay',
      current,
      why:
        `build ${current} became current at ${new Date(currentSince).toISOString()}, after this build ` +
        `first polled (${new Date(firstPolled).toISOString()})`,
    };
  }
  return { action: 'make-current', previous: current };
}

export interface RolloutRequest {
  client: Client;
  version: WorkerDeploymentVersion;
  /** Who made the change, as Temporal records it. */
  identity: string;
  /** Give up after this long (the worker must have started polling first). */
  timeoutMs: number;
}

/**
 * Decides (rolloutDecision) and, for a new build, makes `version` the current version of its deployment.
 * Waits until Temporal has registered the version (its first poll) so that the decision sees it.
 */
export async function applyRollout(request: RolloutRequest): Promise<RolloutDecision> {
  const { client, version } = request;
  const service = client.workflowService;
  const namespace = client.options.namespace;
  const deadline = Date.now() + request.timeoutMs;
  for (;;) {
    try {
      const described = await service.describeWorkerDeployment({
        namespace,
        deploymentName: version.deploymentName,
      });
      const info = described.workerDeploymentInfo;
      const registered = info?.versionSummaries?.some(
        (v) => v.deploymentVersion?.buildId === version.buildId,
      );
      if (!registered)
        throw Object.assign(new Error('Temporal has not seen a poll of this build yet'), {
          code: grpcStatus.NOT_FOUND,
        });
      const decision = rolloutDecision(info, version.buildId);
      if (decision.action !== 'make-current') return decision;
      await service.setWorkerDeploymentCurrentVersion({
        namespace,
        deploymentName: version.deploymentName,
        buildId: version.buildId,
        conflictToken: described.conflictToken,
        identity: request.identity,
      });
      return decision;
    } catch (error) {
      const code = grpcCode(error);
      if (code === undefined || !NOT_READY_YET.has(code) || Date.now() > deadline) {
        throw new Error(
          `Could not roll out build ${version.buildId} of worker deployment ` +
            `"${version.deploymentName}": ${(error as Error).message}` +
            (code === grpcStatus.UNIMPLEMENTED
              ? ' (a Temporal server before 1.28 has no Worker Deployments: set WORKER_VERSIONING=false)'
              : ''),
          { cause: error },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
    }
  }
}

/**
 * The visibility query of the running executions of a task queue pinned to another build of `target`'s
 * deployment than `target` (optionally: to build `fromBuild` only), the runs a move onto `target` considers.
 */
export function pinnedElsewhereQuery(
  taskQueue: string,
  target: WorkerDeploymentVersion,
  fromBuild?: string,
): string {
  const base =
    `TaskQueue = ${visibilityString(taskQueue)} AND ExecutionStatus = 'Running' ` +
    `AND TemporalWorkflowVersioningBehavior = 'Pinned' ` +
    `AND TemporalWorkerDeployment = ${visibilityString(target.deploymentName)}`;
  return fromBuild === undefined
    ? `${base} AND TemporalWorkerDeploymentVersion != ${visibilityString(searchAttributeValue(target))}`
    : `${base} AND TemporalWorkerDeploymentVersion = ${visibilityString(
        searchAttributeValue({ deploymentName: target.deploymentName, buildId: fromBuild }),
      )}`;
}

/** Pins one run to `version` (a versioning override): its next workflow tasks go to that build's workers. */
export async function pinRun(
  client: Client,
  run: { workflowId: string; runId: string },
  version: WorkerDeploymentVersion,
  identity: string,
): Promise<void> {
  await setVersioningOverride(
    client,
    run,
    {
      pinned: {
        behavior:
          temporal.api.workflow.v1.VersioningOverride.PinnedOverrideBehavior.PINNED_OVERRIDE_BEHAVIOR_PINNED,
        version,
      },
    },
    identity,
  );
}

/** Sets (or, with null, removes) a run's versioning override. */
export async function setVersioningOverride(
  client: Client,
  run: { workflowId: string; runId: string },
  override: temporal.api.workflow.v1.IVersioningOverride | null,
  identity: string,
): Promise<void> {
  await client.workflowService.updateWorkflowExecutionOptions({
    namespace: client.options.namespace,
    workflowExecution: { workflowId: run.workflowId, runId: run.runId },
    workflowExecutionOptions: override ? { versioningOverride: override } : {},
    updateMask: { paths: ['versioning_override'] },
    identity,
  });
}

/**
 * Sets up this worker's version per its rollout mode once the worker polls, and logs what it did and why.
 * Returns true when this build is the deployment's current one afterwards (the condition for `replace`
 * to move runs onto it).
 */
export async function rollOutWorkerVersion(
  client: Client,
  versioning: WorkerVersioning,
  version: WorkerDeploymentVersion,
  logger: Logger,
): Promise<boolean> {
  const identity = `switchyard worker ${process.pid} (WORKER_ROLLOUT=${versioning.rollout})`;
  const fields = {
    deployment: version.deploymentName,
    buildId: version.buildId,
    rollout: versioning.rollout,
  };
  if (versioning.rollout === 'manual') {
    logger.info(
      fields,
      'Worker build polling; it takes new runs once an operator makes it current ' +
        '(docs/operations.md#deploys-worker-builds-and-versioning)',
    );
    return false;
  }
  const decision = await applyRollout({ client, version, identity, timeoutMs: 30_000 });
  switch (decision.action) {
    case 'current':
      logger.info(fields, 'Worker build is the current version');
      return true;
    case 'make-current':
      logger.info(
        { ...fields, previous: decision.previous },
        decision.previous
          ? `Worker build is now the current version (new runs go to it instead of build ${decision.previous})`
          : 'Worker build is now the current version',
      );
      return true;
    case 'stay':
      logger.warn(
        { ...fields, current: decision.current },
        `Worker build stays as it is and takes no new runs: ${decision.why}. It serves only the runs ` +
          `pinned to it, and moves none. To roll back to it on purpose, make it current by hand ` +
          `(docs/operations.md#rolling-back)`,
      );
      return false;
  }
}

function grpcCode(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}
