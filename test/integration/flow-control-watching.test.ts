/**
 * Watching flow control's queue (docs/flow-control.md#watching-the-queue): a read of an execution shows
 * when it was queued and admitted (from its history; at a gate or debounced), and `/metrics` has the queue gauges (read from the
 * tables) and the admission wait histogram (observed once per grant). On embedded PGlite and on the
 * PostgreSQL server (TEST_DATABASE_URL).
 */
import { expect } from 'chai';
import request from 'supertest';
import { trigger, uniqueId, waitForExecution, type ExecutionBody } from '../support/fixtures';
import { parsePrometheus, sampleOf, type MetricFamily } from '../support/prometheus';
import {
  callingWorkflow as sharedCallingWorkflow,
  holdNext as sharedHoldNext,
} from '../support/flow-control';
import { Receiver } from '../support/receiver';
import { DB_KINDS, startTestService, type TestService } from '../support/stack';
import { waitFor } from '../support/wait';

/** How long the first run holds its place, so that the second one is queued at least that long. */
const HOLD_MS = 1500;

for (const db of DB_KINDS) {
  describe(`watching the flow control queue (${db}) @integration`, function () {
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

    const callingWorkflow = (prefix: string, extra: Record<string, unknown>, api = service.api()) =>
      sharedCallingWorkflow(api, receiver, prefix, extra);
    const holdNext = (path: string): (() => void) => sharedHoldNext(receiver, path);

    const read = async (id: string): Promise<ExecutionBody> =>
      (await service.api().get(`/v1/executions/${id}`).expect(200)).body as ExecutionBody;
    const scrape = async (): Promise<Map<string, MetricFamily>> =>
      parsePrometheus((await request(service.url).get('/metrics').expect(200)).text);
    const histogramSum = (families: Map<string, MetricFamily>, name: string, gate: string): number =>
      families
        .get(name)
        ?.samples.find((sample) => sample.name === `${name}_sum` && sample.labels['gate'] === gate)?.value ??
      0;

    it('reads when a queued run was queued and admitted, none for a run that found its place', async () => {
      const prefix = uniqueId('queued-time');
      const { workspaceId, key } = await service.newWorkspace(['admin']);
      const api = service.api(key);
      const workflowId = await callingWorkflow(prefix, { concurrency: { limit: 1 } }, api);
      const before = await scrape();
      const release = holdNext(`/${prefix}/a`);
      const blocker = await trigger(api, workflowId, { customer: 'a' });
      await waitFor(async () => receiver.requestsTo(`/${prefix}/a`).length === 1 || undefined, {
        what: 'the blocker to call the receiver',
      });
      const queued = await trigger(api, workflowId, { customer: 'b' });
      const waiting = await waitForExecution(api, queued, (e) => e.status === 'queued', 60_000);
      expect(waiting.queued_at, 'queued_at while queued').to.be.a('string');
      expect(waiting.admitted_at).to.equal(null);
      expect(waiting.queued_ms).to.be.a('number');
      expect(Date.parse(waiting.queued_at!)).to.be.at.least(Date.parse(waiting.started_at));

      // The gauges, from the tables: one queued and one open for this workflow.
      const labels = { workspace: workspaceId, workflow: workflowId };
      const gauges = await scrape();
      expect(gauges.get('switchyard_flow_control_queued_executions')?.type).to.equal('gauge');
      expect(sampleOf(gauges, 'switchyard_flow_control_queued_executions', labels)).to.equal(1);
      expect(sampleOf(gauges, 'switchyard_flow_control_open_executions', labels)).to.equal(1);

      await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
      release();
      const done = await waitForExecution(api, queued);
      expect(done.status).to.equal('success');
      expect(done.queued_at).to.equal(waiting.queued_at);
      expect(done.admitted_at, 'admitted_at once admitted').to.be.a('string');
      const queuedFor = Date.parse(done.admitted_at!) - Date.parse(done.queued_at!);
      expect(queuedFor).to.be.at.least(HOLD_MS);
      expect(done.queued_ms).to.equal(queuedFor);
      const call = done.steps.find((step) => step.id === 'call')!;
      expect(Date.parse(call.started_at!)).to.be.at.least(Date.parse(done.admitted_at!));

      const first = await waitForExecution(api, blocker);
      expect(first.status).to.equal('success');
      expect(first).to.include({ queued_at: null, admitted_at: null, queued_ms: null });

      // Two admissions (the blocker at once, the queued run after its wait), each observed once.
      const after = await scrape();
      const wait = 'switchyard_admission_wait_seconds';
      expect(after.get(wait)?.type).to.equal('histogram');
      expect(
        sampleOf(after, wait, { gate: 'concurrency' }) - sampleOf(before, wait, { gate: 'concurrency' }),
      ).to.equal(2);
      expect(
        histogramSum(after, wait, 'concurrency') - histogramSum(before, wait, 'concurrency'),
      ).to.be.at.least(HOLD_MS / 1000);
      // Nothing queued or open any more: the workflow has no series.
      await waitFor(
        async () => {
          const now = await scrape();
          return (
            sampleOf(now, 'switchyard_flow_control_queued_executions', labels) +
              sampleOf(now, 'switchyard_flow_control_open_executions', labels) ===
              0 || undefined
          );
        },
        { what: 'the gauges to drop the workflow' },
      );
    });

    it('reads the queued time of a run its throttle held back, and observes the throttle gate', async () => {
      const prefix = uniqueId('throttled-time');
      const workflowId = await callingWorkflow(prefix, { throttle: { limit: 1, period: '2s' } });
      const before = await scrape();
      const first = await trigger(service.api(), workflowId, { customer: 'a' });
      const second = await trigger(service.api(), workflowId, { customer: 'b' });
      const [one, two] = [
        await waitForExecution(service.api(), first, undefined, 60_000),
        await waitForExecution(service.api(), second, undefined, 60_000),
      ];
      expect([one.status, two.status]).to.deep.equal(['success', 'success']);
      // Which of the two the window let through first is the order of their acquires: one of them queued.
      const [straight, held] = one.queued_at === null ? [one, two] : [two, one];
      expect(straight).to.include({ queued_at: null, admitted_at: null, queued_ms: null });
      expect(held.queued_at).to.be.a('string');
      expect(held.admitted_at).to.be.a('string');
      expect(held.queued_ms).to.be.greaterThan(500);
      const after = await scrape();
      const wait = 'switchyard_admission_wait_seconds';
      expect(
        sampleOf(after, wait, { gate: 'throttle' }) - sampleOf(before, wait, { gate: 'throttle' }),
      ).to.equal(2);
    });

    it('reads the queued time of a debounced run: from its start to the end of its quiet time', async () => {
      const prefix = uniqueId('debounced-time');
      const workflowId = await callingWorkflow(prefix, { debounce: { period: '1s' } });
      const id = await trigger(service.api(), workflowId, { customer: 'a' });
      const done = await waitForExecution(service.api(), id, undefined, 60_000);
      expect(done.status).to.equal('success');
      expect(done.queued_at, 'queued from its start').to.equal(done.started_at);
      expect(done.admitted_at).to.be.a('string');
      expect(done.queued_ms).to.be.at.least(1000);
    });

    it('keeps the queued time of a run canceled while queued, with no admission', async () => {
      const prefix = uniqueId('canceled-queued');
      const workflowId = await callingWorkflow(prefix, { concurrency: { limit: 1 } });
      const release = holdNext(`/${prefix}/a`);
      const blocker = await trigger(service.api(), workflowId, { customer: 'a' });
      await waitFor(async () => receiver.requestsTo(`/${prefix}/a`).length === 1 || undefined, {
        what: 'the blocker to call the receiver',
      });
      const queued = await trigger(service.api(), workflowId, { customer: 'b' });
      await waitForExecution(service.api(), queued, (e) => e.status === 'queued', 60_000);
      await service.api().post(`/v1/executions/${queued}/cancel`, {}).expect(202);
      const canceled = await waitForExecution(service.api(), queued);
      expect(canceled.status).to.equal('canceled');
      expect(canceled.queued_at).to.be.a('string');
      expect(canceled.admitted_at).to.equal(null);
      expect(canceled.queued_ms).to.equal(
        Date.parse(canceled.finished_at!) - Date.parse(canceled.queued_at!),
      );
      release();
      expect((await waitForExecution(service.api(), blocker)).status).to.equal('success');
      expect((await read(blocker)).queued_at).to.equal(null);
    });
  });
}
