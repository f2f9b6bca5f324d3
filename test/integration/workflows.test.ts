/** docs/definitions.md#versions: versioned workflow definitions, on both databases. */
import { expect } from 'chai';
import { createWorkflow, definition, expectError, rulesStep, uniqueId } from '../support/fixtures';
import { DB_KINDS, startTestService, type TestService } from '../support/stack';

const step = rulesStep('route', [{ when: 'true', output: { ok: true } }]);

for (const db of DB_KINDS) {
  describe(`workflows (${db}) @integration`, function () {
    let service: TestService;
    before(async function () {
      this.timeout(120_000);
      service = await startTestService({ db });
    });
    after(async () => service?.stop());

    it('seeds the demo workflow on first start', async () => {
      const res = await service.api().get('/v1/workflows/customer-onboarding').expect(200);
      expect(res.body).to.include({ id: 'customer-onboarding', version: 1 });
      expect(res.body.input_schema.required).to.deep.equal(['customer', 'plan']);
    });

    it('creates version 1 with 201', async () => {
      const body = definition([step], { description: 'd', trigger: { type: 'api' } });
      const res = await service.api().post('/v1/workflows', body).expect(201);
      expect(res.body).to.include({
        id: body['id'],
        name: 'Test workflow',
        description: 'd',
        version: 1,
        latest_version: 1,
      });
      expect(res.body.versions).to.have.length(1);
      expect(Date.parse(res.body.created_at)).to.be.a('number').and.not.NaN;
    });

    it('answers 409 workflow_exists for a taken id', async () => {
      const body = definition([step]);
      await createWorkflow(service.api(), body);
      expectError(await service.api().post('/v1/workflows', body), 409, 'workflow_exists');
    });

    it('saves a new version on PUT and reads the latest by default', async () => {
      const body = definition([step]);
      const id = await createWorkflow(service.api(), body);
      const put = await service
        .api()
        .put(`/v1/workflows/${id}`, { ...body, name: 'Renamed' })
        .expect(200);
      expect(put.body).to.include({ version: 2, name: 'Renamed' });
      const latest = await service.api().get(`/v1/workflows/${id}`).expect(200);
      expect(latest.body).to.include({ version: 2, name: 'Renamed' });
      expect(latest.body.versions.map((v: { version: number }) => v.version)).to.deep.equal([1, 2]);
    });

    it('reads an older version with ?version=N', async () => {
      const body = definition([step]);
      const id = await createWorkflow(service.api(), body);
      await service
        .api()
        .put(`/v1/workflows/${id}`, { ...body, name: 'Second' })
        .expect(200);
      const first = await service.api().get(`/v1/workflows/${id}?version=1`).expect(200);
      expect(first.body).to.include({ version: 1, name: 'Test workflow', latest_version: 2 });
    });

    it('answers 404 for a version that does not exist', async () => {
      const id = await createWorkflow(service.api(), definition([step]));
      expectError(await service.api().get(`/v1/workflows/${id}?version=7`), 404, 'workflow_not_found');
    });

    it('lists the 20 newest versions on a read, and pages through all of them newest first', async () => {
      const body = definition([step]);
      const id = await createWorkflow(service.api(), body);
      for (let i = 2; i <= 24; i++) await service.api().put(`/v1/workflows/${id}`, body).expect(200);
      const read = await service.api().get(`/v1/workflows/${id}`).expect(200);
      const numbers = (list: { version: number }[]) => list.map((v) => v.version);
      expect(numbers(read.body.versions)).to.deep.equal(Array.from({ length: 20 }, (_, i) => i + 5));

      const pages: number[][] = [];
      let cursor: string | null = null;
      do {
        const query: string = cursor ? `&cursor=${cursor}` : '';
        const page = await service.api().get(`/v1/workflows/${id}/versions?limit=10${query}`).expect(200);
        expect(page.body.data[0]).to.have.all.keys('version', 'created_at');
        pages.push(numbers(page.body.data));
        cursor = page.body.next_cursor;
      } while (cursor);
      expect(pages).to.deep.equal([
        [24, 23, 22, 21, 20, 19, 18, 17, 16, 15],
        [14, 13, 12, 11, 10, 9, 8, 7, 6, 5],
        [4, 3, 2, 1],
      ]);
      const first = await service.api().get(`/v1/workflows/${id}/versions`).expect(200);
      expect(first.body.data).to.have.length(20);
    });

    it("refuses another workflow's versions cursor, and answers 404 for an unknown workflow's versions", async () => {
      const id = await createWorkflow(service.api(), definition([step]));
      const other = await createWorkflow(service.api(), definition([step]));
      for (const workflow of [id, other])
        await service
          .api()
          .put(`/v1/workflows/${workflow}`, definition([step], { id: workflow }))
          .expect(200);
      const page = await service.api().get(`/v1/workflows/${id}/versions?limit=1`).expect(200);
      expectError(
        await service.api().get(`/v1/workflows/${other}/versions?cursor=${page.body.next_cursor as string}`),
        400,
        'invalid_request',
      );
      expectError(await service.api().get(`/v1/workflows/${uniqueId()}/versions`), 404, 'workflow_not_found');
    });

    it('accepts a PUT body without id and refuses a different one', async () => {
      const body = definition([step]);
      const id = await createWorkflow(service.api(), body);
      const { id: _ignored, ...withoutId } = body;
      await service.api().put(`/v1/workflows/${id}`, withoutId).expect(200);
      expectError(
        await service.api().put(`/v1/workflows/${id}`, { ...body, id: 'other' }),
        400,
        'invalid_definition',
      );
    });

    it('answers 404 to a PUT of an unknown workflow', async () => {
      expectError(
        await service.api().put(`/v1/workflows/${uniqueId()}`, { steps: [step] }),
        404,
        'workflow_not_found',
      );
    });

    it('rejects an invalid definition with 400 invalid_definition and the paths', async () => {
      const res = await service.api().post('/v1/workflows', {
        id: uniqueId(),
        steps: [{ id: 'a', kind: 'rules', rules: [{ when: 'input.' }] }],
      });
      expectError(res, 400, 'invalid_definition');
      expect(res.body.error.details[0]).to.deep.include({ path: '/steps/0/rules/0/when' });
    });

    it('lists workflows with their latest version and trigger type', async () => {
      const body = definition([step], { trigger: { type: 'webhook' } });
      const id = await createWorkflow(service.api(), body);
      await service.api().put(`/v1/workflows/${id}`, body).expect(200);
      const res = await service.api().get('/v1/workflows?limit=100').expect(200);
      const item = res.body.data.find((w: { id: string }) => w.id === id);
      expect(item).to.include({ version: 2, name: 'Test workflow' });
      expect(item.trigger).to.deep.equal({ type: 'webhook' });
      expect(Object.keys(item).sort()).to.deep.equal([
        'created_at',
        'description',
        'id',
        'name',
        'trigger',
        'updated_at',
        'version',
      ]);
    });

    it('pages through workflows with limit and cursor', async () => {
      const workspace = await service.newWorkspace(['write']);
      for (let i = 0; i < 5; i++) await createWorkflow(service.api(workspace.key), definition([step]));
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const res: { body: { data: { id: string }[]; next_cursor: string | null } } = await service
          .api(workspace.key)
          .get(`/v1/workflows?limit=2${cursor ? `&cursor=${cursor}` : ''}`)
          .expect(200);
        expect(res.body.data.length).to.be.at.most(2);
        seen.push(...res.body.data.map((w) => w.id));
        cursor = res.body.next_cursor;
      } while (cursor);
      expect(seen).to.have.length(5);
      expect([...seen].sort()).to.deep.equal(seen);
    });

    it('deletes a workflow with 204, after which it is gone', async () => {
      const id = await createWorkflow(service.api(), definition([step]));
      await service.api().delete(`/v1/workflows/${id}`).expect(204);
      expectError(await service.api().get(`/v1/workflows/${id}`), 404, 'workflow_not_found');
      expectError(await service.api().delete(`/v1/workflows/${id}`), 404, 'workflow_not_found');
    });
  });
}
