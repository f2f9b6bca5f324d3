/**
 * Retrying a container (docs/definitions.md#retrying-a-container): a retry of an execution that failed
 * inside a parallel or map step re-runs only the branches or items that did not succeed, and keeps the
 * others' outputs, steps and timings; a workflow step whose child failed starts a new child.
 */
import { expect } from 'chai';
import {
  createWorkflow,
  definition,
  FAST_RETRY,
  httpStep,
  rulesStep,
  stepOf,
  trigger,
  uniqueId,
  waitForExecution,
  type ExecutionBody,
} from '../support/fixtures';
import { Receiver, type ReceivedRequest } from '../support/receiver';
import { startTestService, type TestService } from '../support/stack';

const NO_RETRY = { ...FAST_RETRY, max_attempts: 1 };

interface ContainerBody {
  status: string;
  output?: unknown;
  runs_total?: number;
  runs?: {
    key: string;
    status: string;
    started_at: string | null;
    steps: { id: string; output?: unknown }[];
  }[];
}

describe('retrying a container @integration', function () {
  let service: TestService;
  let receiver: Receiver;
  /** Paths the receiver answers with 500 until a test mends them. */
  const broken = new Set<string>();
  before(async function () {
    this.timeout(120_000);
    service = await startTestService();
    receiver = await Receiver.start();
    receiver.replyAlways((request: ReceivedRequest) =>
      broken.has(request.path)
        ? { status: 500, body: 'down' }
        : { status: 200, body: { path: request.path } },
    );
  });
  after(async () => {
    await receiver?.stop();
    await service?.stop();
  });

  /** A connector step calling `<receiver>/<prefix>/<suffix>`, failing at once while that path is broken. */
  const call = (id: string, prefix: string, suffix: string) =>
    httpStep(id, { method: 'POST', url: `${receiver.url}/${prefix}/${suffix}` }, { retry: NO_RETRY });

  async function failedRun(steps: unknown[], input: unknown): Promise<ExecutionBody> {
    const workflowId = await createWorkflow(service.api(), definition(steps as never));
    const failed = await waitForExecution(service.api(), await trigger(service.api(), workflowId, input));
    expect(failed.status, JSON.stringify(failed.error)).to.equal('failed');
    return failed;
  }

  async function retried(failed: ExecutionBody, body?: unknown): Promise<ExecutionBody> {
    const res = await service.api().post(`/v1/executions/${failed.execution_id}/retry`, body).expect(202);
    expect(res.body).to.include({ retried_from_step: errorPath(failed)[0] });
    return waitForExecution(service.api(), failed.execution_id);
  }

  const errorPath = (execution: ExecutionBody) => (execution.error as unknown as { path: string[] }).path;
  /** The response bodies of connector outputs. */
  const bodiesOf = (outputs: unknown) => (outputs as { body: unknown }[]).map((output) => output?.body);
  const calls = (prefix: string, suffix: string) => receiver.requestsTo(`/${prefix}/${suffix}`).length;
  const container = (execution: ExecutionBody, id: string) =>
    stepOf(execution, id) as unknown as ContainerBody;

  it('a map re-runs only its failed item and keeps the outputs of the others', async () => {
    const prefix = uniqueId('map');
    broken.add(`/${prefix}/3`);
    const failed = await failedRun(
      [{ id: 'each', kind: 'map', items: 'input.ids', steps: [call('send', prefix, '{{ item }}')] }],
      { ids: [0, 1, 2, 3, 4] },
    );
    expect(errorPath(failed)).to.deep.equal(['each', '3', 'send']);
    const before = container(failed, 'each').runs!;

    broken.delete(`/${prefix}/3`);
    const done = await retried(failed);
    expect(done.status, JSON.stringify(done.error)).to.equal('success');
    expect(
      [0, 1, 2, 3, 4].map((i) => calls(prefix, String(i))),
      'calls per item',
    ).to.deep.equal([1, 1, 1, 2, 1]);
    const each = container(done, 'each');
    expect(bodiesOf(each.output)).to.deep.equal([0, 1, 2, 3, 4].map((i) => ({ path: `/${prefix}/${i}` })));
    expect(each.runs_total).to.equal(5);
    // Kept items read as they were (their steps and timings); the retried one ran again.
    expect(each.runs![0]).to.deep.equal(before[0]);
    expect(each.runs![3]!.status).to.equal('success');
    expect(each.runs![3]!.started_at! > before[3]!.started_at!, 'item 3 started again').to.equal(true);
  });

  it('a parallel step re-runs only its failed branch', async () => {
    const prefix = uniqueId('par');
    broken.add(`/${prefix}/b`);
    const failed = await failedRun(
      [
        {
          id: 'both',
          kind: 'parallel',
          branches: [
            { id: 'a', steps: [call('call_a', prefix, 'a')] },
            { id: 'b', steps: [call('call_b', prefix, 'b')] },
          ],
        },
      ],
      {},
    );
    expect(errorPath(failed)).to.deep.equal(['both', 'b', 'call_b']);

    broken.delete(`/${prefix}/b`);
    const done = await retried(failed);
    expect(done.status, JSON.stringify(done.error)).to.equal('success');
    expect({ a: calls(prefix, 'a'), b: calls(prefix, 'b') }).to.deep.equal({ a: 1, b: 2 });
    const output = container(done, 'both').output as { a: unknown; b: unknown };
    expect(bodiesOf([output.a, output.b])).to.deep.equal([
      { path: `/${prefix}/a` },
      { path: `/${prefix}/b` },
    ]);
  });

  it('with a corrected input, a map keeps the items whose value did not change', async () => {
    const prefix = uniqueId('fix');
    broken.add(`/${prefix}/bad`);
    const failed = await failedRun(
      [{ id: 'each', kind: 'map', items: 'input.names', steps: [call('send', prefix, '{{ item }}')] }],
      { names: ['ann', 'bob', 'bad'] },
    );

    const done = await retried(failed, { input: { names: ['ann', 'bob', 'cid'] } });
    expect(done.status, JSON.stringify(done.error)).to.equal('success');
    expect(['ann', 'bob', 'bad', 'cid'].map((name) => calls(prefix, name))).to.deep.equal([1, 1, 1, 1]);
    expect(bodiesOf(container(done, 'each').output)).to.deep.equal(
      ['ann', 'bob', 'cid'].map((name) => ({ path: `/${prefix}/${name}` })),
    );
  });

  it('a map of more than 100 items re-runs only the items that did not succeed, chunk by chunk', async () => {
    const prefix = uniqueId('big');
    broken.add(`/${prefix}/57`);
    const count = 250;
    const failed = await failedRun(
      [{ id: 'each', kind: 'map', items: 'input.ids', steps: [call('send', prefix, '{{ item }}')] }],
      { ids: Array.from({ length: count }, (_, i) => i) },
    );
    expect(errorPath(failed)).to.deep.equal(['each', '57', 'send']);
    const firstRun = Array.from({ length: count }, (_, i) => calls(prefix, String(i)));

    broken.delete(`/${prefix}/57`);
    const done = await retried(failed);
    expect(done.status, JSON.stringify(done.error)).to.equal('success');
    const again = Array.from({ length: count }, (_, i) => calls(prefix, String(i)) - firstRun[i]!);
    // Each item succeeded exactly once in all: those that succeeded in the failed run did not run again.
    const succeededOnce = Array.from({ length: count }, (_, i) => (i === 57 ? 2 : 1));
    expect(
      Array.from({ length: count }, (_, i) => calls(prefix, String(i))),
      'calls per item over both runs',
    ).to.deep.equal(succeededOnce);
    expect(again.filter((n) => n > 0).length, 'items run by the retry').to.be.lessThan(count);
    const output = bodiesOf(container(done, 'each').output);
    expect(output).to.deep.equal(Array.from({ length: count }, (_, i) => ({ path: `/${prefix}/${i}` })));
  });

  it("a workflow step whose child failed: the retry starts a new child, of the child workflow's latest version", async () => {
    const child = uniqueId('child');
    const childVersion = (fails: boolean) => ({
      id: child,
      steps: [
        rulesStep(
          'bill',
          fails ? [{ when: 'true', action: 'fail', message: 'no credit line for {{ input.customer }}' }] : [],
          { default: '{{ input.customer & " billed" }}' },
        ),
      ],
    });
    await createWorkflow(service.api(), childVersion(true));
    const failed = await failedRun(
      [{ id: 'call', kind: 'workflow', workflow: child, input: { customer: '{{ input.name }}' } }],
      { name: 'Ada' },
    );
    expect(failed.error).to.deep.include({ step: 'call', code: 'child_failed' });
    const firstChild = (failed.error as unknown as { details: { execution_id: string; code: string }[] })
      .details[0]!;
    expect(firstChild.code).to.equal('rule_failed');

    // What made the child fail is fixed in a new version of its workflow.
    const fixed = await service.api().put(`/v1/workflows/${child}`, childVersion(false));
    expect(fixed.status, JSON.stringify(fixed.body)).to.equal(200);
    const done = await retried(failed);
    expect(done.status, JSON.stringify(done.error)).to.equal('success');
    const output = done.output as { execution_id: string; status: string; output: unknown };
    expect(output).to.include({ status: 'success', output: 'Ada billed' });
    expect(output.execution_id, 'a new child execution').to.not.equal(firstChild.execution_id);
    const secondChild = await waitForExecution(service.api(), output.execution_id);
    expect(secondChild).to.deep.include({ workflow_version: 2, status: 'success' });
    expect((secondChild as unknown as { parent: unknown }).parent).to.deep.equal({
      execution_id: failed.execution_id,
      step: 'call',
    });
    // The first child stays as it ended.
    const first = await waitForExecution(service.api(), firstChild.execution_id);
    expect(first).to.deep.include({ workflow_version: 1, status: 'failed' });
  });
});
