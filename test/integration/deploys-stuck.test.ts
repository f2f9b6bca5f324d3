/**
 * Runs stuck on a build (docs/operations.md#runs-stuck-on-a-build): a run moved onto a build whose workflow
 * code cannot replay it fails its next workflow task with a non-determinism error, which Temporal retries
 * for ever while the run still shows `waiting`. The API says so (`stalled`), from what any Temporal server
 * records, and the documented recovery (undo the move) resumes it. A build whose workflow code throws
 * (test/support/poison-build/workflows.ts) shows the same way, by its own reason.
 *
 * Like test/integration/deploys.test.ts: the API alone, worker builds A (the service's workflow code) and B
 * (test/support/next-build/workflows.ts, which cannot replay A's histories) on one task queue.
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import request from 'supertest';
import type { Runtime } from '../../processes/runtime';
import {
  createWorkflow,
  definition,
  rulesStep,
  trigger,
  waitForExecution,
  type ExecutionBody,
} from '../support/fixtures';
import { parsePrometheus } from '../support/prometheus';
import { startTestService, type TestService } from '../support/stack';
import {
  moveRun,
  nextBuildBundle,
  nudgeRun,
  poisonBuildBundle,
  startWorkerOfBuild,
  undoMove,
  versionOf,
} from '../support/worker-builds';

/** The built `switchyard` CLI (clients/typescript/src/cli). */
const CLI = resolve(__dirname, '../../../clients/typescript/dist/cli/main.js');

const APPROVAL_STEPS = [
  rulesStep('prepare', [{ when: 'true', output: { amount: '{{ input.amount }}' } }]),
  { id: 'review', kind: 'approval', name: 'Review', message: 'Approve {{ input.amount }}?' },
];

describe('deploys: runs stuck on a build @integration', function () {
  this.timeout(120_000);
  let api: TestService;
  const workers: Runtime[] = [];
  let buildA: Runtime;
  let buildB: Runtime;
  let waiting: string;

  beforeEach(async () => {
    // The API alone; the workers of builds A and B beside it, both polling.
    api = await startTestService({ db: 'postgres', worker: false });
    buildA = await startWorkerOfBuild(api.config, { rollout: 'rolling' });
    workers.push(buildA);
    const workflow = await createWorkflow(api.api(), definition(APPROVAL_STEPS));
    waiting = await trigger(api.api(), workflow, { amount: 10 });
    await waitForExecution(api.api(), waiting, (e) => e.status === 'waiting');
    buildB = await startWorkerOfBuild(api.config, { rollout: 'manual' }, await nextBuildBundle());
    workers.push(buildB);
  });
  afterEach(async () => {
    for (const worker of workers.splice(0)) await worker.stop();
    await api.stop();
  });

  const client = () => api.runtime.services.temporal.client;

  /** Moves the waiting run onto build B and gives it a workflow task there; waits until the API shows it stuck. */
  async function stickOnB(): Promise<ExecutionBody> {
    await moveRun(client(), waiting, versionOf(buildB));
    await nudgeRun(client(), waiting);
    return waitForExecution(api.api(), waiting, (e) => e.stalled !== null);
  }

  it('shows no stall for a run that waits on a build that replays it', async () => {
    const execution = await waitForExecution(api.api(), waiting, (e) => e.status === 'waiting');
    expect(execution.stalled).to.equal(null);
  });

  it('shows a run moved onto a build that cannot replay it as stalled by non-determinism on that build', async () => {
    const movedAt = Date.now();
    const execution = await stickOnB();
    expect(execution.status, 'the run still waits, as far as its steps go').to.equal('waiting');
    const stalled = execution.stalled!;
    expect(stalled.reason).to.equal('nondeterminism');
    expect(stalled.build_id).to.equal(versionOf(buildB).buildId);
    expect(stalled.build_id).to.not.equal(versionOf(buildA).buildId);
    expect(stalled.message).to.match(/nondeterminism/i);
    expect(stalled.message).to.not.match(/\n\s+at /); // a message, no stack trace
    expect(stalled.attempts).to.be.at.least(2);
    expect(Date.parse(stalled.since)).to.be.within(movedAt - 1_000, Date.now());
  });

  it('says so in `switchyard executions get`', async () => {
    await stickOnB();
    const { stdout } = await promisify(execFile)(process.execPath, [CLI, 'executions', 'get', waiting], {
      env: { PATH: process.env['PATH'], SWITCHYARD_URL: api.url, SWITCHYARD_API_KEY: api.adminKey },
    });
    expect(stdout).to.match(
      new RegExp(
        `^Stuck since \\S+ on build ${versionOf(buildB).buildId}: nondeterminism, ` +
          'workflow task attempt \\d+: \\[TMPRL1100\\] Nondeterminism error',
        'm',
      ),
    );
  });

  it("counts the failed workflow tasks in the Temporal SDK's metrics, by failure reason and task queue", async () => {
    await stickOnB();
    const page = await request(api.url).get('/metrics').expect(200);
    const failed = parsePrometheus(page.text).get('temporal_workflow_task_execution_failed');
    const ours = failed?.samples.filter(
      (sample) =>
        sample.labels['task_queue'] === api.config.temporal.taskQueue &&
        sample.labels['failure_reason'] === 'NonDeterminismError',
    );
    expect(ours?.reduce((sum, sample) => sum + sample.value, 0)).to.be.at.least(1);
  });

  it('clears the stall once the move is undone, and the run goes on on its own build', async () => {
    await stickOnB();
    await undoMove(client(), waiting);
    // The next attempt goes to build A (at the latest when B's attempt times out), which replays the run.
    const resumed = await waitForExecution(api.api(), waiting, (e) => e.stalled === null, 60_000);
    expect(resumed.status).to.equal('waiting');
    await api.api().post(`/v1/executions/${waiting}/steps/review/approve`).expect(200);
    const done = await waitForExecution(api.api(), waiting);
    expect(done.status, JSON.stringify(done.error)).to.equal('success');
    expect(done.stalled).to.equal(null);
  });

  it('shows a run whose workflow code throws on its build as stalled by a workflow code error', async () => {
    const poison = await startWorkerOfBuild(api.config, { rollout: 'rolling' }, await poisonBuildBundle());
    workers.push(poison);
    const workflow = await createWorkflow(api.api(), definition(APPROVAL_STEPS));
    const id = await trigger(api.api(), workflow, { amount: 20 });
    const execution = await waitForExecution(api.api(), id, (e) => e.stalled !== null);
    expect(execution.status).to.equal('running');
    expect(execution.stalled).to.include({
      reason: 'workflow_code_error',
      message: 'poison: this build cannot run executions',
      build_id: versionOf(poison).buildId,
    });
  });
});
