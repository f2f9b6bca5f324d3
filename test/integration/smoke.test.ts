import { expect } from 'chai';
import { DB_KINDS, startTestService, type TestService } from '../support/stack';
import { waitFor } from '../support/wait';

for (const db of DB_KINDS) {
  describe(`smoke (${db}) @integration`, function () {
    let service: TestService;
    before(async function () {
      this.timeout(120_000);
      service = await startTestService({ db });
    });
    after(async () => service?.stop());

    it('runs the seeded demo workflow to success', async () => {
      const accepted = await service.api().post('/v1/workflows/customer-onboarding/trigger', { customer: 'Ada', plan: 'enterprise' }).expect(202);
      const id = accepted.body.execution_id as string;
      const execution = await waitFor(
        async () => {
          const res = await service.api().get(`/v1/executions/${id}`).expect(200);
          return res.body.status === 'success' ? res.body : undefined;
        },
        { what: 'the demo execution to succeed' },
      );
      expect(execution.steps.map((s: { id: string }) => s.id)).to.deep.equal(['trigger', 'route', 'welcome']);
    });
  });
}
