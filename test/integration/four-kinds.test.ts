/** One workflow with every step kind and an `if` that skips a step, end to end; its history replays. */
import { expect } from 'chai';
import { Worker } from '@temporalio/worker';
import { FakeAiProvider } from '../../scripts/fake-ai-provider';
import { workflowBundlePath } from '../../platform/paths';
import { createWorkflow, stepOf, trigger, uniqueId, waitForExecution } from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { startTestService, type TestService } from '../support/stack';

describe('all four step kinds @integration', function () {
  let service: TestService;
  let receiver: Receiver;
  let provider: FakeAiProvider;
  before(async function () {
    this.timeout(120_000);
    receiver = await Receiver.start();
    provider = await FakeAiProvider.start();
    service = await startTestService({ env: { AI_BASE_URL: provider.baseUrl, AI_MODEL: 'fake-model' } });
  });
  after(async () => {
    await service?.stop();
    await provider?.stop();
    await receiver?.stop();
  });

  it('runs rules, connector, ai and approval, skipping the step whose if is false', async () => {
    const workflowId = await createWorkflow(service.api(), {
      id: uniqueId('onboarding'),
      name: 'Onboarding with every kind',
      input_schema: {
        type: 'object',
        required: ['customer', 'plan'],
        properties: { customer: { type: 'string' }, plan: { type: 'string' } },
      },
      steps: [
        {
          id: 'route',
          kind: 'rules',
          rules: [{ when: "input.plan = 'enterprise'", output: { tier: 'high' } }],
          default: { tier: 'standard' },
        },
        {
          id: 'crm',
          kind: 'connector',
          connector: 'http',
          request: {
            method: 'POST',
            url: `${receiver.url}/customers`,
            body: { name: '{{ input.customer }}', tier: '{{ steps.route.output.tier }}' },
          },
        },
        { id: 'welcome', kind: 'ai', prompt: 'Write a one-line welcome for {{ input.customer }}.' },
        {
          id: 'discount',
          kind: 'connector',
          connector: 'http',
          if: "steps.route.output.tier = 'standard'",
          request: { url: `${receiver.url}/discount` },
        },
        {
          id: 'review',
          kind: 'approval',
          if: "steps.route.output.tier = 'high'",
          message: 'Approve {{ input.customer }}?',
          timeout: '1h',
        },
      ],
    });
    const id = await trigger(service.api(), workflowId, { customer: 'Ada', plan: 'enterprise' });
    const waiting = await waitForExecution(service.api(), id, (e) => e.status === 'waiting');
    expect(waiting.steps.map((s) => [s.id, s.status])).to.deep.equal([
      ['trigger', 'success'],
      ['route', 'success'],
      ['crm', 'success'],
      ['welcome', 'success'],
      ['discount', 'skipped'],
      ['review', 'waiting'],
    ]);
    await service
      .api()
      .post(`/v1/executions/${id}/steps/review/approve`, { comment: 'welcome aboard' })
      .expect(200);
    const done = await waitForExecution(service.api(), id);
    expect(done.status).to.equal('success');
    expect(stepOf(done, 'crm').input).to.deep.include({ body: { name: 'Ada', tier: 'high' } });
    expect((stepOf(done, 'welcome').output as { text: string }).text).to.include(
      'Write a one-line welcome for Ada.',
    );
    expect(stepOf(done, 'review').output).to.include({ decision: 'approved', comment: 'welcome aboard' });
    expect(receiver.requestsTo('/discount')).to.have.length(0);

    // The recorded history replays against the current workflow code: it is deterministic.
    const history = await service.runtime.services.temporal.client.workflow.getHandle(id).fetchHistory();
    await Worker.runReplayHistory({ workflowBundle: { codePath: workflowBundlePath } }, history);
  });
});
