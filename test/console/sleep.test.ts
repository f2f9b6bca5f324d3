/**
 * Sleep steps in the console (docs/console.md): a sleeping step shows as waiting with until when, inside a
 * container too, and the diagram draws a sleep with how long it sleeps.
 */
import { expect } from 'chai';
import { createWorkflow, stepOf, trigger, uniqueId, waitForExecution } from '../support/fixtures';
import type { ApiClient } from '../support/stack';
import {
  expectAccessible,
  expectNoErrors,
  openSignedIn,
  startConsoleHarness,
  type ConsoleHarness,
  type ConsoleTab,
} from './harness';

describe('Console: sleep steps @browser', function () {
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

  it('shows a sleeping step as waiting, with until when it sleeps', async () => {
    const id = await createWorkflow(api, {
      id: uniqueId('nap'),
      steps: [{ id: 'nap', name: 'Cool down', kind: 'sleep', duration: '2h' }],
    });
    const runId = await trigger(api, id);
    const waiting = await waitForExecution(api, runId, (e) => e.status === 'waiting');
    const until = stepOf(waiting, 'nap').waiting_for!.until;

    tab = await openSignedIn(harness, key, { path: `/runs/${runId}` });
    const { page } = tab;
    const row = page.locator('[data-testid="step"][data-step="nap"]');
    await row.locator('.badge', { hasText: 'waiting' }).waitFor();
    const line = row.getByTestId('waiting-for');
    expect(await line.textContent()).to.match(/^Sleeping until /);
    expect(await line.locator('time').getAttribute('datetime')).to.equal(until);
    await expectAccessible(page, 'a sleeping run');

    await api.post(`/v1/executions/${runId}/cancel`).expect(202);
    await row.locator('.badge', { hasText: 'canceled' }).waitFor({ timeout: 30_000 });
    expect(await row.getByTestId('waiting-for').count()).to.equal(0);
    expectNoErrors(tab.watch);
  });

  it('draws a sleep in the diagram with its duration or its until', async () => {
    const id = await createWorkflow(api, {
      id: uniqueId('reminder'),
      steps: [
        { id: 'wait_a_day', kind: 'sleep', duration: '1d' },
        { id: 'wait_until', kind: 'sleep', until: '{{ input.send_at }}' },
      ],
    });
    tab = await openSignedIn(harness, key, { path: `/workflows/${id}` });
    const { page } = tab;
    const diagram = page.getByTestId('diagram');
    const day = diagram.getByRole('group', { name: 'Step wait_a_day, sleep' });
    await day.waitFor();
    expect(await day.locator('.node-line').textContent()).to.equal('sleeps 1d');
    expect(
      await diagram
        .getByRole('group', { name: 'Step wait_until, sleep' })
        .locator('.node-line')
        .textContent(),
    ).to.equal('sleeps until {{ input.send_at }}');
    await expectAccessible(page, 'a definition with sleeps');
    expectNoErrors(tab.watch);
  });
});
