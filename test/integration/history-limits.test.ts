/**
 * Temporal's history limits (50 MB, 51,200 events): a run whose steps record more than that fails
 * cleanly with `history_too_large` at the step it could not run, instead of being terminated by Temporal.
 */
import { expect } from 'chai';
import {
  createWorkflow,
  definition,
  expectError,
  rulesStep,
  trigger,
  type ExecutionBody,
} from '../support/fixtures';
import { startTestService, type TestService } from '../support/stack';

/** Each step's output: a string of about 1 MB (step outputs may hold up to 1.25 MB). */
const STEP_OUTPUT_CHARS = 1024 * 1024;
/** 60 MB of step outputs in all: past Temporal's 50 MB. */
const STEPS = 60;

describe('history limits @integration', function () {
  this.timeout(300_000);
  let service: TestService;
  before(async () => {
    service = await startTestService();
  });
  after(async () => service?.stop());

  it('fails a run whose step outputs would pass 50 MB with history_too_large, before Temporal would end it', async () => {
    const steps = Array.from({ length: STEPS }, (_, i) =>
      rulesStep(`big${i + 1}`, [{ when: 'true', output: `{{ $pad("", ${STEP_OUTPUT_CHARS}, "x") }}` }]),
    );
    const workflowId = await createWorkflow(service.api(), definition(steps));
    const id = await trigger(service.api(), workflowId);

    // Wait through Temporal: polling the API would read the whole (40 MB) history each time.
    const handle = service.runtime.services.temporal.client.workflow.getHandle(id);
    await handle.result().catch(() => undefined);
    expect((await handle.describe()).status.name, 'Temporal status').to.equal('FAILED');

    const res = await service.api().get(`/v1/executions/${id}`).expect(200);
    const execution = res.body as ExecutionBody;
    expect(execution.status).to.equal('failed');
    expect(execution.error?.code, JSON.stringify(execution.error)).to.equal('history_too_large');
    const ran = execution.steps.filter((step) => step.id !== 'trigger' && step.status === 'success');
    const stoppedAt = Number(execution.error!.step!.replace('big', ''));
    expect(stoppedAt, 'the step it stopped before').to.equal(ran.length + 1);
    // It used most of what Temporal allows: about 40 MB of 1 MB outputs.
    expect(ran.length).to.be.within(35, 45);
    expect(execution.error!.message).to.match(/history reached \d+\.\d MB/);

    // A retry would carry those 40 MB of records in the new run's input: refused, clearly.
    const retry = await service.api().post(`/v1/executions/${id}/retry`);
    expectError(retry, 413, 'payload_too_large');
    expect((retry.body as { error: { message: string } }).error.message).to.match(/cannot be retried/);
  });
});
