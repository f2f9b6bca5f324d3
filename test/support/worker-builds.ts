/**
 * Worker builds for the tests of runs stuck on a build (docs/operations.md#runs-stuck-on-a-build): a worker
 * process of another build beside a service, and the moves an operator makes with
 * `temporal workflow update-options`, made here through the same Temporal call.
 */
import type { Client } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import { bundleWorkflowCode, DefaultLogger, type WorkflowBundleOption } from '@temporalio/worker';
import type { Config, WorkerVersioning } from '../../platform/config';
import type { Logger } from '../../platform/logger';
import { startRuntime, type Runtime } from '../../processes/runtime';
import { pinRun, setVersioningOverride } from '../../platform/temporal/worker-deployment';
import { testLogger } from './stack';
import { waitFor } from './wait';

/** Workflow code bundled once per process, by the path of its workflows module. */
const bundles = new Map<string, Promise<WorkflowBundleOption>>();
function bundled(workflowsPath: string): Promise<WorkflowBundleOption> {
  let bundle = bundles.get(workflowsPath);
  if (!bundle) {
    bundle = bundleWorkflowCode({ workflowsPath, logger: new DefaultLogger('WARN') }).then(({ code }) => ({
      code,
    }));
    bundles.set(workflowsPath, bundle);
  }
  return bundle;
}

/** The next build's workflow code (test/support/next-build/workflows.ts): it cannot replay the current one's runs. */
export const nextBuildBundle = () => bundled(require.resolve('./next-build/workflows'));

/** The poison build's workflow code (test/support/poison-build/workflows.ts): its execution workflow throws. */
export const poisonBuildBundle = () => bundled(require.resolve('./poison-build/workflows'));

/** A worker process of a service's task queue and database, of the given build. */
export function startWorkerOfBuild(
  base: Config,
  versioning: Partial<WorkerVersioning>,
  workflowBundle?: WorkflowBundleOption,
  logger: Logger = testLogger,
): Promise<Runtime> {
  return startRuntime({
    config: { ...base, workerVersioning: { ...base.workerVersioning!, ...versioning } },
    logger,
    api: false,
    worker: true,
    workflowBundle,
  });
}

/** The version a worker runtime polls as. */
export function versionOf(worker: Runtime): WorkerDeploymentVersion {
  return worker.worker!.options.workerDeploymentOptions!.version;
}

/**
 * Pins a run to `version` (a versioning override), as
 * `temporal workflow update-options --versioning-override-behavior pinned ...` does. Temporal refuses a
 * version none of whose workers has polled yet (a worker started with WORKER_ROLLOUT=manual does not wait
 * for that): tried again until it has.
 */
export async function moveRun(
  client: Client,
  executionId: string,
  version: WorkerDeploymentVersion,
): Promise<void> {
  await waitFor(() => pinRun(client, latestRun(executionId), version, 'switchyard tests').then(() => true), {
    timeoutMs: 30_000,
    what: `a move onto build ${version.buildId}`,
  });
}

/** The run's latest run, as the operator's commands address it (by workflow id). */
const latestRun = (executionId: string) => ({ workflowId: executionId, runId: '' });

/**
 * Removes a run's override, so that it goes back to the build that last completed a task of it, as
 * `temporal workflow update-options --versioning-override-behavior unspecified` does.
 */
export async function undoMove(client: Client, executionId: string): Promise<void> {
  await setVersioningOverride(client, latestRun(executionId), null, 'switchyard tests');
}

/**
 * Gives a run a new workflow task: a signal its workflow code ignores (moving a run alone does not make
 * one, so a run waiting for weeks would meet its new build only at its next decision).
 */
export async function nudgeRun(client: Client, executionId: string): Promise<void> {
  await client.workflow.getHandle(executionId).signal('switchyard-test-nudge');
}
