/**
 * When no worker serves a run (docs/api.md#when-no-worker-serves-a-run): the API alone, and worker
 * runtimes of chosen builds started and stopped by each test, against the real dev server. Approve, cancel
 * and retry answer 503 `worker_unavailable` naming the build, at once, and did nothing: once a worker of
 * the build is back, the run is as it was, and the same request succeeds. A decision that reaches the
 * workflow after its `apply_by` is refused by the workflow itself, so a decision sent to a worker that had
 * just crashed (still listed as polling) answers 503 too, and is not applied when the build comes back.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { expect } from 'chai';
import { projectRoot } from '../../platform/paths';
import type { Runtime } from '../../processes/runtime';
import { loadOrCreateSecretsKey } from '../../platform/secrets/cipher';
import { buildWithoutWorker } from '../../src/executions/worker-presence';
import { DECIDE_UPDATE, DECISION_TOO_LATE, type ApprovalDecisionRequest } from '../../core/execution-types';
import {
  createWorkflow,
  definition,
  expectError,
  FAST_RETRY,
  httpStep,
  rulesStep,
  stepOf,
  trigger,
  waitForExecution,
} from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { startWorkerOfBuild as startWorker } from '../support/worker-builds';
import { startTestService, tempDir, type TestService } from '../support/stack';
import { sleep, waitFor } from '../support/wait';

const APPROVAL_STEPS = [
  rulesStep('prepare', [{ when: 'true', output: { amount: '{{ input.amount }}' } }]),
  { id: 'review', kind: 'approval', name: 'Review', message: 'Approve {{ input.amount }}?' },
  rulesStep('after', [{ when: 'true', output: '{{ steps.review.output.decision }}' }]),
];

/** Far below the 5 s a Temporal call may take: the answer comes from the task queue's pollers alone. */
const PROMPT_MS = 2_000;

describe('deploys: no worker of the build a run needs @integration', function () {
  this.timeout(120_000);
  let api: TestService;
  let receiver: Receiver;
  const workers: Runtime[] = [];

  beforeEach(async () => {
    // The API alone; each test starts (and stops) the workers of its builds.
    api = await startTestService({ db: 'postgres', worker: false });
    receiver = await Receiver.start();
  });
  afterEach(async () => {
    for (const worker of workers.splice(0)) await worker.stop();
    await receiver.stop();
    await api.stop();
  });

  async function startBuild(buildId: string): Promise<Runtime> {
    const worker = await startWorker(api.config, { rollout: 'rolling', buildId });
    workers.push(worker);
    return worker;
  }

  /** Stops a worker gracefully, as a deploy or a process manager does, until the API sees it gone. */
  async function stopBuild(worker: Runtime): Promise<void> {
    workers.splice(workers.indexOf(worker), 1);
    await worker.stop();
    await waitFor(async () => (await buildWithoutWorker(api.runtime.services)) !== undefined, {
      timeoutMs: 10_000,
      what: 'the stopped worker to stop counting as running',
    });
  }

  async function waitingRun(): Promise<string> {
    const workflowId = await createWorkflow(api.api(), definition(APPROVAL_STEPS));
    const id = await trigger(api.api(), workflowId, { amount: 10 });
    await waitForExecution(api.api(), id, (e) => e.status === 'waiting');
    return id;
  }

  /** A worker of the build is back and has had the time to take whatever Temporal held for the run. */
  async function restartBuild(buildId: string): Promise<void> {
    await startBuild(buildId);
    await waitFor(async () => (await buildWithoutWorker(api.runtime.services)) === undefined, {
      timeoutMs: 10_000,
      what: `a worker of build ${buildId} polling`,
    });
    await sleep(2_000);
  }

  async function timed<T>(send: () => Promise<T>): Promise<[T, number]> {
    const startedAt = Date.now();
    const result = await send();
    return [result, Date.now() - startedAt];
  }

  function expectWorkerUnavailable(
    res: { status: number; body: unknown; headers: Record<string, string> },
    buildId: string,
  ): void {
    expectError(res, 503, 'worker_unavailable');
    const error = (res.body as { error: { message: string; details: { build_id?: string }[] } }).error;
    expect(error.message).to.contain(`build ${buildId}`).and.contain('did nothing');
    expect(error.details.map((d) => d.build_id)).to.deep.equal([buildId]);
    expect(Number(res.headers['retry-after'])).to.be.greaterThan(0);
  }

  describe('approve', () => {
    it('answers 503 worker_unavailable naming the run`s build, at once, and decides nothing', async () => {
      const worker = await startBuild('build-approve');
      const id = await waitingRun();
      await stopBuild(worker);

      const [res, ms] = await timed(() => api.api().post(`/v1/executions/${id}/steps/review/approve`));
      expectWorkerUnavailable(res, 'build-approve');
      expect(res.body.error.message).to.contain('will not apply later');
      expect(ms, 'answered from the pollers, not after a deadline').to.be.below(PROMPT_MS);

      await restartBuild('build-approve');
      const after = await waitForExecution(api.api(), id, () => true);
      expect(after.status).to.equal('waiting');
      expect(stepOf(after, 'review')).to.include({ status: 'waiting', output: null });
    });

    it('decides once a worker of the build is back', async () => {
      const worker = await startBuild('build-back');
      const id = await waitingRun();
      await stopBuild(worker);
      expectError(
        await api.api().post(`/v1/executions/${id}/steps/review/reject`),
        503,
        'worker_unavailable',
      );

      await restartBuild('build-back');
      await api.api().post(`/v1/executions/${id}/steps/review/approve`).expect(200);
      const done = await waitForExecution(api.api(), id);
      expect(done.status, JSON.stringify(done.error)).to.equal('success');
      expect(stepOf(done, 'review').output).to.include({ decision: 'approved' });
    });

    it('answers 200 for a decision its worker applies late, while a slow step after it holds the task', async () => {
      await startBuild('build-slow');
      receiver.replyOnceTo('/slow', { status: 200, body: { ok: true }, delayMs: 7_000 });
      const workflowId = await createWorkflow(
        api.api(),
        definition([
          { id: 'review', kind: 'approval', name: 'Review', message: 'Go?' },
          httpStep('call', { method: 'POST', url: `${receiver.url}/slow`, body: {} }),
        ]),
      );
      const id = await trigger(api.api(), workflowId);
      await waitForExecution(api.api(), id, (e) => e.status === 'waiting');

      // The worker sends the decision's acceptance with the task, once the slow step's first attempt ends.
      const [res, ms] = await timed(() => api.api().post(`/v1/executions/${id}/steps/review/approve`));
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.output).to.include({ decision: 'approved' });
      expect(ms, 'past the decision`s own deadline').to.be.at.least(5_000);
      expect((await waitForExecution(api.api(), id)).status).to.equal('success');
    });
  });

  describe('cancel', () => {
    it('answers 503 worker_unavailable naming the run`s build, at once, and cancels nothing', async () => {
      const worker = await startBuild('build-cancel');
      const id = await waitingRun();
      await stopBuild(worker);

      const [res, ms] = await timed(() => api.api().post(`/v1/executions/${id}/cancel`));
      expectWorkerUnavailable(res, 'build-cancel');
      expect(ms).to.be.below(PROMPT_MS);

      await restartBuild('build-cancel');
      expect((await waitForExecution(api.api(), id, () => true)).status).to.equal('waiting');
      await api.api().post(`/v1/executions/${id}/cancel`).expect(202);
      expect((await waitForExecution(api.api(), id)).status).to.equal('canceled');
    });
  });

  describe('retry', () => {
    it('answers 503 worker_unavailable naming the current build when none of its workers runs', async () => {
      const worker = await startBuild('build-retry');
      receiver.replyOnceTo('/fails-once', { status: 500, body: 'down' });
      const workflowId = await createWorkflow(
        api.api(),
        definition([
          httpStep(
            'call',
            { method: 'POST', url: `${receiver.url}/fails-once`, body: {} },
            { retry: { ...FAST_RETRY, max_attempts: 1 } },
          ),
        ]),
      );
      const id = await trigger(api.api(), workflowId);
      expect((await waitForExecution(api.api(), id)).status).to.equal('failed');
      await stopBuild(worker);

      const [res, ms] = await timed(() => api.api().post(`/v1/executions/${id}/retry`));
      expectWorkerUnavailable(res, 'build-retry');
      expect(ms).to.be.below(PROMPT_MS);

      await restartBuild('build-retry');
      expect((await waitForExecution(api.api(), id, () => true)).status, 'no run was started').to.equal(
        'failed',
      );
      await api.api().post(`/v1/executions/${id}/retry`).expect(202);
      const done = await waitForExecution(api.api(), id, (e) => e.status === 'success', 20_000);
      expect(stepOf(done, 'call').status).to.equal('success');
    });
  });

  describe('a worker that has just started', () => {
    it('counts as serving the moment its start returns with its build current', async () => {
      // The build is current once one poll registered it; the task queue lists the poller a moment later.
      await startBuild('build-fresh');
      expect(await buildWithoutWorker(api.runtime.services), 'no worker of the current build').to.equal(
        undefined,
      );
    });
  });

  describe('a worker that crashed a moment ago', () => {
    /** `npm run start:worker` of the build in a child process, killed without a chance to say goodbye. */
    function startWorkerProcess(buildId: string): ChildProcess {
      const config = api.config;
      return spawn(process.execPath, [path.join(projectRoot, 'dist/processes/worker-main.js')], {
        env: {
          ...process.env,
          DATA_DIR: tempDir(),
          DATABASE_URL: config.databaseUrl!,
          TEMPORAL_ADDRESS: config.temporal.address!,
          TEMPORAL_TASK_QUEUE: config.temporal.taskQueue,
          SECRETS_KEY: loadOrCreateSecretsKey(config.secretsKey, config.dataDir),
          WORKER_BUILD_ID: buildId,
          WORKER_ROLLOUT: 'rolling',
          LOG_LEVEL: 'silent',
        },
        stdio: 'ignore',
      });
    }
    let child: ChildProcess | undefined;
    afterEach(() => child?.kill('SIGKILL'));

    it('answers 503 when the decision is not taken in time, and it is not applied when the build is back', async () => {
      child = startWorkerProcess('build-crashed');
      await waitFor(async () => (await buildWithoutWorker(api.runtime.services)) === undefined, {
        timeoutMs: 60_000,
        what: 'the worker process polling',
      });
      const id = await waitingRun();
      child.kill('SIGKILL');
      await new Promise((resolve) => child!.once('exit', resolve));
      expect(await buildWithoutWorker(api.runtime.services), 'its poller still looks alive').to.equal(
        undefined,
      );

      const [res, ms] = await timed(() => api.api().post(`/v1/executions/${id}/steps/review/approve`));
      expectWorkerUnavailable(res, 'build-crashed');
      expect(res.body.error.message).to.contain('will not apply later');
      expect(ms, 'after the decision`s deadline').to.be.at.least(4_000);

      // Temporal held the Update for the run; the build's worker now gets it, after its apply_by.
      await restartBuild('build-crashed');
      await sleep(6_000); // past the sticky queue's 5 s: the run's task goes to the new worker
      const after = await waitForExecution(api.api(), id, () => true);
      expect(stepOf(after, 'review')).to.include({ status: 'waiting', output: null });

      await api.api().post(`/v1/executions/${id}/steps/review/approve`).expect(200);
      expect((await waitForExecution(api.api(), id)).status).to.equal('success');
    });
  });

  describe('a decision`s apply_by', () => {
    async function decide(id: string, applyBy: number): Promise<unknown> {
      const request: ApprovalDecisionRequest = {
        step: 'review',
        decision: 'approve',
        comment: null,
        decided_by: 'key_test',
        apply_by: applyBy,
      };
      return api.runtime.services.temporal.client.workflow
        .getHandle(id)
        .executeUpdate(DECIDE_UPDATE, { args: [request] })
        .catch((error: unknown) => error);
    }

    it('is refused by the workflow once passed, and the step still waits', async () => {
      await startBuild('build-apply-by');
      const id = await waitingRun();

      const refused = await decide(id, Date.now() - 1_000);
      expect(refused).to.be.instanceOf(WorkflowUpdateFailedError);
      const cause = (refused as WorkflowUpdateFailedError).cause;
      expect(cause).to.be.instanceOf(ApplicationFailure);
      expect((cause as ApplicationFailure).type).to.equal(DECISION_TOO_LATE);
      expect(stepOf(await waitForExecution(api.api(), id, () => true), 'review').status).to.equal('waiting');

      expect(await decide(id, Date.now() + 60_000)).to.include({ decision: 'approved' });
      expect((await waitForExecution(api.api(), id)).status).to.equal('success');
    });
  });
});
