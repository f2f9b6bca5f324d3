/**
 * Flow control across replicas (docs/flow-control.md, ARCHITECTURE.md#flow-control): two API processes and
 * two worker processes over one Temporal server and one PostgreSQL server, a workflow with
 * `concurrency: {limit: 3, key: "input.customer"}`, and 1,000 triggers over 10 customers spread over both
 * APIs. Every trigger is accepted, every run succeeds with its call made once, and no customer ever has more
 * than 3 calls in flight at once: the limit holds once across all four processes, not per process.
 *
 * The receiver holds each call 20 to 80 ms, so a customer's places turn over quickly and many grants race.
 */
import { expect } from 'chai';
import { definition, httpStep } from '../support/fixtures';
import { Deployment } from '../support/deployment';
import { Receiver, type ReceivedRequest } from '../support/receiver';
import { apiClient, type ApiClient } from '../support/stack';
import { sleep } from '../support/wait';
import { reportScenario, ResponseLog, triggerEach, waitAllFinalListed } from './harness';

const RUNS = 1_000;
const CUSTOMERS = Array.from({ length: 10 }, (_, n) => `customer-${n}`);
const LIMIT = 3;
/** Triggers in flight at once, over both APIs. */
const CALLERS = 16;

describe('flow control across replicas: 1,000 runs, 10 keys, two APIs and two workers @integration @faults', function () {
  this.timeout(300_000);
  let deployment: Deployment;
  let receiver: Receiver;
  const urls: string[] = [];
  const log = new ResponseLog();
  /** Per customer, the calls in flight now and the most seen at once. */
  const inFlight = new Map<string, number>(CUSTOMERS.map((c) => [c, 0]));
  const most = new Map<string, number>(CUSTOMERS.map((c) => [c, 0]));
  /** Per execution id, the calls received. */
  const calls = new Map<string, number>();
  const runs: string[] = [];
  const timings: Record<string, number> = {};
  /** What the queue endpoint showed while the runs ran. */
  const queue = { reads: 0, mostQueued: 0, mostOpen: 0 };
  /** The queue is read while true (a failed test stops it in `after`). */
  let sampling = false;

  /** `/flow/<customer>/<execution id>` */
  const partsOf = (request: ReceivedRequest) => {
    const [, , customer, executionId] = request.path.split('/');
    return { customer: customer!, executionId: executionId! };
  };

  before(async () => {
    receiver = await Receiver.start();
    receiver.replyAlways(async (request) => {
      if (!request.path.startsWith('/flow/')) return { status: 204 };
      const { customer, executionId } = partsOf(request);
      calls.set(executionId, (calls.get(executionId) ?? 0) + 1);
      const open = (inFlight.get(customer) ?? 0) + 1;
      inFlight.set(customer, open);
      most.set(customer, Math.max(most.get(customer) ?? 0, open));
      await sleep(20 + Math.random() * 60);
      inFlight.set(customer, inFlight.get(customer)! - 1);
      return { status: 200, body: { ok: true } };
    });
    const started = performance.now();
    deployment = new Deployment();
    await deployment.start();
    urls.push(deployment.url, (await deployment.startExtraApi()).url);
    await deployment.startExtraWorker('worker 2');
    timings['setup_s'] = (performance.now() - started) / 1000;
  });

  after(async () => {
    sampling = false;
    reportScenario('flow-control-replicas', {
      runs: runs.length,
      responses: log.summary(),
      network_errors: log.networkErrors,
      most_in_flight: Object.fromEntries(most),
      queue_reads: queue,
      ...timings,
    });
    await deployment?.stop();
    await receiver?.stop();
  });

  it('accepts 1,000 triggers on both APIs, runs each once, never more than 3 of a customer at once', async () => {
    const admin = (n: number): ApiClient => apiClient(urls[n % urls.length]!, deployment.adminKey);
    const body = definition(
      [
        httpStep('call', {
          method: 'POST',
          url: `${receiver.url}/flow/{{ input.customer }}/{{ execution.id }}`,
        }),
      ],
      { concurrency: { limit: LIMIT, key: 'input.customer' } },
    );
    await admin(0).post('/v1/workflows', body).expect(201);
    const workflowId = body['id'] as string;

    // Meanwhile the queue endpoint, read now and then: the places each key holds (rows in the database,
    // counted from a run's admission to its release, a wider window than its call) and whether runs queued.
    sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const res = await admin(1)
          .get(`/v1/workflows/${workflowId}/queue`)
          .timeout(10_000)
          .catch(() => undefined);
        if (res?.status === 200) {
          queue.mostQueued = Math.max(queue.mostQueued, res.body.queued as number);
          for (const { open } of res.body.keys as { open: number }[])
            queue.mostOpen = Math.max(queue.mostOpen, open);
          queue.reads += 1;
        }
        await sleep(250);
      }
    })();

    // Each trigger goes to the next API in turn and is made again (after Retry-After) until accepted.
    const began = performance.now();
    runs.push(
      ...(await triggerEach(admin, workflowId, {
        count: RUNS,
        callers: CALLERS,
        log,
        input: (n) => ({ customer: CUSTOMERS[n % CUSTOMERS.length] }),
      })),
    );
    timings['triggers_s'] = (performance.now() - began) / 1000;
    expect(runs).to.have.length(RUNS);
    expect(new Set(runs).size, 'distinct execution ids').to.equal(RUNS);
    log.expectOnlyContractResponses();

    const statuses = await waitAllFinalListed(admin(0), workflowId, runs, 240_000);
    timings['all_final_s'] = (performance.now() - began) / 1000;
    sampling = false;
    await sampler;
    const notSucceeded = [...statuses].filter(([, status]) => status !== 'success');
    expect(notSucceeded.slice(0, 5), `${notSucceeded.length} runs did not succeed`).to.deep.equal([]);

    const notOnce = runs.filter((id) => calls.get(id) !== 1).map((id) => `${id}: ${calls.get(id) ?? 0}`);
    expect(notOnce.slice(0, 5), `${notOnce.length} runs not called exactly once`).to.deep.equal([]);
    expect(
      [...calls.keys()].filter((id) => !runs.includes(id)),
      'calls of unknown runs',
    ).to.deep.equal([]);
    for (const customer of CUSTOMERS)
      expect(most.get(customer), `calls of ${customer} in flight at once`).to.be.at.most(LIMIT);
    // The limit was reached, and runs queued behind it (a test where runs never overlapped would prove nothing).
    expect(Math.max(...most.values()), 'most calls of one customer in flight').to.equal(LIMIT);
    expect(queue.mostOpen, 'most places of one key held at once').to.equal(LIMIT);
    expect(queue.mostQueued, 'most runs queued at once').to.be.above(0);

    const left = (await admin(1).get(`/v1/workflows/${workflowId}/queue`).expect(200)).body;
    expect(left, 'nothing left queued or open').to.deep.equal({ queued: 0, open: 0, keys: [] });
  });
});
