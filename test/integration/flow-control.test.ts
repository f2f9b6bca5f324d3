/**
 * Flow control (docs/flow-control.md): `concurrency` holds runs of a key back past its limit with the status
 * `queued`, they start in order of `priority` then arrival, `throttle` lets `limit` of a key start per
 * `period`, a queued run can be canceled, and the queue endpoint counts them. Against the dev server and the service's admission table, on embedded PGlite and on
 * the PostgreSQL server (TEST_DATABASE_URL), where the key's advisory lock serializes concurrent transactions.
 */
import { expect } from 'chai';
import type { StepBatchResult } from '../../core/execution-types';
import {
  definition,
  expectError,
  httpStep,
  trigger,
  uniqueId,
  waitForExecution,
  type ExecutionBody,
} from '../support/fixtures';
import {
  callingWorkflow as sharedCallingWorkflow,
  holdNext as sharedHoldNext,
} from '../support/flow-control';
import { localActivityMarkers } from '../support/markers';
import { Receiver, type ReceivedRequest } from '../support/receiver';
import { DB_KINDS, startTestService, type TestService } from '../support/stack';
import { waitFor } from '../support/wait';

for (const db of DB_KINDS) {
  describe(`flow control (${db}) @integration`, function () {
    this.timeout(300_000);
    let service: TestService;
    let receiver: Receiver;
    before(async function () {
      service = await startTestService({ db });
      receiver = await Receiver.start();
    });
    after(async () => {
      await receiver?.stop();
      await service?.stop();
    });

    const callingWorkflow = (prefix: string, extra: Record<string, unknown>): Promise<string> =>
      sharedCallingWorkflow(service.api(), receiver, prefix, extra);
    const holdNext = (path: string): (() => void) => sharedHoldNext(receiver, path);

    const read = async (id: string): Promise<ExecutionBody> =>
      (await service.api().get(`/v1/executions/${id}`).expect(200)).body as ExecutionBody;

    const waitForStatus = (id: string, status: string) =>
      waitForExecution(service.api(), id, (e) => e.status === status, 60_000);

    const callsTo = (prefix: string): ReceivedRequest[] =>
      receiver.requests.filter((r) => r.path.startsWith(`/${prefix}/`));

    it('never opens more than `limit` runs of a key: 60 runs over 3 keys with a limit of 2', async () => {
      const prefix = uniqueId('limit');
      const inFlight = new Map<string, number>();
      const most = new Map<string, number>();
      receiver.replyAlways(async (request) => {
        if (!request.path.startsWith(`/${prefix}/`)) return { status: 200, body: { ok: true } };
        const key = request.path;
        inFlight.set(key, (inFlight.get(key) ?? 0) + 1);
        most.set(key, Math.max(most.get(key) ?? 0, inFlight.get(key)!));
        await new Promise((resolve) => setTimeout(resolve, 200));
        inFlight.set(key, inFlight.get(key)! - 1);
        return { status: 200, body: { ok: true } };
      });
      try {
        const workflowId = await callingWorkflow(prefix, {
          concurrency: { limit: 2, key: 'input.customer' },
        });
        const ids: string[] = [];
        for (let n = 0; n < 60; n++)
          ids.push(await trigger(service.api(), workflowId, { customer: `c${n % 3}`, n }));
        for (const id of ids) {
          const done = await waitForExecution(service.api(), id, undefined, 120_000);
          expect(done.status, `${id}: ${JSON.stringify(done.error)}`).to.equal('success');
        }
        expect(callsTo(prefix), 'one call per run, none twice').to.have.length(60);
        expect([...most.keys()].sort()).to.deep.equal([`/${prefix}/c0`, `/${prefix}/c1`, `/${prefix}/c2`]);
        for (const [key, n] of most) expect(n, `calls of ${key} in flight at once`).to.be.at.most(2);
        const queue = (await service.api().get(`/v1/workflows/${workflowId}/queue`).expect(200)).body;
        expect(queue, 'nothing left in the queue').to.deep.equal({ queued: 0, open: 0, keys: [] });
      } finally {
        receiver.replyAlways({ status: 200, body: { ok: true } });
      }
    });

    it('shows a held-back run as queued, with only its trigger step, listed as queued and not as running', async () => {
      const prefix = uniqueId('queued');
      const workflowId = await callingWorkflow(prefix, { concurrency: { limit: 1 } });
      const release = holdNext(`/${prefix}/a`);
      const blocker = await trigger(service.api(), workflowId, { customer: 'a', n: 1 });
      await waitFor(async () => callsTo(prefix).length === 1, { what: 'the blocker to call the receiver' });
      const queued = await trigger(service.api(), workflowId, { customer: 'b', n: 2 });
      const view = await waitForStatus(queued, 'queued');
      expect(view.steps.map((step) => step.id)).to.deep.equal(['trigger']);
      const listed = async (status: string) =>
        (
          (await service.api().get(`/v1/executions?workflow=${workflowId}&status=${status}`).expect(200)).body
            .data as { execution_id: string; status: string }[]
        ).map((e) => e.execution_id);
      await waitFor(async () => (await listed('queued')).includes(queued), {
        what: 'the list to show it queued',
      });
      expect(await listed('queued')).to.deep.equal([queued]);
      await waitFor(async () => (await listed('running')).includes(blocker), {
        what: 'the blocker as running',
      });
      expect(await listed('running'), 'running excludes queued runs').to.deep.equal([blocker]);
      const queue = (await service.api().get(`/v1/workflows/${workflowId}/queue`).expect(200)).body;
      expect(queue).to.deep.equal({ queued: 1, open: 1, keys: [{ key: null, queued: 1, open: 1 }] });
      release();
      expect((await waitForExecution(service.api(), queued)).status).to.equal('success');
      expect((await read(blocker)).status).to.equal('success');
      expect(callsTo(prefix).map((r) => r.path)).to.deep.equal([`/${prefix}/a`, `/${prefix}/b`]);
    });

    it('starts queued runs of a key by priority, highest first, then in arrival order', async () => {
      const prefix = uniqueId('priority');
      const workflowId = await callingWorkflow(prefix, {
        concurrency: { limit: 1, key: "'one'" },
        priority: 'input.p',
      });
      const release = holdNext(`/${prefix}/blocker`);
      const blocker = await trigger(service.api(), workflowId, { customer: 'blocker', p: 100 });
      await waitFor(async () => callsTo(prefix).length === 1, { what: 'the blocker to call the receiver' });
      const priorities = [0, 10, 5, 10, -3, 'high', 250];
      const ids: string[] = [];
      for (const [n, p] of priorities.entries()) {
        const id = await trigger(service.api(), workflowId, { customer: `r${n}`, p });
        // One at a time, so that arrival order is the order of these triggers.
        await waitForStatus(id, 'queued');
        ids.push(id);
      }
      release();
      for (const id of [blocker, ...ids])
        expect((await waitForExecution(service.api(), id)).status).to.equal('success');
      // 250 is clamped to 100; 'high' is no number: 0, after the earlier 0.
      expect(callsTo(prefix).map((r) => r.path.split('/')[2])).to.deep.equal([
        'blocker',
        'r6',
        'r1',
        'r3',
        'r2',
        'r0',
        'r5',
        'r4',
      ]);
    });

    it('cancels a queued run: it never calls the receiver, and the next one takes the place', async () => {
      const prefix = uniqueId('cancel');
      const workflowId = await callingWorkflow(prefix, { concurrency: { limit: 1, key: 'input.group' } });
      const release = holdNext(`/${prefix}/blocker`);
      const blocker = await trigger(service.api(), workflowId, { customer: 'blocker', group: 'g' });
      await waitFor(async () => callsTo(prefix).length === 1, { what: 'the blocker to call the receiver' });
      const canceled = await trigger(service.api(), workflowId, { customer: 'canceled', group: 'g' });
      await waitForStatus(canceled, 'queued');
      const next = await trigger(service.api(), workflowId, { customer: 'next', group: 'g' });
      await waitForStatus(next, 'queued');
      await service.api().post(`/v1/executions/${canceled}/cancel`).expect(202);
      const view = await waitForExecution(service.api(), canceled);
      expect(view.status).to.equal('canceled');
      expect(view.steps.map((step) => step.id)).to.deep.equal(['trigger']);
      const queue = (await service.api().get(`/v1/workflows/${workflowId}/queue`).expect(200)).body;
      expect(queue).to.deep.equal({ queued: 1, open: 1, keys: [{ key: 'g', queued: 1, open: 1 }] });
      release();
      expect((await waitForExecution(service.api(), next)).status).to.equal('success');
      expect((await read(blocker)).status).to.equal('success');
      expect(callsTo(prefix).map((r) => r.path.split('/')[2])).to.deep.equal(['blocker', 'next']);
    });

    it('fails a run whose step fails, once, and gives its place to the next', async () => {
      const prefix = uniqueId('fails');
      const workflowId = await callingWorkflow(prefix, { concurrency: { limit: 1 } });
      receiver.replyOnceTo(`/${prefix}/a`, { status: 500, body: { down: true } });
      const failing = await trigger(service.api(), workflowId, { customer: 'a', n: 1 });
      const next = await trigger(service.api(), workflowId, { customer: 'b', n: 2 });
      const failed = await waitForExecution(service.api(), failing);
      expect(failed.status, JSON.stringify(failed.steps)).to.equal('failed');
      expect(failed.error?.code).to.equal('http_error');
      expect((await waitForExecution(service.api(), next)).status).to.equal('success');
      expect(
        callsTo(prefix).map((r) => r.path.split('/')[2]),
        'the failed step ran once',
      ).to.deep.equal(['a', 'b']);
    });

    it('passes the gates of a run admitted at once in its one batch of steps, and gives them back there', async () => {
      const prefix = uniqueId('batched');
      const workflowId = await callingWorkflow(prefix, {
        concurrency: { limit: 5, key: 'input.customer' },
        throttle: { limit: 100, period: '1m', key: 'input.customer' },
      });
      const id = await trigger(service.api(), workflowId, { customer: 'a', n: 1 });
      expect((await waitForExecution(service.api(), id)).status).to.equal('success');
      const markers = await localActivityMarkers<StepBatchResult>(
        service.runtime.services.temporal.client,
        id,
      );
      expect(
        markers.map((m) => m.type),
        'one local activity: no acquire or release of its own',
      ).to.deep.equal(['run_steps']);
      const { admission, released } = markers[0]!.result;
      expect(admission?.concurrency).to.deep.include({ state: 'open', key: 'a' });
      expect(admission?.throttle).to.deep.include({ state: 'open', key: 'a' });
      expect(admission?.workspace, "the workspace's cap, after the definition's gates").to.deep.equal({
        state: 'open',
      });
      expect(released, 'the batch gave the places back').to.equal(true);
      const rows = await service.runtime.services.db.query(
        'select 1 from admissions where execution_id = $1',
        [id],
      );
      expect(rows, 'no place left behind').to.have.length(0);
    });

    it('starts at most `limit` runs of a throttle key in any window of `period`, the rest queued in turn', async () => {
      const prefix = uniqueId('throttle');
      const periodMs = 2000;
      const workflowId = await callingWorkflow(prefix, {
        throttle: { limit: 3, period: '2s', key: 'input.customer' },
      });
      const ids: string[] = [];
      for (let n = 0; n < 9; n++) ids.push(await trigger(service.api(), workflowId, { customer: 'acme', n }));
      // Another key has a window of its own: it starts at once although acme's is full.
      const other = await trigger(service.api(), workflowId, { customer: 'globex', n: 9 });
      const queued = async () =>
        (
          (await service.api().get(`/v1/workflows/${workflowId}/queue`).expect(200)).body as {
            queued: number;
          }
        ).queued;
      await waitFor(async () => (await queued()) > 0, { what: 'runs held back by the throttle' });
      for (const id of [...ids, other]) {
        const done = await waitForExecution(service.api(), id, undefined, 60_000);
        expect(done.status, `${id}: ${JSON.stringify(done.error)}`).to.equal('success');
      }
      const acme = callsTo(prefix)
        .filter((r) => r.path.endsWith('/acme'))
        .map((r) => r.at)
        .sort((a, b) => a - b);
      expect(acme, 'one call per run').to.have.length(9);
      // A start is granted before its call reaches the receiver, by a variable delay: allow for it.
      const slack = 600;
      for (let i = 3; i < acme.length; i++)
        expect(acme[i]! - acme[i - 3]!, `calls ${i - 3} and ${i} of acme, ms apart`).to.be.at.least(
          periodMs - slack,
        );
      const globex = callsTo(prefix).find((r) => r.path.endsWith('/globex'))!;
      expect(globex.at - acme[0]!, 'the other key started in the first window').to.be.below(periodMs);
      expect((await service.api().get(`/v1/workflows/${workflowId}/queue`).expect(200)).body).to.deep.equal({
        queued: 0,
        open: 0,
        keys: [],
      });
    });

    it('cancels a run its throttle holds back: it never calls the receiver', async () => {
      const prefix = uniqueId('throttle-cancel');
      const workflowId = await callingWorkflow(prefix, { throttle: { limit: 1, period: '1h' } });
      const first = await trigger(service.api(), workflowId, { customer: 'first', n: 1 });
      expect((await waitForExecution(service.api(), first)).status).to.equal('success');
      const held = await trigger(service.api(), workflowId, { customer: 'held', n: 2 });
      await waitForStatus(held, 'queued');
      expect((await service.api().get(`/v1/workflows/${workflowId}/queue`).expect(200)).body).to.deep.equal({
        queued: 1,
        open: 0,
        keys: [{ key: null, queued: 1, open: 0 }],
      });
      await service.api().post(`/v1/executions/${held}/cancel`).expect(202);
      const view = await waitForExecution(service.api(), held);
      expect(view.status).to.equal('canceled');
      expect(view.steps.map((step) => step.id)).to.deep.equal(['trigger']);
      expect(callsTo(prefix).map((r) => r.path.split('/')[2])).to.deep.equal(['first']);
    });

    it('answers 404 workflow_not_found for the queue of a workflow of another workspace', async () => {
      const workflowId = await callingWorkflow(uniqueId('other'), { concurrency: { limit: 1 } });
      const { key } = await service.newWorkspace(['read']);
      expectError(await service.api(key).get(`/v1/workflows/${workflowId}/queue`), 404, 'workflow_not_found');
    });

    it('refuses flow control keys that cannot work, naming where', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ concurrency: { limit: 0 } }, '/concurrency/limit'],
        [{ concurrency: { limit: 1001 } }, '/concurrency/limit'],
        [{ concurrency: { limit: 2, key: 'input.(' } }, '/concurrency/key'],
        [{ concurrency: { limit: 2, key: 'steps.call.output' } }, '/concurrency/key'],
        [{ priority: 'secrets.TOKEN' }, '/priority'],
        [{ concurrency: { limit: 2, per: 'x' } }, '/concurrency'],
        [{ throttle: { limit: 0, period: '1m' } }, '/throttle/limit'],
        [{ throttle: { limit: 5, period: '500ms' } }, '/throttle/period'],
        [{ throttle: { limit: 5, period: '25h' } }, '/throttle/period'],
        [{ throttle: { limit: 5, period: '1m', key: 'steps.call.output' } }, '/throttle/key'],
      ];
      for (const [extra, path] of cases) {
        const res = await service
          .api()
          .post('/v1/workflows', definition([httpStep('call', { method: 'GET', url: receiver.url })], extra));
        expectError(res, 400, 'invalid_definition');
        const paths = (res.body.error.details as { path: string }[]).map((d) => d.path);
        expect(paths, JSON.stringify(extra)).to.include(path);
      }
    });
  });
}
