/**
 * Outbound webhooks (docs/webhooks.md#outbound-webhooks): endpoints, events at the right moments, Standard
 * Webhooks signatures (checked with the independent `standardwebhooks` package), retries, 410, deletion,
 * ordering, redelivery.
 */
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import {
  createWorkflow,
  definition,
  expectError,
  FAST_RETRY,
  httpStep,
  rulesStep,
  trigger,
  waitForExecution,
  type ExecutionBody,
} from '../support/fixtures';
import { Receiver, type ReceivedRequest } from '../support/receiver';
import { apiClient, startTestService, type ApiClient, type TestService } from '../support/stack';
import { waitFor } from '../support/wait';

interface Delivery {
  id: string;
  event_id: string;
  event: string;
  execution_id: string;
  status: string;
  attempts: { at: string; status_code: number | null; duration_ms: number; error: string | null }[];
  next_attempt_at: string | null;
}

describe('outbound webhooks @integration', function () {
  let service: TestService;
  let receiver: Receiver;
  before(async function () {
    this.timeout(120_000);
    // Retries after 1 s, 1 s, 1 s: four attempts in all, so failures play out in seconds.
    service = await startTestService({ env: { WEBHOOK_RETRY_SCHEDULE: '1,1,1' } });
    receiver = await Receiver.start();
  });
  after(async () => {
    await receiver?.stop();
    await service?.stop();
  });

  /** A fresh workspace (so only its own executions' events arrive) with an endpoint at `path`. */
  async function workspaceWithEndpoint(path: string, events: string[]) {
    const workspace = await service.newWorkspace(['admin']);
    const api = service.api(workspace.key);
    const res = await api
      .post('/v1/webhooks', { url: `${receiver.url}${path}`, events, description: path })
      .expect(201);
    return { api, endpoint: res.body as { id: string; secret: string } };
  }

  async function deliveriesOf(api: ApiClient, endpointId: string): Promise<Delivery[]> {
    return (await api.get(`/v1/webhooks/${endpointId}/deliveries?limit=100`).expect(200)).body
      .data as Delivery[];
  }

  const bodies = (path: string) =>
    receiver.requestsTo(path).map((r) => r.json as { event: string; execution_id: string; id: string });

  describe('endpoints', () => {
    it('registers an endpoint and shows its whsec_ secret once', async () => {
      const { api, endpoint } = await workspaceWithEndpoint('/ep-1', ['execution.completed']);
      expect(endpoint.secret).to.match(/^whsec_[A-Za-z0-9+/=]{32}$/);
      expect(endpoint).to.include({ status: 'enabled', url: `${receiver.url}/ep-1`, description: '/ep-1' });
      const read = await api.get(`/v1/webhooks/${endpoint.id}`).expect(200);
      expect(read.body).not.to.have.property('secret');
      const list = await api.get('/v1/webhooks').expect(200);
      expect(JSON.stringify(list.body)).not.to.include(endpoint.secret);
      expect(list.body.data.map((e: { id: string }) => e.id)).to.deep.equal([endpoint.id]);
    });

    it('rejects an unknown event kind with 400', async () => {
      const res = await service
        .api()
        .post('/v1/webhooks', { url: `${receiver.url}/x`, events: ['execution.exploded'] });
      expectError(res, 400, 'invalid_request');
      expect(res.body.error.details[0].path).to.equal('/events/0');
    });

    it('deletes an endpoint (204), then answers 404 webhook_not_found', async () => {
      const { api, endpoint } = await workspaceWithEndpoint('/ep-2', ['execution.completed']);
      await api.delete(`/v1/webhooks/${endpoint.id}`).expect(204);
      expectError(await api.get(`/v1/webhooks/${endpoint.id}`), 404, 'webhook_not_found');
    });

    it("answers 404 for another workspace's endpoint", async () => {
      const { endpoint } = await workspaceWithEndpoint('/ep-3', ['execution.completed']);
      expectError(await service.api().get(`/v1/webhooks/${endpoint.id}`), 404, 'webhook_not_found');
      expectError(await service.api().delete(`/v1/webhooks/${endpoint.id}`), 404, 'webhook_not_found');
    });

    describe('with private destinations not allowed (the default)', () => {
      let strict: TestService;
      before(async function () {
        this.timeout(120_000);
        strict = await startTestService({ env: { ALLOW_PRIVATE_DESTINATIONS: 'false' } });
      });
      after(async () => strict?.stop());

      for (const url of [
        'http://example.com/hook',
        'https://127.0.0.1/hook',
        'https://localhost/hook',
        'https://[::1]/hook',
        'https://169.254.169.254/x',
        'https://10.0.0.8/x',
        'not a url',
      ]) {
        it(`refuses ${url} with 400 invalid_webhook_url`, async () => {
          expectError(
            await strict.api().post('/v1/webhooks', { url, events: ['execution.completed'] }),
            400,
            'invalid_webhook_url',
          );
        });
      }

      it("accepts the document's example endpoint, whose host is a documentation name (resolving or not)", async () => {
        const doc = await strict.api().get('/v1/openapi.json');
        const example = doc.body.paths['/v1/webhooks'].post.requestBody.content['application/json'].example;
        const res = await strict.api().post('/v1/webhooks', example);
        expect(res.status, JSON.stringify(res.body)).to.equal(201);
        expect(res.body.url).to.equal(example.url);
      });

      it('refuses a name that does not resolve, outside the documentation names', async () => {
        const res = await strict
          .api()
          .post('/v1/webhooks', { url: 'https://hooks.invalid/x', events: ['execution.completed'] });
        expectError(res, 400, 'invalid_webhook_url');
        expect(res.body.error.details[0]).to.deep.equal({
          path: '/url',
          message: 'hooks.invalid does not resolve',
        });
      });
    });
  });

  describe('signed deliveries', () => {
    it('delivers execution.completed signed per Standard Webhooks, verified by the standardwebhooks package', async () => {
      const { api, endpoint } = await workspaceWithEndpoint('/signed', ['execution.completed']);
      const workflowId = await createWorkflow(
        api,
        definition([rulesStep('a', [{ when: 'true', output: 1 }])]),
      );
      const id = await trigger(api, workflowId);
      const request = await waitFor(async () => receiver.requestsTo('/signed')[0], { what: 'the delivery' });
      const verified = new Webhook(endpoint.secret).verify(
        request.body,
        request.headers as Record<string, string>,
      ) as Record<string, unknown>;
      expect(verified).to.deep.include({
        event: 'execution.completed',
        execution_id: id,
        workflow: workflowId,
        workflow_version: 1,
        status: 'success',
        error: null,
      });
      expect(verified['id']).to.equal(request.headers['webhook-id']);
      expect(Object.keys(verified).sort()).to.deep.equal([
        'created_at',
        'error',
        'event',
        'execution_id',
        'id',
        'output',
        'status',
        'workflow',
        'workflow_version',
      ]);
      expect(verified['output']).to.equal(1);
    });

    it('fails verification with another secret (the signature really depends on it)', async () => {
      const { api } = await workspaceWithEndpoint('/signed-2', ['execution.completed']);
      const workflowId = await createWorkflow(
        api,
        definition([rulesStep('a', [{ when: 'true', output: 1 }])]),
      );
      await trigger(api, workflowId);
      const request = await waitFor(async () => receiver.requestsTo('/signed-2')[0], {
        what: 'the delivery',
      });
      const other = `whsec_${Buffer.from('another secret of 24 bytes').toString('base64')}`;
      expect(() =>
        new Webhook(other).verify(request.body, request.headers as Record<string, string>),
      ).to.throw();
    });
  });

  describe('events', () => {
    it('fires started and completed for a successful run', async () => {
      const { api } = await workspaceWithEndpoint('/ev-ok', [
        'execution.started',
        'execution.completed',
        'execution.failed',
      ]);
      const workflowId = await createWorkflow(
        api,
        definition([rulesStep('a', [{ when: 'true', output: 1 }])]),
      );
      const id = await trigger(api, workflowId);
      const events = await waitFor(
        async () => (bodies('/ev-ok').length >= 2 ? bodies('/ev-ok') : undefined),
        { what: 'two events' },
      );
      expect(events.map((e) => [e.event, e.execution_id])).to.deep.equal([
        ['execution.started', id],
        ['execution.completed', id],
      ]);
    });

    it('fires failed with the error for a failed run', async () => {
      const { api } = await workspaceWithEndpoint('/ev-fail', ['execution.failed', 'execution.completed']);
      const workflowId = await createWorkflow(
        api,
        definition([rulesStep('gate', [{ when: 'true', action: 'fail', message: 'no' }])]),
      );
      const id = await trigger(api, workflowId);
      const [event] = await waitFor(
        async () =>
          bodies('/ev-fail').length ? receiver.requestsTo('/ev-fail').map((r) => r.json) : undefined,
        { what: 'the event' },
      );
      expect(event).to.deep.include({
        event: 'execution.failed',
        execution_id: id,
        status: 'failed',
        error: { step: 'gate', path: ['gate'], code: 'rule_failed', message: 'no' },
      });
    });

    it('fires waiting when an approval is requested, and canceled when the run is canceled', async () => {
      const { api } = await workspaceWithEndpoint('/ev-wait', ['execution.waiting', 'execution.canceled']);
      const workflowId = await createWorkflow(api, definition([{ id: 'review', kind: 'approval' }]));
      const id = await trigger(api, workflowId);
      await waitFor(async () => bodies('/ev-wait').length >= 1, { what: 'the waiting event' });
      await api.post(`/v1/executions/${id}/cancel`).expect(202);
      const events = await waitFor(
        async () => (bodies('/ev-wait').length >= 2 ? bodies('/ev-wait') : undefined),
        { what: 'the canceled event' },
      );
      expect(events.map((e) => e.event)).to.deep.equal(['execution.waiting', 'execution.canceled']);
    });

    it('fires an event for the outcome of each retry', async () => {
      const { api } = await workspaceWithEndpoint('/ev-retry', [
        'execution.started',
        'execution.failed',
        'execution.completed',
      ]);
      receiver.replyOnceTo('/flaky-step', { status: 500 });
      const workflowId = await createWorkflow(
        api,
        definition([httpStep('call', { url: `${receiver.url}/flaky-step` }, { retry: { max_attempts: 1 } })]),
      );
      const id = await trigger(api, workflowId);
      expect((await waitForExecution(api, id)).status).to.equal('failed');
      await api.post(`/v1/executions/${id}/retry`).expect(202);
      await waitForExecution(api, id, (e) => e.status === 'success');
      const events = await waitFor(
        async () => (bodies('/ev-retry').length >= 3 ? bodies('/ev-retry') : undefined),
        { what: 'three events' },
      );
      expect(events.map((e) => e.event)).to.deep.equal([
        'execution.started',
        'execution.failed',
        'execution.completed',
      ]);
      expect(new Set(events.map((e) => e.id)).size).to.equal(3);
    });

    it('sends only the kinds an endpoint subscribed to', async () => {
      const { api } = await workspaceWithEndpoint('/ev-only', ['execution.failed']);
      const workflowId = await createWorkflow(
        api,
        definition([rulesStep('a', [{ when: 'true', output: 1 }])]),
      );
      const id = await trigger(api, workflowId);
      await waitForExecution(api, id);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(receiver.requestsTo('/ev-only')).to.have.length(0);
    });
  });

  describe('retries and the delivery log', () => {
    async function completedRun(api: ApiClient): Promise<string> {
      const workflowId = await createWorkflow(
        api,
        definition([rulesStep('a', [{ when: 'true', output: 1 }])]),
      );
      return trigger(api, workflowId);
    }

    it('retries a failing receiver until it succeeds: every attempt logged, one webhook-id, fresh signatures', async () => {
      receiver.replyOnceTo(
        '/flaky',
        { status: 500 },
        { status: 302, headers: { location: '/elsewhere' } },
        { status: 200 },
      );
      const { api, endpoint } = await workspaceWithEndpoint('/flaky', ['execution.completed']);
      await completedRun(api);
      const [delivery] = await waitFor(
        async () => {
          const list = await deliveriesOf(api, endpoint.id);
          return list[0]?.status === 'succeeded' ? list : undefined;
        },
        { what: 'the delivery to succeed' },
      );
      expect(delivery!.attempts.map((a) => a.status_code)).to.deep.equal([500, 302, 200]);
      expect(delivery!.attempts[1]!.error).to.include('redirect');
      expect(delivery!.next_attempt_at).to.equal(null);
      const requests = receiver.requestsTo('/flaky');
      expect(new Set(requests.map((r) => r.headers['webhook-id']))).to.deep.equal(
        new Set([delivery!.event_id]),
      );
      expect(new Set(requests.map((r) => r.headers['webhook-signature'])).size).to.equal(3);
      for (const request of requests)
        new Webhook(endpoint.secret).verify(request.body, request.headers as Record<string, string>);
    });

    it('gives up after the retry schedule: delivery failed, every attempt kept in the log', async () => {
      receiver.replyOnceTo('/down', ...Array.from({ length: 4 }, () => ({ status: 503 })));
      const { api, endpoint } = await workspaceWithEndpoint('/down', ['execution.completed']);
      await completedRun(api);
      const [delivery] = await waitFor(
        async () => {
          const list = await deliveriesOf(api, endpoint.id);
          return list[0]?.status === 'failed' ? list : undefined;
        },
        { what: 'the delivery to fail', timeoutMs: 30_000 },
      );
      expect(delivery!.attempts).to.have.length(4);
      expect(delivery!.attempts.every((a) => a.status_code === 503)).to.equal(true);
      expect(receiver.requestsTo('/down')).to.have.length(4);
    });

    it('shows the next attempt time while retrying', async () => {
      receiver.replyOnceTo('/later', { status: 500 });
      const { api, endpoint } = await workspaceWithEndpoint('/later', ['execution.completed']);
      await completedRun(api);
      const [delivery] = await waitFor(
        async () => {
          const list = await deliveriesOf(api, endpoint.id);
          return list[0]?.attempts.length === 1 && list[0].status === 'pending' ? list : undefined;
        },
        { what: 'a pending delivery after one attempt' },
      );
      expect(Date.parse(delivery!.next_attempt_at!)).to.be.greaterThan(Date.parse(delivery!.attempts[0]!.at));
    });

    it('honours Retry-After on a 429', async () => {
      receiver.replyOnceTo('/busy', { status: 429, headers: { 'Retry-After': '2' } });
      const { api } = await workspaceWithEndpoint('/busy', ['execution.completed']);
      await completedRun(api);
      const [first, second] = await waitFor(
        async () => (receiver.requestsTo('/busy').length >= 2 ? receiver.requestsTo('/busy') : undefined),
        {
          what: 'the second attempt',
        },
      );
      expect(second!.at - first!.at).to.be.at.least(1900);
    });

    it('disables the endpoint on 410 Gone and stops retrying', async () => {
      receiver.replyOnceTo('/gone', { status: 410 });
      const { api, endpoint } = await workspaceWithEndpoint('/gone', ['execution.completed']);
      await completedRun(api);
      await waitFor(async () => (await api.get(`/v1/webhooks/${endpoint.id}`)).body.status === 'disabled', {
        what: 'the endpoint to be disabled',
      });
      const [delivery] = await deliveriesOf(api, endpoint.id);
      expect(delivery!.status).to.equal('failed');
      await completedRun(api);
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect(receiver.requestsTo('/gone')).to.have.length(1);
    });

    it('stops pending retries when the endpoint is deleted', async () => {
      receiver.replyOnceTo('/deleted', ...Array.from({ length: 4 }, () => ({ status: 500 })));
      const { api, endpoint } = await workspaceWithEndpoint('/deleted', ['execution.completed']);
      await completedRun(api);
      await waitFor(async () => receiver.requestsTo('/deleted').length >= 1, { what: 'the first attempt' });
      await api.delete(`/v1/webhooks/${endpoint.id}`).expect(204);
      const attemptsAtDeletion = receiver.requestsTo('/deleted').length;
      await new Promise((resolve) => setTimeout(resolve, 3500));
      expect(receiver.requestsTo('/deleted').length).to.be.at.most(attemptsAtDeletion + 1);
      expect(receiver.requestsTo('/deleted').length).to.be.below(4);
    });

    it('sends a delivery again on request', async () => {
      const { api, endpoint } = await workspaceWithEndpoint('/again', ['execution.completed']);
      await completedRun(api);
      const [delivery] = await waitFor(
        async () => {
          const list = await deliveriesOf(api, endpoint.id);
          return list[0]?.status === 'succeeded' ? list : undefined;
        },
        { what: 'the first delivery' },
      );
      const res = await api.post(`/v1/webhooks/${endpoint.id}/deliveries/${delivery!.id}/retry`).expect(202);
      expect(res.body).to.deep.equal({ status: 'accepted', delivery_id: delivery!.id });
      const again = await waitFor(
        async () => {
          const [latest] = await deliveriesOf(api, endpoint.id);
          return latest?.attempts.length === 2 && latest.status === 'succeeded' ? latest : undefined;
        },
        { what: 'the second attempt' },
      );
      const requests = receiver.requestsTo('/again');
      expect(requests.map((r) => r.headers['webhook-id'])).to.deep.equal([again.event_id, again.event_id]);
    });

    it('answers 404 for an unknown delivery', async () => {
      const { api, endpoint } = await workspaceWithEndpoint('/nodelivery', ['execution.completed']);
      expectError(await api.post(`/v1/webhooks/${endpoint.id}/deliveries/dlv_nope/retry`), 404, 'not_found');
    });
  });

  describe('ordering', () => {
    it('lets a receiver of execution.completed read the finished execution, a hundred times in a row', async function () {
      this.timeout(180_000);
      const workspace = await service.newWorkspace(['admin']);
      const api = service.api(workspace.key);
      const seen: ExecutionBody[] = [];
      const reader = apiClient(service.url, workspace.key);
      // The receiver reads the execution before it acknowledges the event.
      receiver.replyAlways(async (request: ReceivedRequest) => {
        if (request.path !== '/ordering') return { status: 200 };
        const { execution_id: id } = request.json as { execution_id: string };
        seen.push((await reader.get(`/v1/executions/${id}`)).body as ExecutionBody);
        return { status: 200 };
      });
      await api
        .post('/v1/webhooks', { url: `${receiver.url}/ordering`, events: ['execution.completed'] })
        .expect(201);
      const workflowId = await createWorkflow(
        api,
        definition([
          rulesStep('a', [{ when: 'true', output: 1 }]),
          httpStep('b', { url: `${receiver.url}/step-b` }, { retry: FAST_RETRY }),
          rulesStep('c', [{ when: 'true', output: 3 }]),
        ]),
      );
      const ids: string[] = [];
      for (let i = 0; i < 100; i++) ids.push(await trigger(api, workflowId));
      await waitFor(async () => seen.length >= 100, { what: '100 completion events', timeoutMs: 120_000 });
      expect(seen.map((e) => e.execution_id).sort()).to.deep.equal([...ids].sort());
      for (const execution of seen) {
        expect(execution.status, execution.execution_id).to.equal('success');
        expect(execution.steps.map((s) => `${s.id}:${s.status}`)).to.deep.equal([
          'trigger:success',
          'a:success',
          'b:success',
          'c:success',
        ]);
      }
    });
  });
});
