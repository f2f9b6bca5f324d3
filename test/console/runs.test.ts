/**
 * Runs in the console: the list with its filters, paging and live refresh; a run's page with its timeline,
 * its error, and the actions: retry with a corrected input, cancel, approve and reject.
 */
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { createWorkflow, trigger, waitForExecution } from '../support/fixtures';
import { onboardingDefinition } from './fixtures';
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

async function statusShown(page: Page, status: string): Promise<void> {
  await page.locator('.page-head .badge', { hasText: status.replace('_', ' ') }).waitFor({ timeout: 30_000 });
}

describe('Console: runs @browser', function () {
  this.timeout(180_000);
  let harness: ConsoleHarness;
  let key: string;
  let api: ApiClient;
  let tab: ConsoleTab | undefined;

  before(async () => {
    harness = await startConsoleHarness({ env: { TEMPORAL_UI_URL: 'http://temporal-ui.test:8233' } });
    const workspace = await harness.service.newWorkspace(['write']);
    key = workspace.key;
    api = harness.service.api(key);
  });
  afterEach(async () => {
    await tab?.close();
    tab = undefined;
  });
  after(async () => harness?.close());

  it('lists runs, filters them by workflow and status (waiting too), pages by cursor and refreshes live', async () => {
    const wf = await createWorkflow(api, onboardingDefinition());
    const other = await createWorkflow(api, onboardingDefinition());
    const waiting = await trigger(api, wf, { customer: 'Ada', plan: 'enterprise' });
    const ids = await Promise.all(
      Array.from({ length: 21 }, (_, i) => trigger(api, wf, { customer: `C${i}`, plan: 'starter' })),
    );
    await trigger(api, other, { customer: 'Bob', plan: 'pro' });
    await waitForExecution(api, waiting, (e) => e.status === 'waiting');
    for (const id of ids) await waitForExecution(api, id);

    tab = await openSignedIn(harness, key);
    const { page } = tab;
    await page.getByRole('heading', { name: 'Runs' }).waitFor();
    await page.getByLabel('Workflow').selectOption(wf);
    await page.waitForURL(/workflow=/);
    const rows = page.getByTestId('run-row');
    // The first page of the unfiltered list may still show for a moment after the URL changed.
    await expectCount(page, 20, { without: other });
    await page.getByRole('button', { name: 'Load more' }).click();
    await expectCount(page, 22);
    expect(await page.getByRole('button', { name: 'Load more' }).count()).to.equal(0);

    await page.getByLabel('Status').selectOption('waiting');
    await expectCount(page, 1);
    expect(await rows.first().textContent()).to.include(waiting);

    // Live refresh: a run that starts waiting later shows up without a reload.
    const later = await trigger(api, wf, { customer: 'Grace', plan: 'enterprise' });
    await page.getByRole('link', { name: later }).waitFor({ timeout: 20_000 });
    await page.getByLabel('Live refresh').uncheck();
    await expectAccessible(page, 'the runs list');
    expectNoErrors(tab.watch);
  });

  it('shows a failed run: the failing step and code, the timeline, input and output; retry with a corrected input', async () => {
    const wf = await createWorkflow(api, onboardingDefinition());
    const failed = await trigger(api, wf, { customer: 'Eve', plan: 'banned' });
    await waitForExecution(api, failed);

    tab = await openSignedIn(harness, key, { path: '/?status=failed' });
    const { page } = tab;
    await page.getByRole('link', { name: failed }).click();
    await page.waitForURL(`**/runs/${failed}`);
    await statusShown(page, 'failed');
    const error = page.getByTestId('run-error');
    expect(await error.textContent())
      .to.include('route')
      .and.include('rule_failed')
      .and.include('plan not allowed');
    const temporal = page.getByRole('link', { name: 'Open in Temporal UI' });
    expect(await temporal.getAttribute('href')).to.equal(
      `http://temporal-ui.test:8233/namespaces/default/workflows/${failed}`,
    );
    // The trigger and the failed step on the time axis; the failed step opens with its input and output.
    expect(await page.getByTestId('step').count()).to.equal(2);
    expect(await page.locator('[data-step="route"] .bar.status-failed').count()).to.equal(1);
    await page.getByRole('group', { name: 'Input of step route' }).waitFor();
    await page.getByRole('button', { name: /^Trigger|^trigger/ }).click();
    await page.getByRole('group', { name: 'Input of step trigger' }).getByText('"banned"').waitFor();
    await expectAccessible(page, 'a failed run');

    await page.getByRole('button', { name: 'Retry from the failed step…' }).click();
    const editor = page.getByLabel(/Run input \(JSON\)/);
    // Checked against input_schema before anything is sent.
    await editor.fill('{"customer": "Eve"}');
    await page.getByRole('button', { name: 'Retry', exact: true }).click();
    const problems = page.locator('#retry-problems');
    await problems.waitFor();
    expect(await problems.textContent()).to.include('plan');
    await editor.fill('{"customer": "Eve", "plan": "vip"}');
    await page.getByRole('button', { name: 'Retry', exact: true }).click();
    await page.locator('#retry-problems', { hasText: '/plan' }).waitFor();
    expect((await api.get(`/v1/executions/${failed}`)).body.status).to.equal('failed');

    await editor.fill('{"customer": "Eve", "plan": "starter"}');
    await page.getByRole('button', { name: 'Retry', exact: true }).click();
    await page.getByText('Retrying from step route with the corrected input.').waitFor();
    await statusShown(page, 'success');
    expect(await page.locator('[data-step="welcome"] .badge').textContent()).to.equal('success');
    const done = await waitForExecution(api, failed);
    expect(done.status).to.equal('success');
    // The corrected input reached the failed step and those after it (the trigger keeps what was sent).
    expect(done.steps.find((s) => s.id === 'route')!.output).to.deep.equal({ tier: 'standard' });
    expectNoErrors(tab.watch);
  });

  it('approves a waiting step with a comment', async () => {
    const wf = await createWorkflow(api, onboardingDefinition());
    const id = await trigger(api, wf, { customer: 'Ada', plan: 'enterprise' });
    await waitForExecution(api, id, (e) => e.status === 'waiting');

    tab = await openSignedIn(harness, key, { path: `/runs/${id}` });
    const { page } = tab;
    await statusShown(page, 'waiting');
    await page.getByText('Approve Ada?').waitFor();
    await expectAccessible(page, 'a waiting run');
    await page.getByLabel("Comment (kept in the step's output)").fill('Contract signed');
    await page.getByRole('button', { name: 'Approve' }).click();
    await statusShown(page, 'success');
    const done = await waitForExecution(api, id);
    expect(done.steps.find((s) => s.id === 'review')!.output).to.include({
      decision: 'approved',
      comment: 'Contract signed',
    });
    expectNoErrors(tab.watch);
  });

  it('rejects a waiting step: the run fails with approval_rejected', async () => {
    const wf = await createWorkflow(api, onboardingDefinition());
    const id = await trigger(api, wf, { customer: 'Mallory', plan: 'enterprise' });
    await waitForExecution(api, id, (e) => e.status === 'waiting');

    tab = await openSignedIn(harness, key, { path: `/runs/${id}` });
    const { page } = tab;
    await page.getByRole('button', { name: 'Reject' }).click();
    await statusShown(page, 'failed');
    expect(await page.getByTestId('run-error').textContent()).to.include('approval_rejected');
    expectNoErrors(tab.watch);
  });

  it('cancels a waiting run after confirmation', async () => {
    const wf = await createWorkflow(api, onboardingDefinition());
    const id = await trigger(api, wf, { customer: 'Oscar', plan: 'enterprise' });
    await waitForExecution(api, id, (e) => e.status === 'waiting');

    tab = await openSignedIn(harness, key, { path: `/runs/${id}` });
    const { page } = tab;
    await page.getByRole('button', { name: 'Cancel run' }).click();
    const dialog = page.getByRole('dialog', { name: 'Cancel this run?' });
    await dialog.waitFor();
    await expectAccessible(page, 'the cancel confirmation');
    await dialog.getByRole('button', { name: 'Cancel run' }).click();
    await statusShown(page, 'canceled');
    expect((await waitForExecution(api, id)).status).to.equal('canceled');
    expectNoErrors(tab.watch);
  });

  it('shows a debounced run as queued, then how many triggers it took in', async () => {
    const wf = await createWorkflow(api, {
      id: 'sensor',
      debounce: { period: '2s' },
      steps: [{ id: 'note', kind: 'rules', rules: [{ when: 'true', output: '{{ input.n }}' }] }],
    });
    const id = await trigger(api, wf, { n: 1 });
    for (const n of [2, 3]) expect(await trigger(api, wf, { n })).to.equal(id);

    tab = await openSignedIn(harness, key, { path: `/runs/${id}` });
    const { page } = tab;
    await statusShown(page, 'queued');
    await statusShown(page, 'success');
    await page.getByTestId('run-coalesced').waitFor();
    expect(await page.getByTestId('run-coalesced').textContent()).to.equal(
      "3 triggers in one run, with the last one's input",
    );
    await expectAccessible(page, 'a debounced run');
    expectNoErrors(tab.watch);
  });

  it("shows an unknown run's error with its request_id", async () => {
    tab = await openSignedIn(harness, key, { path: '/runs/ex_doesnotexist' });
    const alert = tab.page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).to.include('execution_not_found');
    expect(await tab.page.getByTestId('request-id').textContent()).to.match(/^req_/);
    expectNoErrors(tab.watch, [/status of 404/]);
  });
});

/** Waits until the list shows `count` runs (polling from the test: the page's CSP forbids eval). */
async function expectCount(page: Page, count: number, options: { without?: string } = {}): Promise<void> {
  const rows = page.getByTestId('run-row');
  let seen = -1;
  let unwanted = 0;
  await waitFor(
    async () => {
      seen = await rows.count();
      unwanted = options.without ? await rows.filter({ hasText: options.without }).count() : 0;
      return seen === count && unwanted === 0;
    },
    {
      what: () =>
        `${count} runs listed${options.without ? `, none of ${options.without}` : ''} (last seen ${seen}, ${unwanted} unwanted)`,
    },
  );
}
