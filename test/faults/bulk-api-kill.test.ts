/**
 * Fault: the API process that runs a bulk operation (docs/operations.md#bulk-operations) is killed (SIGKILL)
 * half-way through a retry of 1,000 failed executions, then started again. Two API processes share the
 * database, so either may take the operation on once its lease runs out: it goes on where it stopped,
 * completes, and counts every execution retried once: those retried before the kill (some were under way)
 * are not retried again, and none is left out.
 *
 * Each run's one step calls the receiver, which answers 500 (the step has no retries) until it is "fixed";
 * then the bulk retry runs every execution again from that step. The receiver counts the calls of each
 * execution: one that failed, then one that succeeded, whatever the kill cut.
 */
import { expect } from 'chai';
import { definition, httpStep } from '../support/fixtures';
import { Deployment, startUntilReady, type Managed } from '../support/deployment';
import { Receiver } from '../support/receiver';
import { apiClient, type ApiClient } from '../support/stack';
import { waitFor } from '../support/wait';
import { reportScenario, ResponseLog, triggerEach, waitAllFinalListed } from './harness';

const RUNS = 1_000;
/** Triggers in flight at once, over both APIs. */
const CALLERS = 16;
/**
 * Actions a second per API process, above the default 20 so that the test stays short: the retries
 * themselves (a describe, a history read and a start each) then set the pace, about 20 a second on 2 busy
 * cores. Whatever the pace, the operation waits out the killed runner's lease (BULK_LEASE_MS, 15 s here)
 * before going on.
 */
const ACTIONS_PER_SECOND = 50;

describe('fault: API killed in the middle of a bulk retry of 1,000 executions @integration @faults', function () {
  this.timeout(300_000);
  let deployment: Deployment;
  let receiver: Receiver;
  const apis: { process: Managed; url: string }[] = [];
  const log = new ResponseLog();
  const runs: string[] = [];
  /** Until true, every call fails. */
  let fixed = false;
  /** Per execution, the calls answered while broken and once fixed. */
  const failedCalls = new Map<string, number>();
  const fixedCalls = new Map<string, number>();
  const timings: Record<string, number> = {};
  const report: Record<string, unknown> = {};
  const client = (n = 0): ApiClient => apiClient(apis[n % apis.length]!.url, deployment.adminKey);
  let workflowId = '';

  before(async () => {
    receiver = await Receiver.start();
    receiver.replyAlways((request) => {
      const [, prefix, executionId] = request.path.split('/');
      if (prefix !== 'call' || !executionId) return { status: 204 };
      const calls = fixed ? fixedCalls : failedCalls;
      calls.set(executionId, (calls.get(executionId) ?? 0) + 1);
      return fixed ? { status: 200, body: { ok: true } } : { status: 500, body: { error: 'broken' } };
    });
    deployment = new Deployment({
      env: { BULK_ACTIONS_PER_SECOND: String(ACTIONS_PER_SECOND), BULK_LEASE_MS: '15000' },
    });
    await deployment.start();
    apis.push({ process: deployment.api, url: deployment.url }, await deployment.startExtraApi());
    const body = definition([
      httpStep(
        'call',
        { method: 'POST', url: `${receiver.url}/call/{{ execution.id }}` },
        { retry: { max_attempts: 1 } },
      ),
    ]);
    await client().post('/v1/workflows', body).expect(201);
    workflowId = body['id'] as string;

    const began = performance.now();
    runs.push(
      ...(await triggerEach(client, workflowId, { count: RUNS, callers: CALLERS, log, input: () => ({}) })),
    );
    timings['triggers_s'] = (performance.now() - began) / 1000;
    const statuses = await waitAllFinalListed(client(), workflowId, runs, 240_000);
    expect(
      [...statuses.values()].filter((status) => status !== 'failed'),
      'runs that did not fail',
    ).to.deep.equal([]);
    // The bulk operation chooses through the list's status filter (visibility), which may lag the runs.
    await waitFor(async () => (await failedListed()) === RUNS, {
      timeoutMs: 60_000,
      intervalMs: 1000,
      what: `${RUNS} failed runs listed`,
    });
    timings['all_failed_s'] = (performance.now() - began) / 1000;
  });

  /** How many executions of the workflow the list shows `failed`. */
  async function failedListed(): Promise<number> {
    let count = 0;
    let cursor: string | null = null;
    do {
      const res = await client()
        .get(
          `/v1/executions?workflow=${workflowId}&status=failed&limit=100${cursor ? `&cursor=${cursor}` : ''}`,
        )
        .expect(200);
      count += (res.body.data as unknown[]).length;
      cursor = res.body.next_cursor as string | null;
    } while (cursor);
    return count;
  }

  after(async () => {
    reportScenario('bulk-api-kill', {
      executions: runs.length,
      responses: log.summary(),
      ...report,
      ...timings,
    });
    await deployment?.stop();
    await receiver?.stop();
  });

  it('accepted every trigger, and every run failed on its call, once', () => {
    expect(runs).to.have.length(RUNS);
    log.expectOnlyContractResponses();
    const notOnce = runs.filter((id) => failedCalls.get(id) !== 1);
    expect(notOnce.slice(0, 5), `${notOnce.length} runs not called exactly once`).to.deep.equal([]);
  });

  it('resumes after the kill, completes, and retries every execution once', async () => {
    fixed = true;
    const began = performance.now();
    const created = await client()
      .post('/v1/bulk-operations', { action: 'retry', filter: { workflow: workflowId, status: 'failed' } })
      .expect(202);
    const id = created.body.id as string;
    expect(created.body.matched).to.equal(RUNS);

    // The process that runs it says so in its log (the one that took the request, usually: it kicks its runner).
    const runsIt = (api: Managed) =>
      api.output.split('\n').some((line) => line.includes(id) && line.includes('Bulk operation runs'));
    const runner = await waitFor(async () => apis.find((api) => runsIt(api.process)), {
      timeoutMs: 30_000,
      what: 'an API process to run the operation',
    });
    const atKill = await waitFor(
      async () => {
        const op = (await client().get(`/v1/bulk-operations/${id}`).expect(200)).body;
        return op.succeeded >= RUNS * 0.4 ? (op.succeeded as number) : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 200, what: 'the operation under way' },
    );
    await runner.process.kill('SIGKILL');
    report['succeeded_at_kill'] = atKill;
    report['killed'] = runner.process.name;
    report['retried_calls_at_kill'] = fixedCalls.size;
    // The executions the killed runner was acting on: the resumed runner acts on them again first.
    report['acting_at_kill'] = await deployment.withDatabase(async (db) => {
      const [row] = await db.query<{ n: number }>(
        "select count(*)::int as n from bulk_operation_items where operation_id = $1 and state = 'acting'",
        [id],
      );
      return row?.n;
    });
    timings['kill_s'] = (performance.now() - began) / 1000;
    const survivor = apis.find((api) => api !== runner)!;
    await startUntilReady(runner.process, runner.url);

    const op = await waitFor(
      async () => {
        const res = await apiClient(survivor.url, deployment.adminKey)
          .get(`/v1/bulk-operations/${id}`)
          .timeout(10_000);
        return res.status === 200 && res.body.status === 'completed' ? res.body : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 1000, what: 'the operation completed after the kill' },
    );
    timings['operation_s'] = (performance.now() - began) / 1000;
    report['resumed_by'] = apis.filter((api) => runsIt(api.process)).map((api) => api.process.name);
    expect(op).to.include({ matched: RUNS, succeeded: RUNS, failed: 0, skipped: 0 });

    const statuses = await waitAllFinalListed(client(), workflowId, runs, 180_000);
    timings['all_succeeded_s'] = (performance.now() - began) / 1000;
    const notSucceeded = [...statuses].filter(([, status]) => status !== 'success');
    expect(notSucceeded.slice(0, 5), `${notSucceeded.length} runs did not succeed`).to.deep.equal([]);
    // Each execution's retried run made its call once: none retried twice, none left out.
    const notOnce = runs
      .filter((run) => fixedCalls.get(run) !== 1)
      .map((run) => `${run}: ${fixedCalls.get(run) ?? 0}`);
    expect(
      notOnce.slice(0, 5),
      `${notOnce.length} executions whose retry did not call exactly once`,
    ).to.deep.equal([]);
    // One retry record per execution: each was retried (none skipped or left), and by one retry.
    const counts = await deployment.withDatabase(async (db) =>
      db.query<{ execution_id: string; n: number }>(
        'select execution_id, count(*)::int as n from execution_retries where execution_id = any($1) group by execution_id',
        [runs],
      ),
    );
    expect(
      counts.filter((row) => row.n !== 1),
      'executions with more than one retry',
    ).to.deep.equal([]);
    expect(counts).to.have.length(RUNS);
  });
});
