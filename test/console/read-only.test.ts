/** A read-only key sees every page and no write action: nothing to click that the API would refuse. */
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { createWorkflow, trigger, waitForExecution } from '../support/fixtures';
import { onboardingDefinition } from './fixtures';
import {
  expectAccessible,
  expectNoErrors,
  openSignedIn,
  startConsoleHarness,
  type ConsoleHarness,
  type ConsoleTab,
} from './harness';

/** Every control that changes something, by its accessible name. */
const WRITE_ACTIONS = [
  /Retry/,
  /Rerun/,
  /Cancel run/,
  /Cancel operation/,
  /^Approve$/,
  /^Reject$/,
  /Start run/,
  /Register endpoint/,
  /Redeliver/,
  /Delete/,
  /Create key/,
  /Revoke/,
  /Set secret/,
  /Replace/,
];

async function expectNoWriteActions(page: Page, what: string): Promise<void> {
  const buttons = await page.getByRole('button').allTextContents();
  const offending = buttons.filter((text) => WRITE_ACTIONS.some((pattern) => pattern.test(text.trim())));
  expect(offending, `write actions on ${what}`).to.deep.equal([]);
  expect(await page.locator('textarea, input[type="password"]').count(), `editors on ${what}`).to.equal(0);
}

describe('Console: a read-only key @browser', function () {
  this.timeout(180_000);
  let harness: ConsoleHarness;
  let tab: ConsoleTab | undefined;

  before(async () => {
    harness = await startConsoleHarness();
  });
  after(async () => {
    await tab?.close();
    await harness?.close();
  });

  it('sees runs, workflows, webhooks and settings with no write action', async () => {
    const { workspaceId, key: writer } = await harness.service.newWorkspace(['admin']);
    const reader = await harness.service.newKey(workspaceId, ['read']);
    const api = harness.service.api(writer);
    const wf = await createWorkflow(api, onboardingDefinition());
    const failed = await trigger(api, wf, { customer: 'Eve', plan: 'banned' });
    const waiting = await trigger(api, wf, { customer: 'Ada', plan: 'enterprise' });
    await waitForExecution(api, failed);
    await waitForExecution(api, waiting, (e) => e.status === 'waiting');
    await api
      .post('/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['execution.completed'] })
      .expect(201);
    await api.put('/v1/secrets/CRM_TOKEN', { value: 'secret-value' }).expect(204);

    tab = await openSignedIn(harness, reader);
    const { page } = tab;
    expect(await page.getByTestId('scopes').textContent()).to.equal('read');
    await page.getByTestId('run-row').nth(1).waitFor();
    await expectNoWriteActions(page, 'the runs list');

    for (const id of [failed, waiting]) {
      await page.goto(`${harness.service.url}/runs/${id}`);
      await page.getByTestId('step').first().waitFor();
      await expectNoWriteActions(page, `run ${id}`);
    }
    await page.getByText('Your key may read only').waitFor();
    await expectAccessible(page, 'a waiting run, read-only');

    await page.goto(`${harness.service.url}/workflows/${wf}`);
    await page.getByRole('heading', { name: 'Steps' }).waitFor();
    expect(await page.getByRole('heading', { name: /Start a run/ }).count()).to.equal(0);
    await expectNoWriteActions(page, 'a workflow');

    await page.goto(`${harness.service.url}/webhooks`);
    await page.getByTestId('endpoint-row').waitFor();
    await expectNoWriteActions(page, 'the webhooks');
    await page.getByTestId('endpoint-row').getByRole('link').click();
    await page.getByRole('heading', { name: 'Deliveries' }).waitFor();
    await expectNoWriteActions(page, 'an endpoint');

    await page.goto(`${harness.service.url}/settings`);
    await page.getByTestId('secret-row').waitFor();
    await page.getByText('Only an admin key sees').waitFor();
    await expectNoWriteActions(page, 'the settings');
    await expectAccessible(page, 'the settings, read-only');
    expectNoErrors(tab.watch);
  });
});
