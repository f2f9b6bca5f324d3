/**
 * A workspace's share of the worker's step local activity (WORKER_LOCAL_CALL_SLOTS_PER_WORKSPACE,
 * workers/activities/step-slots.ts): past it, a connector step is not attempted in the local activity
 * but deferred to a regular activity with all its attempts; the execution shows it as any step, and
 * another workspace's step still runs in the local activity meanwhile.
 */
import { expect } from 'chai';
import { temporal } from '@temporalio/proto';
import { createWorkflow, definition, httpStep, stepOf, trigger, waitForExecution } from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { startTestService, type TestService } from '../support/stack';

describe('step deferral past a workspace share of the worker', function () {
  this.timeout(120_000);
  let service: TestService;
  let receiver: Receiver;
  before(async function () {
    // A share of one call, and nothing to borrow past it: half of two local activity slots is one call.
    service = await startTestService({
      env: { WORKER_LOCAL_CALL_SLOTS_PER_WORKSPACE: '1', WORKER_LOCAL_ACTIVITY_SLOTS: '2' },
    });
    receiver = await Receiver.start();
    receiver.replyAlways((request) =>
      request.path === '/slow'
        ? { status: 200, body: { ok: 'slow' }, delayMs: 1500 }
        : { body: { ok: 'fast' } },
    );
  });
  after(async () => {
    await receiver?.stop();
    await service?.stop();
  });

  /** Whether the run's step went to a regular activity (an ActivityTaskScheduled event in its history). */
  async function ranAsActivity(executionId: string): Promise<boolean> {
    const history = await service.runtime.services.temporal.client.workflow
      .getHandle(executionId)
      .fetchHistory();
    return (history.events ?? []).some(
      (event) => event.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
    );
  }

  it("runs a workspace's calls past its share as activities, which succeed with one attempt", async () => {
    const { key } = await service.newWorkspace();
    const api = service.api(key);
    const workflow = await createWorkflow(
      api,
      definition([
        httpStep('call', { method: 'POST', url: `${receiver.url}/slow` }, { retry: { max_attempts: 2 } }),
      ]),
    );
    const ids = await Promise.all([1, 2, 3].map((n) => trigger(api, workflow, { n })));
    const executions = await Promise.all(ids.map((id) => waitForExecution(api, id)));
    for (const execution of executions) {
      expect(execution.status, JSON.stringify(execution)).to.equal('success');
      const step = stepOf(execution, 'call');
      expect(step, JSON.stringify(step)).to.include({ status: 'success', attempts: 1 });
      expect(step.output).to.deep.include({ status: 200 });
      expect(step.input, 'the request as sent').to.deep.include({ method: 'POST' });
    }
    const deferred = (await Promise.all(ids.map(ranAsActivity))).filter(Boolean).length;
    expect(deferred, 'the calls past the share of one ran as activities').to.be.at.least(1);
    expect(deferred, 'the first call ran in the local activity').to.be.at.most(2);
  });

  it("still runs another workspace's call in the local activity while one holds its share", async () => {
    const busy = await service.newWorkspace();
    const other = await service.newWorkspace();
    const slow = await createWorkflow(
      service.api(busy.key),
      definition([httpStep('call', { method: 'POST', url: `${receiver.url}/slow` })]),
    );
    const fast = await createWorkflow(
      service.api(other.key),
      definition([httpStep('call', { method: 'POST', url: `${receiver.url}/fast` })]),
    );
    const busyRuns = await Promise.all([1, 2].map((n) => trigger(service.api(busy.key), slow, { n })));
    const otherRun = await trigger(service.api(other.key), fast);
    const execution = await waitForExecution(service.api(other.key), otherRun);
    expect(execution.status).to.equal('success');
    expect(await ranAsActivity(otherRun), "the other workspace's call ran in the local activity").to.equal(
      false,
    );
    await Promise.all(busyRuns.map((id) => waitForExecution(service.api(busy.key), id)));
  });
});
