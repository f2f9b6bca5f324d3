/**
 * Debounce (docs/flow-control.md#debounce): triggers of one key within `period` of each other coalesce into
 * one execution, `queued` until the key is quiet for `period` (or `max_wait` after the first trigger), which
 * then runs once with the last trigger's input and counts the triggers in its trigger step. Against the dev
 * server, on embedded PGlite and on the PostgreSQL server (TEST_DATABASE_URL), where the key's advisory lock
 * serializes triggers that arrive together.
 */
import { expect } from 'chai';
import {
  createWorkflow,
  definition,
  expectError,
  httpStep,
  rulesStep,
  stepOf,
  trigger,
  uniqueId,
  waitForExecution,
  type ExecutionBody,
} from '../support/fixtures';
import { Receiver, type ReceivedRequest } from '../support/receiver';
import { triggerExecution } from '../../src/executions/trigger';
import { DB_KINDS, startTestService, type TestService } from '../support/stack';

const NO_RETRY = { max_attempts: 1 };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const db of DB_KINDS) {
  describe(`debounce (${db}) @integration`, function () {
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

    /** A workflow of one connector step that posts `{n}` to `<receiver>/<prefix>/<input.sensor>`. */
    async function sensorWorkflow(prefix: string, debounce: Record<string, unknown>): Promise<string> {
      return createWorkflow(
        service.api(),
        definition(
          [
            httpStep(
              'call',
              {
                method: 'POST',
                url: `${receiver.url}/${prefix}/{{ input.sensor }}`,
                body: { n: '{{ input.n }}' },
              },
              { retry: NO_RETRY },
            ),
          ],
          { debounce },
        ),
      );
    }

    const read = async (id: string): Promise<ExecutionBody> =>
      (await service.api().get(`/v1/executions/${id}`).expect(200)).body as ExecutionBody;

    const callsTo = (prefix: string): ReceivedRequest[] =>
      receiver.requests.filter((r) => r.path.startsWith(`/${prefix}/`));

    it('coalesces five triggers of a key into one queued execution that runs once, with the last input', async () => {
      const prefix = uniqueId('burst');
      const workflowId = await sensorWorkflow(prefix, { period: '2s', key: 'input.sensor' });
      const ids: string[] = [];
      for (let n = 1; n <= 5; n++) ids.push(await trigger(service.api(), workflowId, { sensor: 's1', n }));
      expect(new Set(ids).size, 'every trigger answers the one execution').to.equal(1);
      const id = ids[0]!;
      const waiting = await read(id);
      expect(waiting.status).to.equal('queued');
      expect(
        waiting.steps.map((step) => step.id),
        'no step ran yet',
      ).to.deep.equal(['trigger']);
      const listed = (
        await service.api().get(`/v1/executions?workflow=${workflowId}&status=queued`).expect(200)
      ).body.data as { execution_id: string }[];
      expect(listed.map((e) => e.execution_id)).to.deep.equal([id]);
      const queue = (await service.api().get(`/v1/workflows/${workflowId}/queue`).expect(200)).body;
      expect(queue).to.deep.equal({ queued: 1, open: 0, keys: [{ key: 's1', queued: 1, open: 0 }] });

      const done = await waitForExecution(service.api(), id, undefined, 60_000);
      expect(done.status, JSON.stringify(done.error)).to.equal('success');
      expect(
        callsTo(prefix).map((r) => r.json),
        'one call, with the last input',
      ).to.deep.equal([{ n: 5 }]);
      const triggerStep = stepOf(done, 'trigger') as unknown as { coalesced?: number; output: unknown };
      expect(triggerStep.coalesced).to.equal(5);
      expect(triggerStep.output).to.deep.equal({ sensor: 's1', n: 5 });
      expect(
        (await service.api().get(`/v1/workflows/${workflowId}/queue`).expect(200)).body,
        'nothing left waiting',
      ).to.deep.equal({ queued: 0, open: 0, keys: [] });
    });

    it('keeps keys apart, and counts triggers that arrive together once each', async () => {
      const prefix = uniqueId('keys');
      const workflowId = await sensorWorkflow(prefix, { period: '1s', key: 'input.sensor' });
      const sent = await Promise.all(
        Array.from({ length: 20 }, (_, n) => trigger(service.api(), workflowId, { sensor: `k${n % 2}`, n })),
      );
      const byKey = new Map<string, Set<string>>();
      sent.forEach((id, n) => {
        const key = `k${n % 2}`;
        byKey.set(key, (byKey.get(key) ?? new Set()).add(id));
      });
      expect(
        [...byKey.values()].map((ids) => ids.size),
        'one execution per key',
      ).to.deep.equal([1, 1]);
      const [a, b] = [...byKey.values()].map((ids) => [...ids][0]!);
      expect(a).to.not.equal(b);
      for (const id of [a!, b!]) {
        const done = await waitForExecution(service.api(), id, undefined, 60_000);
        expect(done.status).to.equal('success');
        expect((stepOf(done, 'trigger') as unknown as { coalesced: number }).coalesced).to.equal(10);
      }
      expect(callsTo(prefix), 'one call per key').to.have.length(2);
    });

    it('starts at `max_wait` after the first trigger although triggers keep coming, and the next ones make a new execution', async () => {
      const prefix = uniqueId('maxwait');
      const workflowId = await sensorWorkflow(prefix, { period: '2s', max_wait: '3s' });
      const ids: string[] = [];
      const startedAt = Date.now();
      // One trigger every 400 ms for 5 s: the key is never quiet for 2 s.
      for (let n = 0; Date.now() - startedAt < 5_000; n++) {
        ids.push(await trigger(service.api(), workflowId, { sensor: 'm', n }));
        await sleep(400);
      }
      const distinct = [...new Set(ids)];
      expect(distinct.length, `executions: ${distinct.join(', ')}`).to.equal(2);
      const first = await waitForExecution(service.api(), distinct[0]!, undefined, 60_000);
      expect(first.status).to.equal('success');
      const firstCount = (stepOf(first, 'trigger') as unknown as { coalesced: number }).coalesced;
      expect(firstCount, 'the first execution took every trigger before it started').to.equal(
        ids.filter((id) => id === distinct[0]).length,
      );
      const tookFirst = Date.parse(stepOf(first, 'call').started_at!) - Date.parse(first.started_at);
      expect(tookFirst, 'ms from the first trigger to its step').to.be.within(2_900, 4_500);
      const second = await waitForExecution(service.api(), distinct[1]!, undefined, 60_000);
      expect(second.status).to.equal('success');
      expect(callsTo(prefix)).to.have.length(2);
    });

    it("cancels a waiting execution: it never runs, and the key's next trigger makes a new one", async () => {
      const prefix = uniqueId('cancel');
      const workflowId = await sensorWorkflow(prefix, { period: '3s', key: 'input.sensor' });
      const canceled = await trigger(service.api(), workflowId, { sensor: 'c', n: 1 });
      await service.api().post(`/v1/executions/${canceled}/cancel`).expect(202);
      const view = await waitForExecution(service.api(), canceled, undefined, 30_000);
      expect(view.status).to.equal('canceled');
      expect(view.steps.map((step) => step.id)).to.deep.equal(['trigger']);
      const next = await trigger(service.api(), workflowId, { sensor: 'c', n: 2 });
      expect(next).to.not.equal(canceled);
      expect((await waitForExecution(service.api(), next, undefined, 60_000)).status).to.equal('success');
      expect(callsTo(prefix).map((r) => r.json)).to.deep.equal([{ n: 2 }]);
    });

    it('answers a repeated Idempotency-Key with its execution without counting it again', async () => {
      const prefix = uniqueId('idem');
      const workflowId = await sensorWorkflow(prefix, { period: '2s' });
      const send = (key: string, n: number) =>
        service
          .api()
          .post(`/v1/workflows/${workflowId}/trigger`, { sensor: 'i', n })
          .set('Idempotency-Key', key)
          .expect(202);
      const first = (await send('one', 1)).body.execution_id as string;
      expect((await send('one', 99)).body.execution_id).to.equal(first);
      expect((await send('two', 2)).body.execution_id).to.equal(first);
      const done = await waitForExecution(service.api(), first, undefined, 60_000);
      expect((stepOf(done, 'trigger') as unknown as { coalesced: number }).coalesced).to.equal(2);
      expect(callsTo(prefix).map((r) => r.json)).to.deep.equal([{ n: 2 }]);
    });

    it('answers a repeated hook delivery or event with the execution it joined, even after that one started', async () => {
      const prefix = uniqueId('derived');
      const workflowId = await sensorWorkflow(prefix, { period: '1s' });
      const services = service.runtime.services;
      // As a signed hook or an event trigger starts: an execution id derived from the request.
      const deliver = (derived: string, n: number) =>
        triggerExecution(services, {
          workspaceId: 'default',
          workflowId,
          body: { sensor: 'd', n },
          executionId: derived,
          triggerType: 'webhook',
        });
      const first = (await deliver('ex_derivedfirst' + prefix.slice(-8), 1)).executionId;
      const secondId = 'ex_derivedsecond' + prefix.slice(-8);
      expect((await deliver(secondId, 2)).executionId, 'a second delivery joins').to.equal(first);
      expect((await deliver(secondId, 2)).executionId, 'its repeat too').to.equal(first);
      const done = await waitForExecution(service.api(), first, undefined, 60_000);
      expect((stepOf(done, 'trigger') as unknown as { coalesced: number }).coalesced).to.equal(2);
      expect((await deliver(secondId, 2)).executionId, 'a repeat after the run').to.equal(first);
      expect(callsTo(prefix).map((r) => r.json)).to.deep.equal([{ n: 2 }]);
    });

    it("retries a failed debounced execution with the input it ran with, the last trigger's", async () => {
      const prefix = uniqueId('retry');
      const workflowId = await sensorWorkflow(prefix, { period: '1s' });
      receiver.replyOnceTo(`/${prefix}/r`, { status: 500, body: { down: true } });
      const id = await trigger(service.api(), workflowId, { sensor: 'r', n: 1 });
      expect(await trigger(service.api(), workflowId, { sensor: 'r', n: 2 })).to.equal(id);
      const failed = await waitForExecution(service.api(), id, undefined, 60_000);
      expect(failed.status).to.equal('failed');
      await service.api().post(`/v1/executions/${id}/retry`).expect(202);
      const retried = await waitForExecution(service.api(), id, (e) => e.status === 'success', 60_000);
      expect(stepOf(retried, 'trigger').output).to.deep.equal({ sensor: 'r', n: 2 });
      expect(
        callsTo(prefix).map((r) => r.json),
        'both calls with the last input',
      ).to.deep.equal([{ n: 2 }, { n: 2 }]);
    });

    it('refuses a period under a second, a max_wait shorter than the period, and a key that reads steps', async () => {
      const prefix = uniqueId('bad');
      const save = (debounce: unknown) =>
        service.api().post('/v1/workflows', {
          ...definition([rulesStep('r', [{ when: 'true', output: 1 }])]),
          id: uniqueId(prefix),
          debounce,
        });
      expectError(await save({ period: '500ms' }), 400, 'invalid_definition');
      const shortWait = await save({ period: '10s', max_wait: '5s' });
      expectError(shortWait, 400, 'invalid_definition');
      expect(JSON.stringify(shortWait.body)).to.contain('/debounce/max_wait');
      expectError(await save({ period: '1s', key: 'steps.r.output' }), 400, 'invalid_definition');
      expectError(await save({ period: '8d' }), 400, 'invalid_definition');
    });
  });
}
