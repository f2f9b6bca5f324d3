/**
 * Steps that hold steps in the console (docs/console.md#composition): a definition drawn as a diagram, and
 * a run's containers with their runs: branches side by side, a map's items counted by status and paged,
 * and a child execution linked to the run that started it.
 */
import { expect } from 'chai';
import type { Locator } from 'playwright-core';
import {
  createWorkflow,
  rulesStep,
  trigger,
  uniqueId,
  waitForExecution,
  type ExecutionBody,
} from '../support/fixtures';
import type { ApiClient } from '../support/stack';
import { waitFor } from '../support/wait';
import {
  expectAccessible,
  expectNoErrors,
  openSignedIn,
  startConsoleHarness,
  type ConsoleHarness,
  type ConsoleTab,
} from './harness';

/** The names of the step boxes directly in a list of the diagram, in order. */
async function boxesIn(list: Locator): Promise<string[]> {
  return list
    .locator(':scope > li > [role="group"]')
    .evaluateAll((boxes) => boxes.map((box) => box.getAttribute('aria-label') ?? ''));
}

describe('Console: composition @browser', function () {
  this.timeout(180_000);
  let harness: ConsoleHarness;
  let key: string;
  let api: ApiClient;
  let tab: ConsoleTab | undefined;

  before(async () => {
    harness = await startConsoleHarness();
    const workspace = await harness.service.newWorkspace(['write']);
    key = workspace.key;
    api = harness.service.api(key);
  });
  afterEach(async () => {
    await tab?.close();
    tab = undefined;
  });
  after(async () => harness?.close());

  /** A run of a new workflow of `steps`, once it has ended. */
  async function finishedRun(prefix: string, steps: unknown[], input: unknown = {}): Promise<ExecutionBody> {
    const id = await createWorkflow(api, { id: uniqueId(prefix), steps });
    return waitForExecution(api, await trigger(api, id, input));
  }

  /** The page of a run, signed in. */
  async function openRun(executionId: string): Promise<ConsoleTab> {
    tab = await openSignedIn(harness, key, { path: `/runs/${executionId}` });
    return tab;
  }

  /** A run that starts billing for Ada and waits for it, once it has ended. */
  async function callerRun(): Promise<ExecutionBody> {
    const billing = await billingWorkflow();
    return finishedRun('caller', [
      { id: 'call', kind: 'workflow', workflow: billing, input: { customer: 'Ada' } },
    ]);
  }

  /** A workflow whose one step `bill` answers "<customer> billed". */
  async function billingWorkflow(): Promise<string> {
    return createWorkflow(api, {
      id: uniqueId('billing'),
      name: 'Billing',
      steps: [rulesStep('bill', [], { default: '{{ input.customer & " billed" }}' })],
    });
  }

  it('draws a definition: branches and cases side by side, map and loop bodies, the called workflow as a link', async () => {
    const billing = await billingWorkflow();
    const id = await createWorkflow(api, {
      id: uniqueId('composed'),
      steps: [
        {
          id: 'enrich',
          name: 'Enrich the customer',
          kind: 'parallel',
          branches: [
            {
              id: 'crm',
              steps: [
                {
                  id: 'crm_get',
                  kind: 'connector',
                  connector: 'http',
                  request: { method: 'GET', url: 'https://crm.example/c/{{ input.customer }}' },
                },
              ],
            },
            { id: 'score', on_error: 'continue', steps: [rulesStep('score_it', [], { default: 42 })] },
          ],
        },
        {
          id: 'by_plan',
          kind: 'switch',
          cases: [
            {
              id: 'gold',
              when: "input.plan = 'enterprise'",
              steps: [rulesStep('gold_it', [], { default: 1 })],
            },
          ],
          default: [rulesStep('other', [], { default: 2 })],
        },
        {
          id: 'notify',
          kind: 'map',
          items: 'input.contacts',
          as: 'contact',
          concurrency: 3,
          steps: [rulesStep('send', [], { default: '{{ contact }}' })],
        },
        {
          id: 'poll',
          kind: 'loop',
          until: 'steps.check.output >= 2',
          max_iterations: 4,
          steps: [rulesStep('check', [], { default: '{{ iteration + 1 }}' })],
        },
        { id: 'bill', kind: 'workflow', workflow: billing, version: 1, if: "input.plan != 'free'" },
      ],
    });

    tab = await openSignedIn(harness, key, { path: `/workflows/${id}` });
    const { page } = tab;
    const diagram = page.getByTestId('diagram');
    const top = diagram.getByRole('list', { name: 'Steps of version 1' });
    await top.waitFor();
    expect(await boxesIn(top)).to.deep.equal([
      'Step enrich, parallel',
      'Step by_plan, switch',
      'Step notify, map',
      'Step poll, loop',
      'Step bill, workflow',
    ]);
    expect(
      await diagram
        .getByRole('group', { name: 'Step enrich, parallel' })
        .locator(':scope > .node-head')
        .textContent(),
    ).to.include('Enrich the customer');

    const branches = diagram.getByRole('list', { name: 'Branches of enrich' });
    expect(
      await branches
        .locator(':scope > li')
        .evaluateAll((lanes) => lanes.map((l) => l.getAttribute('aria-label'))),
    ).to.deep.equal(['Branch crm', 'Branch score']);
    expect(await boxesIn(branches.getByRole('list', { name: 'Steps of branch crm' }))).to.deep.equal([
      'Step crm_get, connector',
    ]);
    expect(await branches.getByRole('listitem', { name: 'Branch score' }).textContent()).to.include(
      'a failure continues',
    );

    const cases = diagram.getByRole('list', { name: 'Cases of by_plan' });
    expect(await cases.getByRole('listitem', { name: 'Case gold' }).textContent()).to.include(
      "when input.plan = 'enterprise'",
    );
    expect(await boxesIn(cases.getByRole('list', { name: 'Default steps of by_plan' }))).to.deep.equal([
      'Step other, rules',
    ]);

    const map = diagram.getByRole('group', { name: 'Step notify, map' });
    expect(await map.locator(':scope > .body-box > .lane-head').textContent()).to.equal(
      'for each contact of input.contacts, at most 3 at once',
    );
    expect(await boxesIn(map.getByRole('list', { name: 'Steps repeated by notify' }))).to.deep.equal([
      'Step send, rules',
    ]);
    const loop = diagram.getByRole('group', { name: 'Step poll, loop' });
    expect(await loop.locator(':scope > .body-box > .lane-head').textContent()).to.equal(
      'repeat until steps.check.output >= 2, at most 4 times',
    );

    const call = diagram.getByRole('group', { name: 'Step bill, workflow' });
    expect(await call.textContent()).to.include("if input.plan != 'free'");
    await expectAccessible(page, 'a definition drawn as a diagram');
    await call.getByRole('link', { name: billing }).click();
    await page.waitForURL(`**/workflows/${billing}?version=1`);
    await page.getByRole('heading', { name: 'Billing' }).waitFor();
    expectNoErrors(tab.watch);
  });

  it('shows where a step failed inside a container: its path as a breadcrumb of containers and runs', async () => {
    const execution = await finishedRun('poll', [
      {
        id: 'poll',
        kind: 'loop',
        until: 'false',
        max_iterations: 5,
        steps: [
          rulesStep('check', [{ when: 'iteration = 2', action: 'fail', message: 'third' }], {
            default: 'ok',
          }),
        ],
      },
    ]);
    expect(execution.status).to.equal('failed');

    const { page, watch } = await openRun(execution.execution_id);
    const path = page.getByRole('navigation', { name: 'Where the step failed' });
    await path.waitFor();
    expect(await path.getByRole('listitem').allTextContents()).to.deep.equal([
      'poll',
      'iteration 2',
      'check',
    ]);
    expect(await page.getByTestId('run-error').textContent()).to.include('rule_failed');
    await expectAccessible(page, 'a run failed inside a container');
    expectNoErrors(watch);
  });

  it('shows a parallel run: both branches side by side, each with its steps', async () => {
    const execution = await finishedRun('fork', [
      {
        id: 'fork',
        kind: 'parallel',
        branches: [
          { id: 'left', steps: [rulesStep('l1', [], { default: 1 }), rulesStep('l2', [], { default: 2 })] },
          { id: 'right', steps: [rulesStep('r1', [], { default: 3 })] },
        ],
      },
    ]);
    expect(execution.status).to.equal('success');

    const { page, watch } = await openRun(execution.execution_id);
    const branches = page.getByRole('list', { name: 'Branches of fork' });
    await branches.waitFor();
    const stepsOf = (branch: string) =>
      branches
        .getByRole('list', { name: `Steps of branch ${branch}` })
        .locator(':scope > [data-testid="step"]')
        .evaluateAll((rows) =>
          rows.map((row) => `${row.getAttribute('data-step')} ${row.querySelector('.badge')?.textContent}`),
        );
    expect(await stepsOf('left')).to.deep.equal(['l1 success', 'l2 success']);
    expect(await stepsOf('right')).to.deep.equal(['r1 success']);
    // Nested steps open like top-level ones, with their output.
    await branches.locator('[data-path="fork/left/l2"] .step-name').click();
    await page.getByRole('group', { name: 'Output of step fork/left/l2' }).getByText('2').waitFor();
    await page.getByRole('group', { name: 'Output of the run' }).waitFor();
    await expectAccessible(page, 'a parallel run');
    expectNoErrors(watch);
  });

  it('shows a map run: items counted by status, filtered by status, paged with "Load more"', async () => {
    const execution = await finishedRun(
      'each',
      [
        {
          id: 'each',
          kind: 'map',
          items: 'input.numbers',
          tolerated_failures: 5,
          steps: [
            rulesStep('check', [{ when: 'item % 5 = 0', action: 'fail', message: 'a multiple of 5' }], {
              default: '{{ item }}',
            }),
          ],
        },
      ],
      { numbers: Array.from({ length: 25 }, (_, i) => i) },
    );
    expect(execution.status).to.equal('success');

    const { page, watch } = await openRun(execution.execution_id);
    const counts = page.getByRole('group', { name: 'Items by status' });
    await counts.getByRole('button', { name: 'failed 5' }).waitFor();
    expect(await counts.getByRole('button', { name: 'All 25' }).getAttribute('aria-pressed')).to.equal(
      'true',
    );
    await counts.getByRole('button', { name: 'success 20' }).waitFor();

    const items = page.getByRole('list', { name: 'Items of each' });
    const keys = () =>
      items.locator(':scope > li').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-run')));
    expect(await keys()).to.have.length(20);
    await page.getByRole('button', { name: 'Load more items' }).click();
    await waitForKeys(keys, 25);
    expect(await page.getByRole('button', { name: 'Load more items' }).count()).to.equal(0);

    await counts.getByRole('button', { name: 'failed 5' }).click();
    await waitForKeys(keys, 5);
    expect(await keys()).to.deep.equal(['0', '5', '10', '15', '20']);
    await items.getByRole('button', { name: 'item 10' }).click();
    const failed = items.locator('[data-path="each/10/check"]');
    expect(await failed.locator('.badge').first().textContent()).to.equal('failed');
    await expectAccessible(page, 'a map run filtered by status');
    expectNoErrors(watch);
  });

  it('links a workflow step to the run it started', async () => {
    const parent = await callerRun();
    const child = (parent.output as { execution_id: string }).execution_id;

    const { page, watch } = await openRun(parent.execution_id);
    await page.locator('[data-step="call"]').getByRole('link', { name: child }).click();
    await page.waitForURL(`**/runs/${child}`);
    await page.getByTestId('run-parent').waitFor();
    expectNoErrors(watch);
  });

  it('shows a child execution as started by its parent, linking back to it', async () => {
    const parent = await callerRun();
    expect(parent.status, JSON.stringify(parent.error)).to.equal('success');
    const child = (parent.output as { execution_id: string }).execution_id;

    const { page, watch } = await openRun(child);
    const startedBy = page.getByTestId('run-parent');
    await startedBy.waitFor();
    expect(await startedBy.textContent()).to.equal(`run ${parent.execution_id} (step call)`);
    expect(await page.getByRole('group', { name: 'Output of the run' }).textContent()).to.include(
      '"Ada billed"',
    );
    await expectAccessible(page, 'a child execution');
    await startedBy.getByRole('link', { name: parent.execution_id }).click();
    await page.waitForURL(`**/runs/${parent.execution_id}`);
    await page.getByRole('heading', { name: `Run ${parent.execution_id}` }).waitFor();
    expectNoErrors(watch);
  });
});

/** Waits until the list shows `count` runs (polling from the test: the page's CSP forbids eval). */
async function waitForKeys(keys: () => Promise<(string | null)[]>, count: number): Promise<void> {
  let seen = -1;
  await waitFor(
    async () => {
      seen = (await keys()).length;
      return seen === count;
    },
    { what: () => `${count} runs listed (last seen ${seen})` },
  );
}
