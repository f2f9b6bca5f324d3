/**
 * `npm run admin -- move-runs`: moves running executions onto this checkout's worker build, each only
 * after its history replays on this build's workflow code (workers/run-moves.ts); the others stay on
 * their build and are listed with the reason. Without --yes it only reports what it would do.
 */
import type { Client } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import type { Config } from '../platform/config';
import { createLogger } from '../platform/logger';
import { connectTemporal, resolveTemporalTarget } from '../platform/temporal/connection';
import { payloadCodecsOf } from '../platform/temporal/encryption-codec';
import { pinnedElsewhereQuery, workerVersion } from '../platform/temporal/worker-deployment';
import { moveRuns, type MoveOutcome, type RunToMove } from '../workers/run-moves';
import { installTemporalRuntime, loadWorkflowBundle, workerDataConverter } from '../workers/worker';

export interface MoveRunsOptions {
  /** The build to move onto; must be this checkout's (checked), which is the default. */
  to?: string;
  /** Only runs pinned to this build. */
  from?: string;
  /** Only these executions (their latest runs). */
  executions: string[];
  /** Only the runs this Temporal visibility query also matches (e.g. `WorkflowType = 'execution'`). */
  query?: string;
  /** Move (otherwise: replay and report only). */
  yes: boolean;
}

/** Exit status when some runs were kept because they do not replay on the target. */
export const SOME_KEPT_EXIT_CODE = 3;

export async function moveRunsCommand(
  config: Config,
  options: MoveRunsOptions,
  out: (line: string) => void,
): Promise<number> {
  if (!config.workerVersioning)
    throw new Error('WORKER_VERSIONING is off: runs are not pinned to builds, so there is nothing to move.');
  const logger = createLogger('warn');
  // The replays' own lines ("Worker state changed", "Failing workflow task" for a run that does not
  // replay) are not the operator's business: this command reports each run itself.
  installTemporalRuntime(createLogger('error'));
  const bundle = await loadWorkflowBundle(logger);
  const target = workerVersion(config.workerVersioning, bundle);
  if (options.to !== undefined && options.to !== target.buildId)
    throw new Error(
      `This checkout's workflow code is build ${target.buildId}, not ${options.to}: run the command ` +
        `from a checkout of build ${options.to} (or with its WORKER_BUILD_ID), so that runs are checked ` +
        `against the code they will run on.`,
    );
  const address = config.temporal.address ? undefined : `${config.temporal.devIp}:${config.temporal.devPort}`; // the embedded dev server of `npm start`
  const temporal = await connectTemporal(
    resolveTemporalTarget(address, config.temporal.namespace, config.environment),
    payloadCodecsOf(config.payloadEncryptionKeys),
  );
  try {
    if (!(await hasPolled(temporal.client, target)))
      throw new Error(
        `No worker of build ${target.buildId} has polled yet: start one first (WORKER_ROLLOUT=manual ` +
          `keeps it from taking new runs); Temporal pins runs only to a build it knows.`,
      );
    out(
      `Target: build ${target.buildId} of worker deployment "${target.deploymentName}" (this checkout)` +
        (options.yes ? '' : ' — dry run: add --yes to move'),
    );
    const outcomes = await moveRuns({
      client: temporal.client,
      target,
      bundle,
      dataConverter: workerDataConverter(temporal.payloadCodecs),
      runs: candidates(temporal.client, config, target, options),
      identity: `switchyard admin move-runs (pid ${process.pid})`,
      dryRun: !options.yes,
      onOutcome: (outcome) => out(describeOutcome(outcome, target.buildId)),
    });
    out(summary(outcomes, target.buildId));
    return outcomes.some((o) => o.result === 'kept') ? SOME_KEPT_EXIT_CODE : 0;
  } finally {
    await temporal.connection.close();
  }
}

/** Whether Temporal knows the build (a worker of it has polled the deployment's task queue). */
async function hasPolled(client: Client, target: WorkerDeploymentVersion): Promise<boolean> {
  const described = await client.workflowService
    .describeWorkerDeployment({ namespace: client.options.namespace, deploymentName: target.deploymentName })
    .catch(() => undefined);
  return (
    described?.workerDeploymentInfo?.versionSummaries?.some(
      (v) => v.deploymentVersion?.buildId === target.buildId,
    ) ?? false
  );
}

async function* candidates(
  client: Client,
  config: Config,
  target: { deploymentName: string; buildId: string },
  options: MoveRunsOptions,
): AsyncIterable<RunToMove> {
  if (options.executions.length > 0) {
    for (const id of options.executions) {
      const description = await client.workflow.getHandle(id).describe();
      if (description.status.name !== 'RUNNING') throw new Error(`Execution ${id} is not running.`);
      yield { workflowId: id, runId: description.runId };
    }
    return;
  }
  const pinned = pinnedElsewhereQuery(config.temporal.taskQueue, target, options.from);
  const query = options.query ? `${pinned} AND (${options.query})` : pinned;
  for await (const run of client.workflow.list({ query }))
    yield { workflowId: run.workflowId, runId: run.runId };
}

function describeOutcome(outcome: MoveOutcome, target: string): string {
  const from = outcome.fromBuild ?? '(unversioned)';
  switch (outcome.result) {
    case 'moved':
      return `moved       ${outcome.workflowId} from build ${from}`;
    case 'would-move':
      return `would move  ${outcome.workflowId} from build ${from} (replays on ${target})`;
    case 'kept':
      return `kept        ${outcome.workflowId} on build ${from}: does not replay on ${target}: ${outcome.reason}`;
  }
}

function summary(outcomes: MoveOutcome[], target: string): string {
  const count = (result: MoveOutcome['result']) => outcomes.filter((o) => o.result === result).length;
  if (outcomes.length === 0) return `No running executions to move onto build ${target}.`;
  const parts = [
    count('moved') > 0 && `${count('moved')} moved`,
    count('would-move') > 0 && `${count('would-move')} would move`,
    count('kept') > 0 &&
      `${count('kept')} kept on their build (keep a worker of it running until they finish)`,
  ].filter(Boolean);
  return parts.join(', ') + '.';
}
