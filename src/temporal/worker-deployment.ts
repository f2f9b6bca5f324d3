/**
 * Worker Deployment Versioning (docs/operations.md#deploys-worker-builds-and-versioning). Each worker
 * declares its build — by default a hash of the workflow bundle, so new workflow code is a new build and
 * unchanged code keeps its id — in a Worker Deployment named after its task queue. An execution is pinned to
 * the build that started it (workers/workflows/execution.ts), so a rolling deploy never replays a run on code
 * it was not written for; new runs, and retries (new runs too: src/executions/retry.ts), go to the
 * deployment's current build.
 *
 * At start, per WORKER_ROLLOUT, the worker makes its build current once Temporal has seen it poll, and in
 * `replace` mode moves the runs pinned to other builds of its deployment onto its own: there are no other
 * workers left to finish them (one process, or identical ones replaced together). That move is safe because
 * changes to workflow code keep old histories replaying (test/replay,
 * docs/development.md#changing-workflow-code).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { status as grpcStatus } from '@grpc/grpc-js';
import type { Client } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';
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

/** Until a worker of the build has polled, Temporal does not know the version (NOT_FOUND) or refuses it. */
const NOT_READY_YET = new Set<number>([
  grpcStatus.NOT_FOUND,
  grpcStatus.FAILED_PRECONDITION,
  grpcStatus.ABORTED, // another worker of the deployment changed it at the same moment (conflict token)
  grpcStatus.UNAVAILABLE,
]);

const POLL_INTERVAL_MS = 100;

export interface CurrentVersionRequest {
  client: Client;
  version: WorkerDeploymentVersion;
  /** Who made the change, as Temporal records it. */
  identity: string;
  /** Give up after this long (the worker must have started polling first). */
  timeoutMs: number;
}

/**
 * Makes `version` the current version of its deployment, waiting until Temporal has registered it
 * (its first poll). Returns false when it already was.
 */
export async function makeCurrentVersion(request: CurrentVersionRequest): Promise<boolean> {
  const { client, version } = request;
  const service = client.workflowService;
  const namespace = client.options.namespace;
  const deadline = Date.now() + request.timeoutMs;
  for (;;) {
    try {
      const described = await service
        .describeWorkerDeployment({ namespace, deploymentName: version.deploymentName })
        .catch((error: unknown) => {
          if (grpcCode(error) === grpcStatus.NOT_FOUND) return undefined; // the deployment's first worker
          throw error;
        });
      const current = described?.workerDeploymentInfo?.routingConfig?.currentDeploymentVersion;
      if (current?.buildId === version.buildId) return false;
      await service.setWorkerDeploymentCurrentVersion({
        namespace,
        deploymentName: version.deploymentName,
        buildId: version.buildId,
        conflictToken: described?.conflictToken,
        identity: request.identity,
      });
      return true;
    } catch (error) {
      const code = grpcCode(error);
      if (code === undefined || !NOT_READY_YET.has(code) || Date.now() > deadline) {
        throw new Error(
          `Could not make build ${version.buildId} the current version of worker deployment ` +
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

export interface AdoptionRequest {
  client: Client;
  taskQueue: string;
  version: WorkerDeploymentVersion;
  identity: string;
}

/**
 * Pins the running executions of this task queue that are pinned to another build of the deployment
 * to `version` (a versioning override); returns their workflow ids.
 */
export async function adoptPinnedRuns(request: AdoptionRequest): Promise<string[]> {
  const { client, version } = request;
  const query =
    `TaskQueue = ${visibilityString(request.taskQueue)} AND ExecutionStatus = 'Running' ` +
    `AND TemporalWorkflowVersioningBehavior = 'Pinned' ` +
    `AND TemporalWorkerDeployment = ${visibilityString(version.deploymentName)} ` +
    `AND TemporalWorkerDeploymentVersion != ${visibilityString(searchAttributeValue(version))}`;
  const moved: string[] = [];
  for await (const run of client.workflow.list({ query })) {
    await client.workflowService.updateWorkflowExecutionOptions({
      namespace: client.options.namespace,
      workflowExecution: { workflowId: run.workflowId, runId: run.runId },
      workflowExecutionOptions: {
        versioningOverride: {
          pinned: {
            behavior:
              temporal.api.workflow.v1.VersioningOverride.PinnedOverrideBehavior
                .PINNED_OVERRIDE_BEHAVIOR_PINNED,
            version,
          },
        },
      },
      updateMask: { paths: ['versioning_override'] },
      identity: request.identity,
    });
    moved.push(run.workflowId);
  }
  return moved;
}

/** Sets up this worker's version per its rollout mode, once the worker polls; logs what it did. */
export async function rollOutWorkerVersion(
  client: Client,
  versioning: WorkerVersioning,
  version: WorkerDeploymentVersion,
  taskQueue: string,
  logger: Logger,
): Promise<void> {
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
        '(temporal worker deployment set-current-version)',
    );
    return;
  }
  const changed = await makeCurrentVersion({ client, version, identity, timeoutMs: 30_000 });
  logger.info(
    fields,
    changed ? 'Worker build is now the current version' : 'Worker build is the current version',
  );
  if (versioning.rollout !== 'replace') return;
  try {
    const moved = await adoptPinnedRuns({ client, taskQueue, version, identity });
    if (moved.length > 0)
      logger.info({ ...fields, runs: moved.length }, 'Moved runs pinned to earlier builds onto this build');
  } catch (error) {
    // The worker serves new runs either way; the next start tries again.
    logger.warn(
      { ...fields, err: error },
      'Could not move the runs pinned to earlier builds onto this build; move them with ' +
        '`temporal workflow update-options` (docs/operations.md#deploys-worker-builds-and-versioning)',
    );
  }
}

function grpcCode(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}
