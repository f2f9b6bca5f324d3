/**
 * Fault: the API and the worker processes are killed (SIGKILL) while runs of a workflow with
 * `concurrency: {limit: 2, key}` are queued (docs/flow-control.md), then started again. Every run completes,
 * its call answered once; no key ever has more than 2 runs with a call in flight; nothing is left queued.
 *
 * The receiver holds each call 300 ms. Before the kill it stops answering (calls it holds then are cut by
 * the kill and made again by the restarted worker), so that no answer is on its way back when the worker
 * dies: a call answered once is then a step done once. A cut call counts as in flight until the same
 * run's call made again is answered (the run keeps its place meanwhile).
 */
import { expect } from 'chai';
import { definition, httpStep } from '../support/fixtures';
import { Deployment } from '../support/deployment';
import { Receiver, type ReceivedRequest } from '../support/receiver';
import type { ApiClient } from '../support/stack';
import { sleep, waitFor } from '../support/wait';
import { reportScenario, waitAllFinal } from './harness';

const RUNS = 40;
const KEYS = ['k0', 'k1'];
const LIMIT = 2;
const HOLD_MS = 300;

describe('fault: API and worker killed while flow control holds runs queued @integration @faults', function () {
  this.timeout(300_000);
  let deployment: Deployment;
  let receiver: Receiver;
  const client = (): ApiClient => deployment.client();
  /** Per key, the runs whose call is in flight; the most seen at once. */
  const inFlight = new Map<string, Set<string>>(KEYS.map((key) => [key, new Set()]));
  const most = new Map<string, number>(KEYS.map((key) => [key, 0]));
  /** While true, calls are held until the kill cuts them. */
  let frozen = false;
  const never = new Promise<void>(() => undefined);

  /** `/flow/<key>/<execution id>` */
  const partsOf = (request: ReceivedRequest) => {
    const [, , key, executionId] = request.path.split('/');
    return { key: key!, executionId: executionId! };
  };

  before(async () => {
    receiver = await Receiver.start();
    receiver.replyAlways(async (request) => {
      if (!request.path.startsWith('/flow/')) return { status: 200, body: { ok: true } };
      const { key, executionId } = partsOf(request);
      const open = inFlight.get(key)!;
      open.add(executionId);
      most.set(key, Math.max(most.get(key)!, open.size));
      await sleep(HOLD_MS);
      if (frozen) return { status: 200, body: { ok: true }, until: never };
      open.delete(executionId);
      return { status: 200, body: { ok: true } };
    });
    deployment = new Deployment();
    await deployment.start();
  });
  after(async () => {
    await deployment?.stop();
    await receiver?.stop();
  });

  it('completes every run once, never more than the limit per key at once, none left queued', async () => {
    const body = definition(
      [httpStep('call', { method: 'POST', url: `${receiver.url}/flow/{{ input.key }}/{{ execution.id }}` })],
      { concurrency: { limit: LIMIT, key: 'input.key' } },
    );
    await client().post('/v1/workflows', body).expect(201);
    const workflowId = body['id'] as string;
    const runs: string[] = [];
    for (let n = 0; n < RUNS; n++) {
      const res = await client().post(`/v1/workflows/${workflowId}/trigger`, { key: KEYS[n % KEYS.length] });
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      runs.push(res.body.execution_id as string);
    }
    const answered = () => receiver.requests.filter((r) => r.path.startsWith('/flow/') && r.answered);
    await waitFor(async () => answered().length >= 8, { timeoutMs: 60_000, what: '8 calls answered' });
    frozen = true;
    // Answers sent before the freeze reach their runs and are recorded before the kill.
    await sleep(2_000);
    const queue = (await client().get(`/v1/workflows/${workflowId}/queue`).expect(200)).body;
    expect(queue.queued, `runs queued at the kill: ${JSON.stringify(queue)}`).to.be.above(0);
    await Promise.all([deployment.api.kill('SIGKILL'), deployment.worker.kill('SIGKILL')]);
    frozen = false;
    await deployment.startApi();
    await deployment.startWorker();

    const statuses = await waitAllFinal(client(), runs, 240_000);
    const notSucceeded = [...statuses].filter(([, status]) => status !== 'success');
    expect(notSucceeded, 'runs that did not succeed').to.deep.equal([]);
    const answers = new Map<string, number>();
    for (const request of answered()) {
      const { executionId } = partsOf(request);
      answers.set(executionId, (answers.get(executionId) ?? 0) + 1);
    }
    const notOnce = runs.filter((id) => answers.get(id) !== 1).map((id) => `${id}: ${answers.get(id) ?? 0}`);
    expect(notOnce, 'runs whose call was not answered exactly once').to.deep.equal([]);
    for (const key of KEYS)
      expect(most.get(key), `calls of key ${key} in flight at once`).to.be.at.most(LIMIT);
    const after = (await client().get(`/v1/workflows/${workflowId}/queue`).expect(200)).body;
    expect(after, 'nothing left queued or open').to.deep.equal({ queued: 0, open: 0, keys: [] });
    reportScenario('flow-control-kill', {
      runs: RUNS,
      queued_at_kill: queue.queued,
      calls_cut_by_kill: receiver.requests.filter((r) => r.path.startsWith('/flow/') && !r.answered).length,
      most_in_flight: Object.fromEntries(most),
    });
  });
});
