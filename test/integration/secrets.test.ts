/**
 * Secrets (docs/api.md#secrets) and `{{ secrets.NAME }}` (docs/definitions.md#expressions-and-templates):
 * stored encrypted, resolved only inside the activity, and nowhere else: not in Temporal history, API
 * responses or the service's logs.
 */
import { expect } from 'chai';
import {
  createWorkflow,
  definition,
  expectError,
  httpStep,
  stepOf,
  trigger,
  waitForExecution,
} from '../support/fixtures';
import { capturingLogger } from '../support/log-capture';
import { Receiver } from '../support/receiver';
import { startTestService, type TestService } from '../support/stack';

const SECRET = 'sk-live-VERY-SECRET-7f3a9c';

/** Every string and decoded byte array (payload data) in a structure, as one text to search. */
function textOf(value: unknown): string {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(textOf).join('\n');
  if (typeof value === 'object' && value !== null) return Object.values(value).map(textOf).join('\n');
  return String(value);
}

describe('secrets @integration', function () {
  let service: TestService;
  let receiver: Receiver;
  const logs = capturingLogger();
  before(async function () {
    this.timeout(120_000);
    service = await startTestService({ logger: logs.logger, env: { LOG_LEVEL: 'trace' } });
    receiver = await Receiver.start();
  });
  after(async () => {
    await receiver?.stop();
    await service?.stop();
  });

  describe('the API', () => {
    it('stores a secret with PUT (204) and lists its name, never its value', async () => {
      await service.api().put('/v1/secrets/LIST_ME', { value: SECRET }).expect(204);
      const res = await service.api().get('/v1/secrets').expect(200);
      const item = res.body.data.find((s: { name: string }) => s.name === 'LIST_ME');
      expect(Object.keys(item).sort()).to.deep.equal(['created_at', 'name', 'updated_at']);
      expect(JSON.stringify(res.body)).not.to.include(SECRET);
    });

    it('replaces a secret with a second PUT', async () => {
      await service.api().put('/v1/secrets/ROTATE', { value: 'first-value' }).expect(204);
      await service.api().put('/v1/secrets/ROTATE', { value: 'second-value' }).expect(204);
      const res = await service.api().get('/v1/secrets').expect(200);
      expect(res.body.data.filter((s: { name: string }) => s.name === 'ROTATE')).to.have.length(1);
    });

    it('deletes a secret (204), then answers 404', async () => {
      await service.api().put('/v1/secrets/GONE', { value: 'abc123' }).expect(204);
      await service.api().delete('/v1/secrets/GONE').expect(204);
      expectError(await service.api().delete('/v1/secrets/GONE'), 404, 'not_found');
    });

    it('refuses a write with a read key', async () => {
      const key = await service.newKey('default', ['read']);
      expectError(await service.api(key).put('/v1/secrets/X', { value: 'abcdef' }), 403, 'forbidden');
    });

    it('stores values encrypted at rest', async () => {
      await service.api().put('/v1/secrets/AT_REST', { value: SECRET }).expect(204);
      const rows = await service.runtime.services.db.query<{ sealed: string }>(
        "select sealed from secrets where name = 'AT_REST'",
      );
      expect(rows[0]!.sealed).not.to.include(SECRET);
      expect(Buffer.from(rows[0]!.sealed, 'base64').toString('latin1')).not.to.include(SECRET);
    });

    it("keeps one workspace's secrets from another", async () => {
      await service.api().put('/v1/secrets/MINE', { value: SECRET }).expect(204);
      const other = await service.newWorkspace(['write']);
      const res = await service.api(other.key).get('/v1/secrets').expect(200);
      expect(res.body.data).to.deep.equal([]);
      expectError(await service.api(other.key).delete('/v1/secrets/MINE'), 404, 'not_found');
    });
  });

  describe('in a connector step', () => {
    let executionId: string;
    before(async function () {
      this.timeout(60_000);
      await service.api().put('/v1/secrets/CRM_TOKEN', { value: SECRET }).expect(204);
      // The receiver echoes the Authorization header back, as careless APIs do.
      receiver.replyOnceTo('/echo', (request) => ({
        status: 200,
        body: { you_sent: request.headers['authorization'] },
      }));
      const workflowId = await createWorkflow(
        service.api(),
        definition([
          httpStep('crm', {
            method: 'POST',
            url: `${receiver.url}/echo`,
            headers: { Authorization: 'Bearer {{ secrets.CRM_TOKEN }}' },
            body: { q: 1 },
          }),
        ]),
      );
      executionId = await trigger(service.api(), workflowId);
      expect((await waitForExecution(service.api(), executionId)).status).to.equal('success');
    });

    it('sends the secret value to the destination', () => {
      expect(receiver.requestsTo('/echo')[0]!.headers['authorization']).to.equal(`Bearer ${SECRET}`);
    });

    it("keeps the template in the step's recorded input", async () => {
      const execution = await waitForExecution(service.api(), executionId);
      expect(
        (stepOf(execution, 'crm').input as { headers: Record<string, string> }).headers['Authorization'],
      ).to.equal('Bearer {{ secrets.CRM_TOKEN }}');
    });

    it('masks a secret echoed in the response', async () => {
      const execution = await waitForExecution(service.api(), executionId);
      expect((stepOf(execution, 'crm').output as { body: unknown }).body).to.deep.equal({
        you_sent: 'Bearer ***',
      });
    });

    it('never puts the secret in Temporal history', async () => {
      const history = await service.runtime.services.temporal.client.workflow
        .getHandle(executionId)
        .fetchHistory();
      const text = textOf(history.events);
      expect(text).to.include('secrets.CRM_TOKEN');
      expect(text).not.to.include(SECRET);
    });

    it('never puts the secret in API responses', async () => {
      const read = await service.api().get(`/v1/executions/${executionId}`).expect(200);
      const list = await service.api().get('/v1/executions?limit=100').expect(200);
      expect(JSON.stringify(read.body)).not.to.include(SECRET);
      expect(JSON.stringify(list.body)).not.to.include(SECRET);
    });

    it('never puts the secret in the logs', () => {
      expect(logs.text().length).to.be.greaterThan(0);
      expect(logs.text()).not.to.include(SECRET);
    });
  });

  it('fails the step with secret_not_found for a secret that is not set', async () => {
    const workflowId = await createWorkflow(
      service.api(),
      definition([
        httpStep('crm', {
          url: `${receiver.url}/x`,
          headers: { Authorization: 'Bearer {{ secrets.MISSING_ONE }}' },
        }),
      ]),
    );
    const execution = await waitForExecution(service.api(), await trigger(service.api(), workflowId));
    expect(execution.error).to.include({ step: 'crm', code: 'secret_not_found' });
    expect(execution.error!.message).to.include('MISSING_ONE');
  });

  it('never evaluates a secrets template that arrives in data', async () => {
    await service.api().put('/v1/secrets/OTHER', { value: 'other-secret-value' }).expect(204);
    const workflowId = await createWorkflow(
      service.api(),
      definition([
        httpStep('crm', {
          method: 'POST',
          url: `${receiver.url}/inject`,
          body: { note: '{{ input.note }}' },
        }),
      ]),
    );
    const execution = await waitForExecution(
      service.api(),
      await trigger(service.api(), workflowId, { note: '{{ secrets.OTHER }}' }),
    );
    expect(execution.status).to.equal('success');
    expect(receiver.requestsTo('/inject')[0]!.json).to.deep.equal({ note: '{{ secrets.OTHER }}' });
  });
});
