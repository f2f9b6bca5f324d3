/**
 * The trigger endpoint (docs/api.md#workflows, #idempotency): input validation, version pinning, idempotency
 * keys.
 */
import { expect } from 'chai';
import {
  createWorkflow,
  definition,
  expectError,
  rulesStep,
  trigger,
  waitForExecution,
} from '../support/fixtures';
import { DB_KINDS, startTestService, type TestService } from '../support/stack';
import { waitFor } from '../support/wait';

const inputSchema = {
  type: 'object',
  required: ['customer', 'plan'],
  properties: {
    customer: { type: 'string' },
    plan: { type: 'string', enum: ['starter', 'pro'] },
    seats: { type: 'integer', default: 1 },
  },
  additionalProperties: false,
};

for (const db of DB_KINDS) {
  describe(`trigger (${db}) @integration`, function () {
    let service: TestService;
    let workflowId: string;
    before(async function () {
      this.timeout(120_000);
      service = await startTestService({ db });
      workflowId = await createWorkflow(
        service.api(),
        definition([rulesStep('echo', [{ when: 'true', output: '{{ input }}' }])], {
          input_schema: inputSchema,
        }),
      );
    });
    after(async () => service?.stop());

    it('answers 202 accepted with an execution id', async () => {
      const res = await service
        .api()
        .post(`/v1/workflows/${workflowId}/trigger`, { customer: 'Ada', plan: 'pro' })
        .expect(202);
      expect(res.body).to.have.keys(['status', 'execution_id']);
      expect(res.body.status).to.equal('accepted');
      expect(res.body.execution_id).to.match(/^ex_[A-Za-z0-9]{24}$/);
    });

    it('answers 400 invalid_input with the path of each problem', async () => {
      const res = await service
        .api()
        .post(`/v1/workflows/${workflowId}/trigger`, { customer: 7, plan: 'gold', extra: 1 });
      expectError(res, 400, 'invalid_input');
      const paths = res.body.error.details.map((d: { path: string }) => d.path);
      expect(paths).to.include.members(['/customer', '/plan', '/extra']);
    });

    it('answers 400 invalid_input for a missing required field, naming it', async () => {
      const res = await service.api().post(`/v1/workflows/${workflowId}/trigger`, { customer: 'Ada' });
      expectError(res, 400, 'invalid_input');
      expect(res.body.error.details).to.deep.include({ path: '/plan', message: 'is required' });
    });

    it('answers 400 invalid_request for a body that is not an object', async () => {
      expectError(
        await service.api().post(`/v1/workflows/${workflowId}/trigger`, [1, 2]),
        400,
        'invalid_request',
      );
    });

    it('answers 404 workflow_not_found for an unknown workflow', async () => {
      const res = await service.api().post('/v1/workflows/no-such-workflow/trigger', {});
      expectError(res, 404, 'workflow_not_found');
      expect(res.body.error.message).to.equal("No workflow 'no-such-workflow' in this workspace.");
    });

    it('shows the received body as the trigger input and the validated input as its output', async () => {
      const id = await trigger(service.api(), workflowId, { customer: 'Ada', plan: 'pro' });
      const execution = await waitForExecution(service.api(), id);
      const triggerStep = execution.steps[0]!;
      expect(triggerStep).to.include({ id: 'trigger', kind: 'trigger', status: 'success' });
      expect(triggerStep.input).to.deep.equal({ customer: 'Ada', plan: 'pro' });
      expect(triggerStep.output).to.deep.equal({ customer: 'Ada', plan: 'pro', seats: 1 });
    });

    it('pins a version with ?version=N', async () => {
      const body = definition([rulesStep('v', [{ when: 'true', output: 'one' }])]);
      const id = await createWorkflow(service.api(), body);
      await service
        .api()
        .put(`/v1/workflows/${id}`, { ...body, steps: [rulesStep('v', [{ when: 'true', output: 'two' }])] })
        .expect(200);
      const res = await service.api().post(`/v1/workflows/${id}/trigger?version=1`, {}).expect(202);
      const execution = await waitForExecution(service.api(), res.body.execution_id);
      expect(execution.workflow_version).to.equal(1);
      expect(execution.steps[1]!.output).to.equal('one');
    });

    it('answers 404 for a pinned version that does not exist', async () => {
      expectError(
        await service
          .api()
          .post(`/v1/workflows/${workflowId}/trigger?version=99`, { customer: 'a', plan: 'pro' }),
        404,
        'workflow_not_found',
      );
    });

    describe('Idempotency-Key', () => {
      const send = (key: string, id = workflowId) =>
        service
          .api()
          .post(`/v1/workflows/${id}/trigger`, { customer: 'Ada', plan: 'pro' })
          .set('Idempotency-Key', key);

      it('answers the same execution id to the same key', async () => {
        const first = await send('order-1').expect(202);
        const second = await send('order-1').expect(202);
        expect(second.body.execution_id).to.equal(first.body.execution_id);
      });

      it('starts one run for many concurrent requests with one key', async () => {
        const responses = await Promise.all(Array.from({ length: 8 }, () => send('order-concurrent')));
        const ids = new Set(responses.map((r) => r.body.execution_id as string));
        expect(responses.map((r) => r.status)).to.deep.equal(Array(8).fill(202));
        expect(ids.size).to.equal(1);
        const [id] = [...ids];
        const { client } = service.runtime.services.temporal;
        // Visibility is eventually consistent: wait until it shows the run, then there must be exactly one.
        const count = await waitFor(
          async () => (await client.workflow.count(`WorkflowId = '${id}'`)).count || undefined,
          {
            what: 'the run to be visible',
          },
        );
        expect(count).to.equal(1);
      });

      it('starts a new execution for a new key', async () => {
        const first = await send('order-2').expect(202);
        const second = await send('order-3').expect(202);
        expect(second.body.execution_id).not.to.equal(first.body.execution_id);
      });

      it('scopes keys to the workflow', async () => {
        const other = await createWorkflow(
          service.api(),
          definition([rulesStep('a', [{ when: 'true' }])], { input_schema: inputSchema }),
        );
        const first = await send('shared-key').expect(202);
        const second = await send('shared-key', other).expect(202);
        expect(second.body.execution_id).not.to.equal(first.body.execution_id);
      });

      it('rejects an Idempotency-Key longer than 255 characters', async () => {
        expectError(await send('k'.repeat(256)), 400, 'invalid_request');
      });

      it('rejects an empty Idempotency-Key instead of taking it for none', async () => {
        expectError(await send(''), 400, 'invalid_request');
      });
    });
  });
}
