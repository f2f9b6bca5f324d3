/**
 * Deploys with Worker Deployment Versioning (docs/operations.md#deploys-worker-builds-and-versioning): two
 * worker builds of one task queue against one Temporal server and one PostgreSQL database, the API in its own
 * runtime.
 *
 * - rolling: build B, whose execution workflow cannot replay A's histories, becomes current while A's
 *   worker still runs: runs started under A finish on A, new runs and retries run on B.
 * - replace: A's worker is gone when B starts; B takes over the runs pinned to A that replay on B's code.
 * - restart: an old build's worker started again after a newer build became current takes nothing back.
 * - move-runs: the admin command moves a run only when it replays on the target build's code.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { Worker } from '@temporalio/worker';
import { globalHandlers } from '@temporalio/worker/lib/workflow/vm-shared';
import { expect } from 'chai';
import { projectRoot } from '../../platform/paths';
import type { Runtime } from '../../processes/runtime';
import {
  createWorkflow,
  definition,
  FAST_RETRY,
  httpStep,
  rulesStep,
  trigger,
  waitForExecution,
} from '../support/fixtures';
import { capturingLogger } from '../support/log-capture';
import { Receiver } from '../support/receiver';
import { startTestService, type TestService } from '../support/stack';
import { nextBuildBundle, startWorkerOfBuild as startWorker } from '../support/worker-builds';

const execFileAsync = promisify(execFile);

const APPROVAL_STEPS = [
  rulesStep('prepare', [{ when: 'true', output: { amount: '{{ input.amount }}' } }]),
  { id: 'review', kind: 'approval', name: 'Review', message: 'Approve {{ input.amount }}?' },
  rulesStep('after', [{ when: 'true', output: '{{ steps.review.output.decision }}' }]),
];

/** The build a run of an execution was pinned to, as Temporal records it. */
async function buildOf(service: TestService, executionId: string): Promise<string | undefined> {
  const description = await service.runtime.services.temporal.client.workflow
    .getHandle(executionId)
    .describe();
  return description.raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId ?? undefined;
}

/** The deployment's current build, as Temporal routes new runs. */
async function currentBuild(service: TestService): Promise<string | undefined> {
  const { client } = service.runtime.services.temporal;
  const described = await client.workflowService.describeWorkerDeployment({
    namespace: client.options.namespace,
    deploymentName: service.config.workerVersioning!.deploymentName,
  });
  return described.workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId ?? undefined;
}

/** The build a run's versioning override pins it to, if it has one. */
async function overrideOf(service: TestService, executionId: string): Promise<string | undefined> {
  const description = await service.runtime.services.temporal.client.workflow
    .getHandle(executionId)
    .describe();
  return (
    description.raw.workflowExecutionInfo?.versioningInfo?.versioningOverride?.pinned?.version?.buildId ??
    undefined
  );
}

describe('deploys: worker versioning @integration', function () {
  this.timeout(120_000);
  let api: TestService;
  let receiver: Receiver;
  const workers: Runtime[] = [];

  beforeEach(async () => {
    // The API alone; each test starts the workers of its builds.
    api = await startTestService({ db: 'postgres', worker: false });
    receiver = await Receiver.start();
  });
  afterEach(async () => {
    for (const worker of workers.splice(0)) await worker.stop();
    await receiver.stop();
    await api.stop();
  });

  async function approvalWorkflow(): Promise<string> {
    return createWorkflow(api.api(), definition(APPROVAL_STEPS));
  }

  /** A workflow whose connector step fails once (the receiver answers 500), so a retry succeeds. */
  async function failingOnceWorkflow(path: string): Promise<string> {
    receiver.replyOnceTo(path, { status: 500, body: 'down' });
    return createWorkflow(
      api.api(),
      definition([
        httpStep(
          'call',
          { method: 'POST', url: `${receiver.url}${path}`, body: {} },
          {
            retry: { ...FAST_RETRY, max_attempts: 1 },
          },
        ),
      ]),
    );
  }

  describe('rolling: a new build becomes current while the old one still runs', () => {
    let buildA: string;
    let buildB: string;
    let waiting: string;
    let failed: string;

    beforeEach(async () => {
      workers.push(await startWorker(api.config, { rollout: 'rolling' }));
      waiting = await trigger(api.api(), await approvalWorkflow(), { amount: 10 });
      await waitForExecution(api.api(), waiting, (e) => e.status === 'waiting');
      failed = await trigger(api.api(), await failingOnceWorkflow('/deploy-fails-once'));
      expect((await waitForExecution(api.api(), failed)).status).to.equal('failed');
      buildA = (await buildOf(api, waiting))!;

      workers.push(await startWorker(api.config, { rollout: 'rolling' }, await nextBuildBundle()));
      buildB = workers[1]!.worker!.options.workerDeploymentOptions!.version.buildId;
      expect(buildB, 'the next build has its own build id').to.not.equal(buildA);
    });

    it('decides an approval that waited under the old build, and the run completes on the old build', async () => {
      await api.api().post(`/v1/executions/${waiting}/steps/review/approve`).expect(200);
      const done = await waitForExecution(api.api(), waiting);
      expect(done.status, JSON.stringify(done.error)).to.equal('success');
      expect(await buildOf(api, waiting)).to.equal(buildA);
    });

    it('retries a run that failed under the old build, on the new build', async () => {
      await api.api().post(`/v1/executions/${failed}/retry`).expect(202);
      const done = await waitForExecution(api.api(), failed, (e) => e.status === 'success', 20_000);
      expect(done.steps.map((s) => [s.id, s.status])).to.deep.equal([
        ['trigger', 'success'],
        ['call', 'success'],
      ]);
      expect(await buildOf(api, failed)).to.equal(buildB);
    });

    it('starts new runs on the new build', async () => {
      const id = await trigger(api.api(), await approvalWorkflow(), { amount: 20 });
      await waitForExecution(api.api(), id, (e) => e.status === 'waiting');
      expect(await buildOf(api, id)).to.equal(buildB);
      await api.api().post(`/v1/executions/${id}/steps/review/reject`).expect(200);
      expect((await waitForExecution(api.api(), id)).status).to.equal('failed');
    });

    it('needed the pinning: the old build`s history does not replay on the new build', async () => {
      const history = await api.runtime.services.temporal.client.workflow.getHandle(waiting).fetchHistory();
      const failure = await Worker.runReplayHistory(
        { workflowBundle: await nextBuildBundle() },
        history,
        waiting,
      ).then(
        () => undefined,
        (error: unknown) => error as Error,
      );
      expect(failure?.name, String(failure)).to.equal('DeterminismViolationError');
    });
  });

  describe('replace: the old build is gone when the new one starts', () => {
    it('moves a run pinned to the old build onto the new one, where its approval completes', async () => {
      const old = await startWorker(api.config, { rollout: 'replace', buildId: 'build-1' });
      const waiting = await trigger(api.api(), await approvalWorkflow(), { amount: 30 });
      await waitForExecution(api.api(), waiting, (e) => e.status === 'waiting');
      expect(await buildOf(api, waiting)).to.equal('build-1');
      await old.stop();

      // The same workflow code under a new build id (a compatible change: see test/replay).
      const next = await startWorker(api.config, { rollout: 'replace', buildId: 'build-2' });
      workers.push(next);
      // It moves runs in the background once it polls.
      expect((await next.runsAdopted!).map((o) => [o.workflowId, o.result])).to.deep.equal([
        [waiting, 'moved'],
      ]);
      await api.api().post(`/v1/executions/${waiting}/steps/review/approve`).expect(200);
      const done = await waitForExecution(api.api(), waiting);
      expect(done.status, JSON.stringify(done.error)).to.equal('success');
      expect(await buildOf(api, waiting)).to.equal('build-2');
    });
  });

  describe('replace: only runs that replay on the new build move', () => {
    it('leaves a run whose history the new build cannot replay on its build, and moves it to a build that can', async () => {
      const old = await startWorker(api.config, { rollout: 'replace', buildId: 'build-1' });
      const waiting = await trigger(api.api(), await approvalWorkflow(), { amount: 31 });
      await waitForExecution(api.api(), waiting, (e) => e.status === 'waiting');
      await old.stop();

      // An incompatible build: its execution workflow starts with a timer the old history lacks.
      const incompatible = await startWorker(
        api.config,
        { rollout: 'replace', buildId: 'build-2' },
        await nextBuildBundle(),
      );
      workers.push(incompatible);
      expect(await currentBuild(api)).to.equal('build-2');
      // The worker moves runs in the background after it starts.
      const outcomes = await incompatible.runsAdopted!;
      expect(outcomes.map((o) => [o.workflowId, o.result])).to.deep.equal([[waiting, 'kept']]);
      expect(outcomes[0]!.reason).to.match(/DeterminismViolation|Nondeterminism/i);
      expect(await buildOf(api, waiting), 'still pinned to the build that started it').to.equal('build-1');
      expect(await overrideOf(api, waiting), 'not moved').to.equal(undefined);

      // A compatible build (the same code under a new id) takes it.
      // A replay in this thread installs the SDK's promise hook; the move must not leave it behind.
      if (globalHandlers.installed) globalHandlers.uninstall();
      const compatible = await startWorker(api.config, { rollout: 'replace', buildId: 'build-3' });
      workers.push(compatible);
      const moved = await compatible.runsAdopted!;
      expect(globalHandlers.installed, 'the replay`s global hooks are removed').to.equal(false);
      expect(moved.map((o) => [o.workflowId, o.result, o.fromBuild])).to.deep.equal([
        [waiting, 'moved', 'build-1'],
      ]);
      expect(await overrideOf(api, waiting)).to.equal('build-3');
      await api.api().post(`/v1/executions/${waiting}/steps/review/approve`).expect(200);
      const done = await waitForExecution(api.api(), waiting);
      expect(done.status, JSON.stringify(done.error)).to.equal('success');
    });
  });

  describe('restart: an old build started again after a newer one became current', () => {
    it('takes nothing back: the newer build stays current, keeps its runs, and gets the new runs', async () => {
      const first = await startWorker(api.config, { buildId: 'old-build' });
      expect(await currentBuild(api)).to.equal('old-build');
      await first.stop();
      workers.push(await startWorker(api.config, {}, await nextBuildBundle()));
      const newBuild = await currentBuild(api);
      expect(newBuild).to.not.equal('old-build');
      const onNew = await trigger(api.api(), await approvalWorkflow(), { amount: 50 });
      await waitForExecution(api.api(), onNew, (e) => e.status === 'waiting');

      // The old build's worker again, with the default rollout setting (a process manager's restart).
      const logs = capturingLogger();
      const restarted = await startWorker(api.config, { buildId: 'old-build' }, undefined, logs.logger);
      workers.push(restarted);
      expect(restarted.runsAdopted, 'it moves nothing').to.equal(undefined);
      expect(await currentBuild(api), 'the newer build is still current').to.equal(newBuild);
      expect(logs.text()).to.match(/stays as it is and takes no new runs: this build was current before/);
      expect(await overrideOf(api, onNew), 'its run was not moved').to.equal(undefined);

      const next = await trigger(api.api(), await approvalWorkflow(), { amount: 51 });
      await waitForExecution(api.api(), next, (e) => e.status === 'waiting');
      expect(await buildOf(api, next), 'new runs go to the newer build').to.equal(newBuild);
      for (const id of [onNew, next]) {
        await api.api().post(`/v1/executions/${id}/steps/review/approve`).expect(200);
        const done = await waitForExecution(api.api(), id);
        expect(done.status, JSON.stringify(done.error)).to.equal('success');
      }
    });
  });

  describe('npm run admin -- move-runs: moves a run only where it replays', () => {
    /** The admin command of this checkout (its workflow code), as build `buildId`. */
    async function moveRuns(buildId: string, ...args: string[]) {
      try {
        const { stdout } = await execFileAsync(
          process.execPath,
          [path.join(projectRoot, 'dist/processes/admin.js'), 'move-runs', ...args],
          {
            env: {
              ...process.env,
              TEMPORAL_ADDRESS: api.config.temporal.address,
              TEMPORAL_NAMESPACE: api.config.temporal.namespace,
              TEMPORAL_TASK_QUEUE: api.config.temporal.taskQueue,
              WORKER_BUILD_ID: buildId,
              DATA_DIR: api.config.dataDir,
              DATABASE_URL: '',
            },
          },
        );
        return { stdout, stderr: '', code: 0 };
      } catch (error) {
        const failed = error as { stdout: string; stderr: string; code: number };
        return { stdout: failed.stdout, stderr: failed.stderr, code: failed.code };
      }
    }

    it('reports without --yes, moves with it, and keeps the run whose history does not replay', async () => {
      // A run of an incompatible build (its history starts with a timer this checkout's code lacks) ...
      workers.push(
        await startWorker(api.config, { rollout: 'rolling', buildId: 'next-1' }, await nextBuildBundle()),
      );
      const incompatible = await trigger(api.api(), await approvalWorkflow(), { amount: 60 });
      await waitForExecution(api.api(), incompatible, (e) => e.status === 'waiting');
      // ... and one of this checkout's code under another build id.
      workers.push(await startWorker(api.config, { rollout: 'rolling', buildId: 'same-code-1' }));
      const compatible = await trigger(api.api(), await approvalWorkflow(), { amount: 61 });
      await waitForExecution(api.api(), compatible, (e) => e.status === 'waiting');
      expect(await buildOf(api, compatible)).to.equal('same-code-1');

      const refused = await moveRuns('same-code-2', '--yes');
      expect(refused.code).to.equal(1);
      expect(refused.stderr).to.match(/No worker of build same-code-2 has polled yet: start one first/);

      // A worker of the target build that takes no new runs (runs can be pinned only to a build Temporal knows).
      workers.push(await startWorker(api.config, { rollout: 'manual', buildId: 'same-code-2' }));
      const dryRun = await moveRuns('same-code-2');
      expect(dryRun.code, dryRun.stderr).to.equal(3);
      expect(dryRun.stdout).to.match(/dry run: add --yes to move/);
      expect(dryRun.stdout).to.include(`would move  ${compatible} from build same-code-1`);
      expect(dryRun.stdout).to.match(
        new RegExp(`kept +${incompatible} on build next-1: does not replay on same-code-2`),
      );
      expect(await overrideOf(api, compatible), 'a dry run moves nothing').to.equal(undefined);

      // A query narrows the runs considered.
      const one = await moveRuns('same-code-2', '--query', `WorkflowId = '${compatible}'`);
      expect(one.code, one.stderr).to.equal(0);
      expect(one.stdout).to.include(`would move  ${compatible}`);
      expect(one.stdout).to.not.include(incompatible);

      const moved = await moveRuns('same-code-2', '--yes');
      expect(moved.code, moved.stderr).to.equal(3);
      expect(moved.stdout).to.include(`moved       ${compatible} from build same-code-1`);
      expect(moved.stdout).to.match(/1 moved, 1 kept on their build/);
      expect(await overrideOf(api, compatible)).to.equal('same-code-2');
      expect(await overrideOf(api, incompatible), 'the incompatible run stays').to.equal(undefined);

      // The moved run completes on the target build's worker.
      await api.api().post(`/v1/executions/${compatible}/steps/review/approve`).expect(200);
      expect((await waitForExecution(api.api(), compatible)).status).to.equal('success');
    });

    it('refuses a target build other than this checkout`s code', async () => {
      const result = await moveRuns('same-code-3', '--to', 'some-other-build', '--yes');
      expect(result.code).to.equal(1);
      expect(result.stderr).to.match(
        /This checkout's workflow code is build same-code-3, not some-other-build/,
      );
    });
  });

  describe('manual: the operator decides when a build takes new runs', () => {
    it('keeps new runs on the current build while a new build only polls', async () => {
      workers.push(await startWorker(api.config, { rollout: 'rolling', buildId: 'build-1' }));
      workers.push(await startWorker(api.config, { rollout: 'manual', buildId: 'build-2' }));
      const id = await trigger(api.api(), await approvalWorkflow(), { amount: 40 });
      await waitForExecution(api.api(), id, (e) => e.status === 'waiting');
      expect(await buildOf(api, id)).to.equal('build-1');
    });
  });
});
