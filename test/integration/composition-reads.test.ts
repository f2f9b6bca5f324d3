/**
 * docs/api.md#steps-that-hold-steps: a container's entry in `GET /v1/executions/{id}` carries its runs (the
 * first 20) and their steps, and `GET /v1/executions/{id}/steps/{step_id}/runs` pages through all of them.
 * States too brief to catch in a real run (items in flight, pending ones): test/unit/container-reads.test.ts.
 */
import { expect } from 'chai';
import {
  createWorkflow,
  definition,
  expectError,
  rulesStep,
  stepOf,
  trigger,
  waitForExecution,
  type ExecutionBody,
  type RunBody,
} from '../support/fixtures';
import { startTestService, type TestService } from '../support/stack';

interface RunPage {
  data: RunBody[];
  next_cursor: string | null;
}

describe('composition reads @integration', function () {
  let service: TestService;
  before(async function () {
    this.timeout(120_000);
    service = await startTestService();
  });
  after(async () => {
    await service?.stop();
  });

  async function start(steps: unknown[], input: unknown = {}): Promise<string> {
    const workflowId = await createWorkflow(service.api(), definition(steps as never));
    return trigger(service.api(), workflowId, input);
  }

  async function run(steps: unknown[], input: unknown = {}): Promise<ExecutionBody> {
    return waitForExecution(service.api(), await start(steps, input));
  }

  /** Every run of `step`, page after page (`query` filters), and how many pages it took. */
  async function allRuns(
    executionId: string,
    step: string,
    query: string,
  ): Promise<{ runs: RunBody[]; pages: number }> {
    const runs: RunBody[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await service
        .api()
        .get(`/v1/executions/${executionId}/steps/${step}/runs?${query}${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const page = res.body as RunPage;
      runs.push(...page.data);
      cursor = page.next_cursor;
      pages += 1;
    } while (cursor);
    return { runs, pages };
  }

  it('a parallel step shows one run per branch, keyed by branch id, with its steps', async () => {
    const execution = await run([
      {
        id: 'enrich',
        kind: 'parallel',
        branches: [
          {
            id: 'crm',
            steps: [
              rulesStep('crm_a', [{ when: 'true', output: 'a' }]),
              rulesStep('crm_b', [{ when: 'true', output: '{{ steps.crm_a.output }}b' }]),
            ],
          },
          { id: 'score', steps: [rulesStep('score_it', [{ when: 'true', output: 42 }])] },
        ],
      },
    ]);
    expect(execution.status, JSON.stringify(execution.error)).to.equal('success');
    const enrich = stepOf(execution, 'enrich');
    expect(enrich).to.include({ kind: 'parallel', status: 'success', runs_total: 2 });
    expect(enrich.output).to.deep.equal({ crm: 'ab', score: 42 });
    expect(enrich.started_at).to.be.a('string');
    // It ends when its last run does.
    expect(enrich.finished_at).to.equal(
      enrich
        .runs!.map((r) => r.finished_at!)
        .sort()
        .at(-1),
    );
    expect(
      enrich.runs!.map((r) => ({
        key: r.key,
        path: r.path,
        status: r.status,
        steps: r.steps.map((s) => [s.id, s.status, s.output]),
      })),
    ).to.deep.equal([
      {
        key: 'crm',
        path: ['enrich', 'crm'],
        status: 'success',
        steps: [
          ['crm_a', 'success', 'a'],
          ['crm_b', 'success', 'ab'],
        ],
      },
      { key: 'score', path: ['enrich', 'score'], status: 'success', steps: [['score_it', 'success', 42]] },
    ]);
  });

  it('a map of 25 items shows 20 runs of 25; the runs list pages through all of them, or those of one status', async () => {
    const items = Array.from({ length: 25 }, (_, n) => ({ n, fail: n % 5 === 0 }));
    const id = await start(
      [
        {
          id: 'each',
          kind: 'map',
          items: 'input.items',
          tolerated_failures: 5,
          steps: [
            rulesStep(
              'check',
              [{ when: 'item.fail = true', action: 'fail', message: 'item {{ index }} failed' }],
              {
                default: '{{ item.n }}',
              },
            ),
          ],
        },
      ],
      { items },
    );
    const execution = await waitForExecution(service.api(), id);
    expect(execution.status, JSON.stringify(execution.error)).to.equal('success');
    const each = stepOf(execution, 'each');
    expect(each).to.include({ status: 'success', runs_total: 25 });
    expect(each.runs!.map((r) => r.key)).to.deep.equal(Array.from({ length: 20 }, (_, i) => String(i)));
    expect(each.output).to.deep.equal(items.map(({ n, fail }) => (fail ? null : n)));
    const failedRun = each.runs![5]!;
    expect(failedRun.status).to.equal('failed');
    expect(failedRun.steps[0]).to.deep.include({
      id: 'check',
      status: 'failed',
      error: { code: 'rule_failed', message: 'item 5 failed' },
    });

    const everything = await allRuns(id, 'each', 'limit=10');
    expect(everything.pages).to.equal(3);
    expect(everything.runs.map((r) => r.key)).to.deep.equal(items.map(({ n }) => String(n)));

    const failed = await allRuns(id, 'each', 'status=failed&limit=2');
    expect(failed.runs.map((r) => r.key)).to.deep.equal(['0', '5', '10', '15', '20']);
    expect(failed.pages).to.equal(3);
    expect(failed.runs.every((r) => r.status === 'failed')).to.equal(true);
  });

  it('the items of a map of more than 100 items (run in chunks) show their steps, read and paged', async () => {
    const items = Array.from({ length: 150 }, (_, n) => n);
    const execution = await run(
      [
        rulesStep('base', [{ when: 'true', output: 1000 }]),
        {
          id: 'each',
          kind: 'map',
          items: 'input.items',
          tolerated_failures: 1,
          steps: [
            rulesStep('check', [{ when: 'item = 130', action: 'fail', message: 'item {{ index }} failed' }], {
              default: '{{ item + steps.base.output }}',
            }),
            rulesStep('twice', [{ when: 'true', output: '{{ steps.check.output * 2 }}' }]),
          ],
        },
      ],
      { items },
    );
    expect(execution.status, JSON.stringify(execution.error)).to.equal('success');
    const each = stepOf(execution, 'each');
    expect(each.runs_total).to.equal(150);
    // The first 20 items, from the first chunk's history: each step, its output from the steps before the map.
    expect(each.runs![7]!.steps.map((step) => [step.id, step.status, step.output])).to.deep.equal([
      ['check', 'success', 1007],
      ['twice', 'success', 2014],
    ]);

    // A page in the second chunk, with the failed item's error.
    const page = await service
      .api()
      .get(`/v1/executions/${execution.execution_id}/steps/each/runs?status=failed`);
    expect(page.status, JSON.stringify(page.body)).to.equal(200);
    const [failed] = (page.body as RunPage).data;
    expect(failed!.key).to.equal('130');
    expect(failed!.steps[0]).to.deep.include({
      id: 'check',
      status: 'failed',
      error: { code: 'rule_failed', message: 'item 130 failed' },
    });
    const all = await allRuns(execution.execution_id, 'each', 'limit=100');
    expect(all.runs[149]!.steps.map((step) => step.output)).to.deep.equal([1149, 2298]);
  });

  it('a cursor of the runs list is refused with other filters (400)', async () => {
    const id = await start(
      [
        {
          id: 'each',
          kind: 'map',
          items: 'input.list',
          steps: [rulesStep('noop', [{ when: 'true', output: 1 }])],
        },
      ],
      { list: [1, 2, 3] },
    );
    await waitForExecution(service.api(), id);
    const first = await service.api().get(`/v1/executions/${id}/steps/each/runs?limit=1`);
    const cursor = (first.body as RunPage).next_cursor;
    expect(cursor).to.be.a('string');
    expectError(
      await service.api().get(`/v1/executions/${id}/steps/each/runs?status=success&cursor=${cursor}`),
      400,
      'invalid_request',
    );
  });

  it('a container whose `if` does not hold is skipped, with no runs', async () => {
    const execution = await run([
      {
        id: 'maybe',
        kind: 'loop',
        if: 'input.again = true',
        max_iterations: 3,
        until: 'true',
        steps: [rulesStep('once', [{ when: 'true', output: 1 }])],
      },
      rulesStep('after', [{ when: 'true', output: 'done' }]),
    ]);
    expect(execution.status, JSON.stringify(execution.error)).to.equal('success');
    expect(stepOf(execution, 'maybe')).to.deep.include({
      status: 'skipped',
      runs_total: 0,
      runs: [],
      started_at: null,
    });
    expect(stepOf(execution, 'after').status).to.equal('success');
  });

  it('a step that fails inside a container fails its run and the container, with its error', async () => {
    const execution = await run(
      [
        {
          id: 'each',
          kind: 'map',
          items: 'input.list',
          concurrency: 1,
          steps: [
            rulesStep('check', [{ when: 'item = 2', action: 'fail', message: 'two' }], { default: 'ok' }),
          ],
        },
      ],
      { list: [1, 2, 3] },
    );
    expect(execution.status).to.equal('failed');
    const each = stepOf(execution, 'each');
    expect(each).to.deep.include({ status: 'failed', error: { code: 'rule_failed', message: 'two' } });
    // One at a time: the third item never started.
    expect(each.runs!.map((r) => [r.key, r.status])).to.deep.equal([
      ['0', 'success'],
      ['1', 'failed'],
      ['2', 'canceled'],
    ]);
    expect(each.runs![1]!.steps.map((s) => [s.id, s.status])).to.deep.equal([['check', 'failed']]);
    expect(each.runs![2]).to.deep.include({ started_at: null, steps: [] });
    expect(each.finished_at).to.equal(each.runs![1]!.finished_at);
  });

  it('a run waiting for an approval shows waiting, its container running; a cancel cancels both', async () => {
    const id = await start([
      {
        id: 'both',
        kind: 'parallel',
        branches: [
          { id: 'ask', steps: [{ id: 'review', kind: 'approval', message: 'ok?' }] },
          { id: 'work', steps: [rulesStep('busy', [{ when: 'true', output: 1 }])] },
        ],
      },
    ]);
    const waiting = await waitForExecution(service.api(), id, (e) => e.status === 'waiting');
    const both = stepOf(waiting, 'both');
    expect(both.status).to.equal('running');
    expect(both.runs!.map((r) => [r.key, r.status])).to.deep.equal([
      ['ask', 'waiting'],
      ['work', 'success'],
    ]);
    await service.api().post(`/v1/executions/${id}/cancel`).expect(202);
    const canceled = await waitForExecution(service.api(), id);
    const after = stepOf(canceled, 'both');
    expect(after.status).to.equal('canceled');
    expect(after.runs!.map((r) => [r.key, r.status, r.steps[0]!.status])).to.deep.equal([
      ['ask', 'canceled', 'canceled'],
      ['work', 'success', 'success'],
    ]);
  });

  it('the runs list answers 404 step_not_found for an unknown step and for one that holds no steps', async () => {
    const execution = await run([rulesStep('plain', [{ when: 'true', output: 1 }])]);
    for (const step of ['nope', 'plain']) {
      expectError(
        await service.api().get(`/v1/executions/${execution.execution_id}/steps/${step}/runs`),
        404,
        'step_not_found',
      );
    }
  });

  it("another workspace's key reads no runs of this execution (404)", async () => {
    const execution = await run(
      [
        {
          id: 'each',
          kind: 'map',
          items: 'input.list',
          steps: [rulesStep('noop', [{ when: 'true', output: 1 }])],
        },
      ],
      { list: [1] },
    );
    const { key } = await service.newWorkspace(['read']);
    expectError(
      await service.api(key).get(`/v1/executions/${execution.execution_id}/steps/each/runs`),
      404,
      'execution_not_found',
    );
  });
});
