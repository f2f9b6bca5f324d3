/**
 * The operators' view: a run started through the API shows in Temporal UI (served by the dev server) with
 * its workflow id, its summary (workflow name, id and version) and its final status. With
 * UPDATE_SCREENSHOTS=1 the test also writes the README's screenshot, docs/images/temporal-ui-run.png.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { SwitchyardClient } from '@switchyard/client';
import { projectRoot } from '../../platform/paths';
import { launchBrowser } from '../support/browser';
import { sharedTemporal, startTestService, type TestService } from '../support/stack';
import { waitFor } from '../support/wait';

describe('Temporal UI @integration', function () {
  this.timeout(180_000);
  let service: TestService;
  let browser: Browser;

  before(async () => {
    // The default task queue's name, as a newcomer's `npm start` shows it (no other test uses it).
    service = await startTestService({ env: { TEMPORAL_TASK_QUEUE: 'switchyard' } });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await service?.stop();
  });

  it('shows a run with its id, status, task queue, pinned build and summary', async () => {
    const { devServer } = await sharedTemporal();
    expect(devServer.uiUrl, 'the test dev server runs Temporal UI').to.be.a('string');
    const client = new SwitchyardClient({ baseUrl: service.url, apiKey: service.adminKey });
    const { execution_id } = await client.workflows.trigger('customer-onboarding', {
      customer: 'Ada',
      plan: 'enterprise',
    });
    expect((await client.waitForExecution(execution_id)).status).to.equal('success');

    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    await page.goto(`${devServer.uiUrl}/namespaces/default/workflows/${execution_id}`);
    await page.getByRole('heading', { name: execution_id }).waitFor({ timeout: 60_000 });
    await page.getByText('Completed', { exact: true }).first().waitFor();
    const details = await page.innerText('main');
    expect(details).to.include('Pinned');
    expect(details).to.include(service.config.temporal.taskQueue);

    if (process.env['UPDATE_SCREENSHOTS'] === '1') {
      const file = path.join(projectRoot, 'docs', 'images', 'temporal-ui-run.png');
      fs.mkdirSync(path.dirname(file), { recursive: true });
      await page.screenshot({ path: file });
    }
    await page.getByRole('tab', { name: 'User Metadata' }).click();
    // Temporal UI renders the summary (Markdown) in a sandboxed frame.
    await waitFor(
      async () => {
        const texts = await Promise.all(
          page.frames().map((frame) => frame.innerText('body').catch(() => '')),
        );
        return (
          texts.some((text) => text.includes('Customer onboarding (customer-onboarding v1)')) || undefined
        );
      },
      { timeoutMs: 30_000, what: "the run's summary under User Metadata" },
    );
    await page.close();
  });
});
