/**
 * Bulk operations in the console (docs/console.md, docs/operations.md#bulk-operations): runs chosen by the
 * runs list's filter or by their checkboxes, the dry run's count before anything changes, the operation's
 * progress to its end, stopping one, the recent operations, a read key with no bulk action, and the
 * service's refusals shown.
 */
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { createWorkflow, trigger, waitForExecution } from '../support/fixtures';
import type { ApiClient } from '../support/stack';
import { waitFor } from '../support/wait';
import { onboardingDefinition } from './fixtures';
import {
  expectAccessible,
  expectNoErrors,
  openSignedIn,
  startConsoleHarness,
  type ConsoleHarness,
  type ConsoleTab,
} from './harness';

/** Waits until the runs list shows `count` rows (polling from the test: the page's CSP forbids eval). */
async function expectRows(page: Page, count: number): Promise<void> {
  const rows = page.getByTestId('run-row');
  let seen = -1;
  await waitFor(
    async () => {
      seen = await rows.count();
      return seen === count;
    },
    { timeoutMs: 30_000, what: () => `${count} runs listed (last seen ${seen})` },
  );
}

async function startMany(api: ApiClient, workflow: string, plan: string, count: number): Promise<string[]> {
  return Promise.all(
    Array.from({ length: count }, (_, i) => trigger(api, workflow, { customer: `C${i}`, plan })),
  );
}

describe('Console: bulk operations @browser', function () {
  this.timeout(180_000);
  let harness: ConsoleHarness;
  let workspaceId: string;
  let key: string;
  let api: ApiClient;
  let tab: ConsoleTab | undefined;

  before(async () => {
    // One action a second: a batch of ten takes ten seconds, long enough to stop an operation midway.
    harness = await startConsoleHarness({ env: { BULK_ACTIONS_PER_SECOND: '1' } });
    ({ workspaceId, key } = await harness.service.newWorkspace(['write']));
    api = harness.service.api(key);
  });
  afterEach(async () => {
    await tab?.close();
    tab = undefined;
  });
  after(async () => harness?.close());

  it('retries the failed runs a filter matches: the dry-run count first, then the progress to the end', async () => {
    const wf = await createWorkflow(api, onboardingDefinition());
    const failed = await startMany(api, wf, 'banned', 3);
    const succeeded = await trigger(api, wf, { customer: 'Ada', plan: 'starter' });
    for (const id of [...failed, succeeded]) await waitForExecution(api, id);

    tab = await openSignedIn(harness, key);
    const { page } = tab;
    await page.getByLabel('Workflow').selectOption(wf);
    await page.getByLabel('Status').selectOption('failed');
    await page.getByLabel('Error code').fill('rule_failed');
    await page.getByLabel('Error code').press('Enter');
    await page.waitForURL(/error_code=rule_failed/);
    await expectRows(page, 3);
    await page.getByText('No run selected: an action takes every run matching the filter.').waitFor();

    await page.getByRole('button', { name: 'Retry runs…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Retry runs' });
    expect(await dialog.getByTestId('bulk-matched').textContent()).to.equal('3 runs');
    expect(await dialog.getByRole('list', { name: 'Sample of the matching runs' }).textContent())
      .to.include(failed[0])
      .and.include(failed[1])
      .and.include(failed[2]);
    await expectAccessible(page, 'the bulk retry dialog');
    // The dry run changed nothing.
    expect((await api.get(`/v1/executions/${failed[0]}`)).body.status).to.equal('failed');

    await dialog.getByLabel(/Corrected input/).fill('{"customer": "Fixed", "plan": "starter"}');
    await dialog.getByRole('button', { name: 'Retry 3 runs' }).click();
    const progress = page.getByTestId('bulk-progress');
    await progress.getByTestId('bulk-status').getByText('completed').waitFor({ timeout: 30_000 });
    expect(await progress.getByTestId('bulk-counts').textContent()).to.equal(
      '3 succeeded, 0 failed, 0 skipped',
    );
    await progress.getByText('3 of 3 runs done').waitFor();
    await expectAccessible(page, 'a completed bulk operation');
    for (const id of failed) {
      const done = await waitForExecution(api, id, (e) => e.status === 'success');
      expect(done.steps.find((s) => s.id === 'route')!.output, `route of ${id}`).to.deep.equal({
        tier: 'standard',
      });
    }
    expectNoErrors(tab.watch);
  });

  it('cancels the selected runs only, and lists the operation among the recent ones', async () => {
    const wf = await createWorkflow(api, onboardingDefinition());
    const waiting = await startMany(api, wf, 'enterprise', 3);
    for (const id of waiting) await waitForExecution(api, id, (e) => e.status === 'waiting');
    const [first, second, third] = waiting as [string, string, string];

    tab = await openSignedIn(harness, key, { path: `/?workflow=${wf}&status=waiting` });
    const { page } = tab;
    await expectRows(page, 3);
    await page.getByLabel(`Select ${first}`).check();
    await page.getByLabel(`Select ${second}`).check();
    await page.getByText('2 runs selected.').waitFor();

    await page.getByRole('button', { name: 'Cancel runs…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Cancel runs' });
    expect(await dialog.getByTestId('bulk-matched').textContent()).to.equal('2 runs');
    await dialog.getByRole('button', { name: 'Cancel 2 runs' }).click();
    const progress = page.getByTestId('bulk-progress');
    await progress.getByTestId('bulk-status').getByText('completed').waitFor({ timeout: 30_000 });
    expect(await progress.getByTestId('bulk-counts').textContent()).to.equal(
      '2 succeeded, 0 failed, 0 skipped',
    );
    expect((await waitForExecution(api, first)).status).to.equal('canceled');
    expect((await waitForExecution(api, second)).status).to.equal('canceled');
    expect((await api.get(`/v1/executions/${third}`)).body.status).to.equal('waiting');

    const operationId = (await progress.getByRole('heading').getByRole('link').textContent())!;
    await page.getByRole('link', { name: 'Recent bulk operations' }).click();
    await page.getByRole('heading', { name: 'Bulk operations' }).waitFor();
    const row = page.getByTestId('bulk-operation-row').filter({ hasText: operationId });
    expect(await row.textContent())
      .to.include('cancel')
      .and.include('completed')
      .and.include('2 of 2');
    await expectAccessible(page, 'the recent bulk operations');
    await row.getByRole('link', { name: operationId }).click();
    await page.waitForURL(new RegExp(`/bulk-operations/${operationId}$`));
    await page.getByTestId('bulk-counts').getByText('2 succeeded').waitFor();
    expectNoErrors(tab.watch);
  });

  it('stops a running operation: what it did stays done, the rest is left alone', async () => {
    const wf = await createWorkflow(api, onboardingDefinition());
    const waiting = await startMany(api, wf, 'enterprise', 15);
    for (const id of waiting) await waitForExecution(api, id, (e) => e.status === 'waiting');

    tab = await openSignedIn(harness, key, { path: `/?workflow=${wf}&status=waiting` });
    const { page } = tab;
    await expectRows(page, 15);
    await page.getByRole('button', { name: 'Cancel runs…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Cancel runs' });
    await dialog.getByRole('button', { name: 'Cancel 15 runs' }).click();
    const progress = page.getByTestId('bulk-progress');
    // At one action a second, the first batch of ten leaves the operation running for ten seconds more.
    await progress.getByRole('button', { name: 'Cancel operation' }).click();
    await progress.getByTestId('bulk-status').getByText('canceled').waitFor();
    expect(await progress.getByRole('button', { name: 'Cancel operation' }).count()).to.equal(0);

    const operationId = (await progress.getByRole('heading').getByRole('link').textContent())!;
    const op = (await api.get(`/v1/bulk-operations/${operationId}`).expect(200)).body as {
      status: string;
      matched: number;
      succeeded: number;
      failed: number;
      skipped: number;
    };
    expect(op.status).to.equal('canceled');
    expect(op.matched).to.equal(15);
    expect(op.succeeded + op.failed + op.skipped, 'runs acted on before the stop').to.be.below(15);
    const statuses = await Promise.all(
      waiting.map(async (id) => (await api.get(`/v1/executions/${id}`)).body.status as string),
    );
    expect(statuses, 'runs left alone').to.include('waiting');
    expectNoErrors(tab.watch);
  });

  it('shows a read key the runs and the operations with no bulk action', async () => {
    const wf = await createWorkflow(api, onboardingDefinition());
    const [failed] = await startMany(api, wf, 'banned', 1);
    await waitForExecution(api, failed!);
    const created = await api
      .post('/v1/bulk-operations', { action: 'retry', filter: { execution_ids: [failed] } })
      .expect(202);
    const operationId = created.body.id as string;
    const reader = await harness.service.newKey(workspaceId, ['read']);

    tab = await openSignedIn(harness, reader, { path: `/?workflow=${wf}` });
    const { page } = tab;
    await expectRows(page, 1);
    expect(await page.getByRole('heading', { name: 'Bulk actions' }).count(), 'bulk actions').to.equal(0);
    expect(await page.getByRole('button', { name: /runs…$/ }).count(), 'bulk buttons').to.equal(0);
    expect(await page.getByRole('checkbox', { name: /^Select/ }).count(), 'row checkboxes').to.equal(0);

    await page.getByRole('link', { name: 'Recent bulk operations' }).click();
    await page.getByTestId('bulk-operation-row').filter({ hasText: operationId }).waitFor();
    await page.goto(`${harness.service.url}/bulk-operations/${operationId}`);
    await page.getByTestId('bulk-progress').waitFor();
    expect(await page.getByRole('button', { name: 'Cancel operation' }).count()).to.equal(0);
    expectNoErrors(tab.watch);
  });

  it("shows the service's refusal of a filter with no field, and starts nothing", async () => {
    tab = await openSignedIn(harness, key);
    const { page } = tab;
    await page.getByRole('heading', { name: 'Bulk actions' }).waitFor();
    await page.getByRole('button', { name: 'Retry runs…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Retry runs' });
    const alert = dialog.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent())
      .to.include('invalid_request')
      .and.include('needs at least one of');
    expect(await dialog.getByRole('button', { name: 'Retry', exact: true }).isDisabled()).to.equal(true);
    await expectAccessible(page, 'a refused bulk operation');
    await dialog.getByRole('button', { name: 'Close' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expectNoErrors(tab.watch, [/status of 400/]);
  });

  it('checks that a corrected input is a JSON object before starting a retry', async () => {
    const wf = await createWorkflow(api, onboardingDefinition());
    const [failed] = await startMany(api, wf, 'banned', 1);
    await waitForExecution(api, failed!);
    const operations = async () =>
      (await api.get('/v1/bulk-operations?limit=100').expect(200)).body.data.length;
    const before = await operations();

    tab = await openSignedIn(harness, key, { path: `/?workflow=${wf}&status=failed` });
    const { page } = tab;
    await expectRows(page, 1);
    await page.getByRole('button', { name: 'Retry runs…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Retry runs' });
    await dialog.getByTestId('bulk-matched').waitFor();
    await dialog.getByLabel(/Corrected input/).fill('["not", "an", "object"]');
    await dialog.getByRole('button', { name: 'Retry 1 run' }).click();
    await dialog.locator('#bulk-input-problems').getByText('must be a JSON object').waitFor();
    expect(await operations(), 'operations after the refused input').to.equal(before);
    expectNoErrors(tab.watch);
  });
});
