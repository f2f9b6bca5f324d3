/**
 * Deploys with Worker Deployment Versioning (docs/operations.md#deploys-worker-builds-and-versioning): two
 * worker builds of one task queue against one Temporal server and one PostgreSQL database, the API in its own
 * runtime.
 *
 * - rolling: build B, whose execution workflow cannot replay A's histories, becomes current while A's
 *   worker still runs: runs started under A finish on A, new runs and retries run on B.
 * - replace: A's worker is gone when B starts; B takes over the runs pinned to A.
 */
import { Worker } from '@temporalio/worker';
import { expect } from 'chai';
import type { Runtime } from '../../src/runtime';
import {
  createWorkflow,
  definition,
  FAST_RETRY,
  httpStep,
  rulesStep,
  trigger,
  waitForExecution,
} from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { startTestService, type TestService } from '../support/stack';
import { nextBuildBundle, startWorkerOfBuild as startWorker } from '../support/worker-builds';

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
      workers.push(await startWorker(api.config, { rollout: 'replace', buildId: 'build-2' }));
      await api.api().post(`/v1/executions/${waiting}/steps/review/approve`).expect(200);
      const done = await waitForExecution(api.api(), waiting);
      expect(done.status, JSON.stringify(done.error)).to.equal('success');
      expect(await buildOf(api, waiting)).to.equal('build-2');
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
