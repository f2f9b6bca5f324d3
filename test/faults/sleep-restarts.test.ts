/**
 * Fault: sleep steps (docs/definitions.md#sleep) are durable. The worker is killed (SIGKILL) and started
 * again while executions sleep; then every process (worker, API, Temporal) is killed and started again on the
 * same data. Each sleep still wakes at the time its read showed, and its execution goes on.
 */
import { expect } from 'chai';
import { rulesStep, stepOf, waitForExecution, type ExecutionBody } from '../support/fixtures';
import { startScenario, type Scenario } from './scenario';

/** How late after its `until` a timer may fire on a loaded machine (it never fires early). */
const LATE_MS = 3000;

describe('fault: processes restarted while executions sleep @integration @faults', function () {
  this.timeout(300_000);
  let scenario: Scenario;
  /** Woken after the worker's restart; after every process's restart. */
  let early: { id: string; until: string };
  let late: { id: string; until: string };

  before(async () => {
    scenario = await startScenario(() => [
      { id: 'pause', kind: 'sleep', until: '{{ input.at }}' },
      rulesStep('after', [{ when: 'true', output: 'woke' }]),
    ]);
    const { deployment } = scenario;
    const sleepUntil = async (ms: number) => {
      const at = new Date(Date.now() + ms).toISOString();
      const res = await deployment
        .client()
        .post(`/v1/workflows/${scenario.workflowId}/trigger`, { at })
        .expect(202);
      const id = res.body.execution_id as string;
      const waiting = await waitForExecution(deployment.client(), id, (e) => e.status === 'waiting');
      return { id, until: stepOf(waiting, 'pause').waiting_for!.until };
    };
    early = await sleepUntil(8000);
    late = await sleepUntil(40_000);

    await deployment.worker.kill('SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await deployment.startWorker();
    await waitForExecution(deployment.client(), early.id, undefined, 60_000);

    await Promise.all([
      deployment.worker.kill('SIGKILL'),
      deployment.api.kill('SIGKILL'),
      deployment.killTemporal(),
    ]);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    await deployment.startTemporal();
    await deployment.startApi();
    await deployment.startWorker();
  });
  after(async () => scenario?.stop());

  async function woke(execution: { id: string; until: string }): Promise<ExecutionBody> {
    const done = await waitForExecution(scenario.deployment.client(), execution.id, undefined, 90_000);
    expect(done.status, JSON.stringify(done.error)).to.equal('success');
    expect(stepOf(done, 'after').output).to.equal('woke');
    const pause = stepOf(done, 'pause');
    expect(pause.output).to.deep.equal({ slept_until: execution.until });
    const lateBy = Date.parse(pause.finished_at!) - Date.parse(execution.until);
    expect(lateBy, 'ms after its until that the sleep ended').to.be.within(0, LATE_MS);
    return done;
  }

  it('wakes at its time after the worker was killed and started again while it slept', async () => {
    await woke(early);
  });

  it('wakes at its time after the worker, the API and Temporal were all killed and started again', async () => {
    await woke(late);
  });
});
