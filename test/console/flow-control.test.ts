/**
 * Flow control in the console (docs/flow-control.md#watching-the-queue): a workflow page's Queue panel
 * (queued and open, the busiest keys, a link to the queued runs), read again while live, and a queued run's
 * page with its queued time. Runs hold their place while they wait for an approval.
 */
import { expect } from 'chai';
import { createWorkflow, trigger, uniqueId, waitForExecution } from '../support/fixtures';
import type { ApiClient } from '../support/stack';
import {
  expectAccessible,
  expectNoErrors,
  openSignedIn,
  startConsoleHarness,
  type ConsoleHarness,
  type ConsoleTab,
} from './harness';

/** One run per customer at a time: each waits for an approval, holding its place meanwhile. */
function reviewedDefinition(id: string): Record<string, unknown> {
  return {
    id,
    name: 'Reviewed sync',
    concurrency: { limit: 1, key: 'input.customer' },
    steps: [{ id: 'review', kind: 'approval', message: 'Sync {{ input.customer }}?', timeout: '1h' }],
  };
}

describe('Console: flow control @browser', function () {
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

  it("shows a workflow's queue with its busiest key, live, and links to its queued runs", async () => {
    const id = await createWorkflow(api, reviewedDefinition(uniqueId('reviewed')));
    const first = await trigger(api, id, { customer: 'acme' });
    await waitForExecution(api, first, (e) => e.status === 'waiting', 30_000);

    tab = await openSignedIn(harness, key, { path: `/workflows/${id}` });
    const { page } = tab;
    const panel = page.getByTestId('queue-panel');
    await panel.getByRole('heading', { name: 'Queue' }).waitFor();
    await panel.getByTestId('queue-open').getByText('1', { exact: true }).waitFor();
    expect(await panel.getByTestId('queue-queued').textContent()).to.equal('0');

    // Live: a second run of the key queues, and the panel shows it without a reload.
    const second = await trigger(api, id, { customer: 'acme' });
    await waitForExecution(api, second, (e) => e.status === 'queued', 30_000);
    await panel.getByTestId('queue-queued').getByText('1', { exact: true }).waitFor();
    const row = panel.getByTestId('queue-key');
    expect(await row.count()).to.equal(1);
    expect((await row.locator('td').allTextContents()).map((text) => text.trim())).to.deep.equal([
      'acme',
      '1',
      '1',
    ]);
    await expectAccessible(page, 'a workflow with its queue');

    await panel.getByRole('link', { name: 'Queued runs of this workflow' }).click();
    await page.waitForURL(/status=queued/);
    expect(new URL(page.url()).searchParams.get('workflow')).to.equal(id);
    await page.getByTestId('run-row').filter({ hasText: second }).waitFor();
    expect(await page.getByTestId('run-row').count()).to.equal(1);

    // The queued run's page: how long it has been queued, and its row on the time axis.
    await page.getByRole('link', { name: second }).click();
    await page
      .getByTestId('run-queued')
      .getByText(/so far/)
      .waitFor();
    await page.getByTestId('queued-row').waitFor();

    // Its turn comes when the first run's approval ends: the page shows when it was admitted.
    await api.post(`/v1/executions/${first}/steps/review/approve`, {}).expect(200);
    await page
      .getByTestId('run-queued')
      .getByText(/until admitted/)
      .waitFor({ timeout: 30_000 });
    const admitted = await waitForExecution(api, second, (e) => e.status === 'waiting', 30_000);
    expect(admitted.admitted_at).to.be.a('string');
    await expectAccessible(page, 'a run that was queued');
    expectNoErrors(tab.watch);
  });

  it('shows no queue panel for a workflow without flow control', async () => {
    const id = await createWorkflow(api, {
      id: uniqueId('plain'),
      steps: [{ id: 'a', kind: 'rules', rules: [], default: { ok: true } }],
    });
    tab = await openSignedIn(harness, key, { path: `/workflows/${id}` });
    const { page } = tab;
    await page.getByRole('heading', { name: 'Steps' }).waitFor();
    // The panel would appear once the queue is read: give that read its time.
    await page.waitForLoadState('networkidle');
    expect(await page.getByTestId('queue-panel').count()).to.equal(0);
    expectNoErrors(tab.watch);
  });
});
