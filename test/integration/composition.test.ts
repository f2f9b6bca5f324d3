/** docs/definitions.md#composition: steps that hold steps (parallel, map, switch, loop) run as the contract says. */
import { temporal } from '@temporalio/proto';
import { expect } from 'chai';
import {
  createWorkflow,
  definition,
  httpStep,
  uniqueId,
  rulesStep,
  stepOf,
  trigger,
  waitForExecution,
  type ExecutionBody,
  type StepBody,
} from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { startTestService, type TestService } from '../support/stack';
import { waitFor } from '../support/wait';

describe('composition @integration', function () {
  let service: TestService;
  let receiver: Receiver;
  before(async function () {
    this.timeout(120_000);
    service = await startTestService();
    receiver = await Receiver.start();
  });
  after(async () => {
    await receiver?.stop();
    await service?.stop();
  });

  async function run(
    steps: unknown[],
    input: unknown = {},
    extra: Record<string, unknown> = {},
  ): Promise<ExecutionBody & { output?: unknown }> {
    const workflowId = await createWorkflow(service.api(), definition(steps as never, extra));
    return waitForExecution(service.api(), await trigger(service.api(), workflowId, input));
  }

  it('parallel: every branch runs, the output maps each branch to its last step output', async () => {
    const execution = await run([
      {
        id: 'enrich',
        kind: 'parallel',
        branches: [
          { id: 'crm', steps: [httpStep('crm_get', { method: 'GET', url: `${receiver.url}/crm` })] },
          { id: 'score', steps: [rulesStep('score_it', [{ when: 'true', output: 42 }])] },
        ],
      },
      rulesStep('after', [{ when: 'true', output: '{{ steps.enrich.output.score }}' }]),
    ]);
    expect(execution.status, JSON.stringify(execution.error)).to.equal('success');
    expect(execution.output).to.equal(42);
  });

  it('parallel: a failing branch fails the step; a branch waiting for approval stops waiting', async () => {
    const execution = await run([
      {
        id: 'both',
        kind: 'parallel',
        branches: [
          {
            id: 'waits',
            steps: [{ id: 'ok', kind: 'approval' }, rulesStep('never', [{ when: 'true', output: 1 }])],
          },
          { id: 'fails', steps: [rulesStep('boom', [{ when: 'true', action: 'fail', message: 'no' }])] },
        ],
      },
    ]);
    expect(execution.status).to.equal('failed');
    expect(execution.error).to.deep.include({ step: 'boom', code: 'rule_failed' });
    expect((execution.error as unknown as { path: string[] }).path).to.deep.equal(['both', 'fails', 'boom']);
  });

  it('map: each item runs with `item` and `index`; the output is in item order', async () => {
    const execution = await run(
      [
        {
          id: 'double',
          kind: 'map',
          items: '{{ input.numbers }}',
          concurrency: 2,
          steps: [rulesStep('times_two', [{ when: 'true', output: '{{ item * 2 + index / 10 }}' }])],
        },
      ],
      { numbers: [1, 2, 3] },
    );
    expect(execution.status, JSON.stringify(execution.error)).to.equal('success');
    expect(execution.output).to.deep.equal([2, 4.1, 6.2]);
  });

  it('switch: the first case that holds runs; the output names it', async () => {
    const execution = await run(
      [
        {
          id: 'by_plan',
          kind: 'switch',
          cases: [
            {
              id: 'gold',
              when: "input.plan = 'enterprise'",
              steps: [rulesStep('g', [{ when: 'true', output: 'gold' }])],
            },
            {
              id: 'silver',
              when: "input.plan = 'pro'",
              steps: [rulesStep('s', [{ when: 'true', output: 'silver' }])],
            },
          ],
          default: [rulesStep('d', [{ when: 'true', output: 'bronze' }])],
        },
      ],
      { plan: 'pro' },
    );
    expect(execution.status, JSON.stringify(execution.error)).to.equal('success');
    expect(execution.output).to.deep.equal({ case: 'silver', output: 'silver' });
  });

  it('loop: repeats until `until` holds, with `iteration` in the context', async () => {
    const execution = await run([
      {
        id: 'count',
        kind: 'loop',
        max_iterations: 10,
        until: 'steps.tick.output >= 3',
        steps: [rulesStep('tick', [{ when: 'true', output: '{{ iteration + 1 }}' }])],
      },
    ]);
    expect(execution.status, JSON.stringify(execution.error)).to.equal('success');
    expect(execution.output).to.deep.equal({ iterations: 3, output: 3 });
  });

  it('a failing step inside a container fails the execution with its path', async () => {
    const execution = await run(
      [
        {
          id: 'each',
          kind: 'map',
          items: 'input.list',
          steps: [
            rulesStep('check', [{ when: 'item = 2', action: 'fail', message: 'two' }], { default: 'ok' }),
          ],
        },
      ],
      { list: [1, 2, 3] },
    );
    expect(execution.status).to.equal('failed');
    expect(execution.error).to.deep.include({ step: 'check', code: 'rule_failed' });
    expect((execution.error as { path?: string[] }).path).to.deep.equal(['each', '1', 'check']);
  });

  it('a definition nested at the limit (map, parallel, switch, loop, steps: 5 levels) saves and runs', async () => {
    const steps = [
      {
        id: 'each',
        kind: 'map',
        items: 'input.numbers',
        steps: [
          {
            id: 'fork',
            kind: 'parallel',
            branches: [
              {
                id: 'calc',
                steps: [
                  {
                    id: 'pick',
                    kind: 'switch',
                    cases: [
                      {
                        id: 'even',
                        when: 'item % 2 = 0',
                        steps: [
                          {
                            id: 'count_up',
                            kind: 'loop',
                            max_iterations: 10,
                            // Reads the map's item four levels out, and the step of its own iteration.
                            until: 'steps.step_up.output >= item',
                            steps: [rulesStep('step_up', [{ when: 'true', output: '{{ iteration + 1 }}' }])],
                          },
                        ],
                      },
                    ],
                    default: [rulesStep('odd', [{ when: 'true', output: '{{ -item }}' }])],
                  },
                ],
              },
              { id: 'label', steps: [rulesStep('name_it', [{ when: 'true', output: 'item {{ index }}' }])] },
            ],
          },
        ],
      },
    ];
    const execution = await run(steps, { numbers: [1, 2, 4] });
    expect(execution.status, JSON.stringify(execution.error)).to.equal('success');
    expect(execution.output).to.deep.equal([
      { calc: { case: 'default', output: -1 }, label: 'item 0' },
      { calc: { case: 'even', output: { iterations: 2, output: 2 } }, label: 'item 1' },
      { calc: { case: 'even', output: { iterations: 4, output: 4 } }, label: 'item 2' },
    ]);
    // The read goes down all five levels: item 2, branch calc, case even, the loop's last iteration, its step.
    const runsOf = (step: StepBody | undefined, key: string) => step?.runs?.find((r) => r.key === key)?.steps;
    const item = runsOf(stepOf(execution, 'each'), '2');
    const branch = runsOf(item?.[0], 'calc');
    const chosen = runsOf(branch?.[0], 'even');
    const lastIteration = runsOf(chosen?.[0], '3');
    expect(lastIteration?.map((step) => [step.id, step.status, step.output])).to.deep.equal([
      ['step_up', 'success', 4],
    ]);
  });

  describe('workflow steps', () => {
    let billing: string;
    before(async () => {
      billing = await createWorkflow(
        service.api(),
        definition(
          [
            rulesStep('bill', [{ when: "input.customer = 'bad'", action: 'fail', message: 'no credit' }], {
              default: '{{ input.customer & " billed" }}',
            }),
          ],
          {
            input_schema: {
              type: 'object',
              required: ['customer'],
              properties: { customer: { type: 'string' } },
            },
          },
        ),
      );
    });

    it('starts the other workflow as a child execution and ends with its output', async () => {
      const execution = await run(
        [{ id: 'call', kind: 'workflow', workflow: billing, input: { customer: '{{ input.name }}' } }],
        { name: 'Ada' },
      );
      expect(execution.status, JSON.stringify(execution.error)).to.equal('success');
      const output = execution.output as { execution_id: string; status: string; output: unknown };
      expect(output).to.include({ status: 'success', output: 'Ada billed' });
      // The step shows what it did: its child's id and output.
      const step = execution.steps.find((s) => s.id === 'call')!;
      expect(step).to.deep.include({ kind: 'workflow', status: 'success' });
      expect(step.output).to.deep.equal(output);
      const child = (await service.api().get(`/v1/executions/${output.execution_id}`).expect(200)).body;
      expect(child.trigger).to.deep.equal({ type: 'workflow' });
      expect(child.parent).to.deep.equal({ execution_id: execution.execution_id, step: 'call' });
      const listed = (await service.api().get(`/v1/executions?workflow=${billing}`).expect(200)).body.data;
      expect(
        listed.find((e: { execution_id: string }) => e.execution_id === output.execution_id).parent,
      ).to.deep.equal({
        execution_id: execution.execution_id,
        step: 'call',
      });
    });

    it('fails with child_failed and the child error in details when the child fails', async () => {
      const execution = await run([
        { id: 'call', kind: 'workflow', workflow: billing, input: { customer: 'bad' } },
      ]);
      expect(execution.status).to.equal('failed');
      expect(execution.error).to.deep.include({ step: 'call', code: 'child_failed' });
      const details = (execution.error as { details?: { code: string; step: string }[] }).details;
      expect(details?.[0]).to.deep.include({ step: 'bill', code: 'rule_failed' });
    });

    it('fails with invalid_input when the input does not match the child input_schema', async () => {
      const execution = await run([
        { id: 'call', kind: 'workflow', workflow: billing, input: { customer: 7 } },
      ]);
      expect(execution.status).to.equal('failed');
      expect(execution.error).to.deep.include({ step: 'call', code: 'invalid_input' });
    });

    it('canceling the parent cancels the child it waits for', async () => {
      const approver = await createWorkflow(service.api(), definition([{ id: 'ok', kind: 'approval' }]));
      const parentWorkflow = await createWorkflow(
        service.api(),
        definition([{ id: 'call', kind: 'workflow', workflow: approver }] as never),
      );
      const parentId = await trigger(service.api(), parentWorkflow);
      const child = await waitFor(
        async () => {
          const list = (await service.api().get(`/v1/executions?workflow=${approver}`).expect(200)).body.data;
          return list.find((e: { status: string }) => e.status === 'waiting') as
            { execution_id: string } | undefined;
        },
        { what: 'the child waiting for its approval' },
      );
      await service.api().post(`/v1/executions/${parentId}/cancel`).expect(202);
      expect((await waitForExecution(service.api(), parentId)).status).to.equal('canceled');
      expect((await waitForExecution(service.api(), child.execution_id)).status).to.equal('canceled');
    });

    it('refuses to nest children more than 10 deep: child_depth_exceeded', async () => {
      const id = uniqueId('recurse');
      await createWorkflow(service.api(), { id, steps: [{ id: 'again', kind: 'workflow', workflow: id }] });
      const root = await waitForExecution(service.api(), await trigger(service.api(), id), undefined, 60_000);
      expect(root.error).to.deep.include({ step: 'again', code: 'child_failed' });
      // Each level fails with its child's error; the deepest names the limit.
      let error = root.error as { code: string; details?: { execution_id: string; code: string }[] };
      let depth = 0;
      while (error.code === 'child_failed') {
        const child = await waitForExecution(service.api(), error.details![0]!.execution_id);
        error = child.error as typeof error;
        depth++;
      }
      expect(error.code).to.equal('child_depth_exceeded');
      expect(depth).to.equal(10);
    });

    it('with wait false succeeds at once with the child execution id', async () => {
      const execution = await run([
        { id: 'call', kind: 'workflow', workflow: billing, wait: false, input: { customer: 'Bo' } },
      ]);
      expect(execution.status, JSON.stringify(execution.error)).to.equal('success');
      const { execution_id } = execution.output as { execution_id: string };
      const child = await waitForExecution(service.api(), execution_id);
      expect(child.status).to.equal('success');
    });
  });

  describe('a map of more items than one history holds', () => {
    it('runs them in chunks of 100, each a child workflow, and keeps the item order', async () => {
      const numbers = Array.from({ length: 250 }, (_, i) => i);
      const execution = await run(
        [
          {
            id: 'square',
            kind: 'map',
            items: 'input.numbers',
            concurrency: 3,
            steps: [
              rulesStep('sq', [{ when: 'true', output: '{{ item * item }}' }]),
              rulesStep('plus', [{ when: 'true', output: '{{ steps.sq.output + index }}' }]),
            ],
          },
        ],
        { numbers },
      );
      expect(execution.status, JSON.stringify(execution.error)).to.equal('success');
      expect(execution.output).to.deep.equal(numbers.map((n) => n * n + n));
      // Reads take each item's status from its chunk's result (its steps are in the chunk's history).
      const map = execution.steps.find((step) => step.id === 'square') as unknown as {
        status: string;
        runs_total: number;
        runs: { key: string; status: string }[];
      };
      expect(map).to.include({ status: 'success', runs_total: 250 });
      expect(map.runs.map((r) => r.status)).to.deep.equal(Array(20).fill('success'));
      const { client } = service.runtime.services.temporal;
      const history = await client.workflow.getHandle(execution.execution_id).fetchHistory();
      const children = (history.events ?? []).filter(
        (e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED,
      );
      expect(
        children.map((e) => e.childWorkflowExecutionStartedEventAttributes!.workflowExecution!.workflowId),
      ).to.have.members([0, 1, 2].map((k) => `${execution.execution_id}/square/chunk-${k}`));
    });

    it('canceling the execution cancels its chunks within seconds', async () => {
      const slow = await Receiver.start();
      slow.replyAlways({ status: 200, delayMs: 300 });
      try {
        const workflowId = await createWorkflow(
          service.api(),
          definition([
            {
              id: 'each',
              kind: 'map',
              items: 'input.numbers',
              concurrency: 2,
              steps: [httpStep('call', { method: 'POST', url: `${slow.url}/slow` })],
            },
          ] as never),
        );
        const id = await trigger(service.api(), workflowId, {
          numbers: Array.from({ length: 150 }, (_, i) => i),
        });
        await waitFor(async () => slow.requestsTo('/slow').length >= 4, { what: 'both chunks calling' });
        const canceledAt = Date.now();
        await service.api().post(`/v1/executions/${id}/cancel`).expect(202);
        expect((await waitForExecution(service.api(), id)).status).to.equal('canceled');
        const { client } = service.runtime.services.temporal;
        for (const chunk of [0, 1]) {
          const handle = client.workflow.getHandle(`${id}/each/chunk-${chunk}`);
          await waitFor(async () => (await handle.describe()).status.name !== 'RUNNING', {
            what: `chunk ${chunk} closed`,
            timeoutMs: 10_000,
          });
          expect((await handle.describe()).status.name).to.equal('CANCELLED');
        }
        expect(Date.now() - canceledAt).to.be.below(10_000);
        const calls = slow.requestsTo('/slow').length;
        await new Promise((resolve) => setTimeout(resolve, 1000));
        expect(slow.requestsTo('/slow').length, 'calls after the chunks closed').to.be.at.most(calls + 2);
      } finally {
        await slow.stop();
      }
    });

    it('fails at the first item past the tolerated failures, naming the item in the path', async () => {
      const execution = await run(
        [
          {
            id: 'check',
            kind: 'map',
            items: 'input.numbers',
            // One chunk at a time, so that which failure is the third does not depend on timing.
            concurrency: 1,
            tolerated_failures: 2,
            steps: [
              rulesStep('odd', [{ when: 'item % 50 = 7', action: 'fail', message: 'bad item' }], {
                default: 1,
              }),
            ],
          },
        ],
        { numbers: Array.from({ length: 250 }, (_, i) => i) },
      );
      expect(execution.status).to.equal('failed');
      // Items 7, 57, 107, 157, 207 fail; two are tolerated, the third fails the step.
      expect(execution.error).to.deep.include({ step: 'odd', code: 'rule_failed' });
      expect((execution.error as unknown as { path: string[] }).path).to.deep.equal(['check', '107', 'odd']);
    });
  });

  describe('approvals inside containers', () => {
    it('a map of more than 100 items whose steps hold an approval fails at its start with map_too_large', async () => {
      const execution = await run(
        [
          {
            id: 'each',
            kind: 'map',
            items: 'input.people',
            steps: [
              {
                id: 'inner',
                kind: 'switch',
                cases: [
                  { id: 'never', when: 'false', steps: [rulesStep('no', [{ when: 'true', output: 0 }])] },
                ],
                default: [{ id: 'ok', kind: 'approval' }],
              },
            ],
          },
        ],
        { people: Array.from({ length: 101 }, (_, i) => i) },
      );
      expect(execution.status).to.equal('failed');
      expect(execution.error).to.deep.include({ step: 'each', code: 'map_too_large' });
      expect(execution.error!.message).to.match(/approval.*at most 100/);
    });

    it('each run of the step is approved by its run key; without one, 409 while several wait', async () => {
      const workflowId = await createWorkflow(
        service.api(),
        definition([
          { id: 'each', kind: 'map', items: 'input.people', steps: [{ id: 'ok', kind: 'approval' }] },
        ] as never),
      );
      const id = await trigger(service.api(), workflowId, { people: ['ada', 'bo'] });
      await waitForExecution(service.api(), id, (e) => e.status === 'waiting');
      // Both items wait (the map runs them at once): the request must say which.
      await waitFor(
        async () => {
          const res = await service.api().post(`/v1/executions/${id}/steps/ok/approve`).send({});
          if (res.status !== 409)
            throw new Error(`expected 409 while both wait, got ${res.status}: ${JSON.stringify(res.body)}`);
          if (!/waits in 2 runs/.test(res.body.error.message)) throw new Error(res.body.error.message);
          return true;
        },
        { what: 'a 409 naming the two waiting runs' },
      );
      await service.api().post(`/v1/executions/${id}/steps/ok/approve`).send({ run: '1' }).expect(200);
      // One waits now: `run` may be left out.
      await service.api().post(`/v1/executions/${id}/steps/ok/approve`).send({}).expect(200);
      const done = await waitForExecution(service.api(), id);
      expect(done.status, JSON.stringify(done.error)).to.equal('success');
      expect((done.output as { decision: string }[]).map((d) => d.decision)).to.deep.equal([
        'approved',
        'approved',
      ]);
    });
  });
});
