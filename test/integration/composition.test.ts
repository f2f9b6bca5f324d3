/** docs/definitions.md#composition: steps that hold steps (parallel, map, switch, loop) run as the contract says. */
import { expect } from 'chai';
import {
  createWorkflow,
  definition,
  httpStep,
  rulesStep,
  trigger,
  waitForExecution,
  type ExecutionBody,
} from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { startTestService, type TestService } from '../support/stack';

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
});
