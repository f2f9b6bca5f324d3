/**
 * Webhooks in the console: register an endpoint (its signing secret shown once), see a delivery with
 * every attempt, and send it again.
 */
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { createWorkflow, trigger, uniqueId, waitForExecution } from '../support/fixtures';
import { Receiver } from '../support/receiver';
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

describe('Console: webhooks @browser', function () {
  this.timeout(180_000);
  let harness: ConsoleHarness;
  let receiver: Receiver;
  let key: string;
  let api: ApiClient;
  let tab: ConsoleTab | undefined;

  before(async () => {
    // Retries a second apart, so a failed first attempt is followed by a second one within the test.
    harness = await startConsoleHarness({ env: { WEBHOOK_RETRY_SCHEDULE: '1,1,1' } });
    receiver = await Receiver.start();
    const workspace = await harness.service.newWorkspace(['write']);
    key = workspace.key;
    api = harness.service.api(key);
  });
  afterEach(async () => {
    await tab?.close();
    tab = undefined;
  });
  after(async () => {
    await receiver?.stop();
    await harness?.close();
  });

  it('registers an endpoint, shows its secret once, logs a delivery with its attempts and redelivers it', async () => {
    const path = `/hook-${uniqueId('r')}`;
    receiver.replyOnceTo(path, { status: 500, body: { error: 'busy' } });
    tab = await openSignedIn(harness, key, { path: '/webhooks' });
    await tab.context.grantPermissions(['clipboard-read', 'clipboard-write'], {
      origin: harness.service.url,
    });
    const { page } = tab;
    await page.getByText('No endpoints yet.').waitFor();
    await expectAccessible(page, 'the webhooks page (empty)');

    await page.getByLabel('URL').fill(`${receiver.url}${path}`);
    await page.getByLabel('Description (optional)').fill('Order system');
    await page.getByLabel('execution.failed').uncheck();
    await page.getByRole('button', { name: 'Register endpoint' }).click();
    const once = page.getByTestId('shown-once');
    await once.waitFor();
    expect(await once.textContent()).to.include('shown only this once');
    const secret = (await page.getByTestId('secret-value').textContent())!;
    expect(secret).to.match(/^whsec_/);
    await once.getByRole('button', { name: 'Copy' }).click();
    await once.getByText('Copied.').waitFor();
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).to.equal(secret);
    await expectAccessible(page, 'the webhooks page with a new secret');
    await page.getByRole('button', { name: 'I have copied it' }).click();
    expect(await page.getByTestId('shown-once').count()).to.equal(0);
    expect(await page.content()).not.to.include(secret);
    const row = page.getByTestId('endpoint-row');
    expect(await row.textContent())
      .to.include('enabled')
      .and.include('execution.completed');

    // A run completes: its event fails once (500), then arrives (200).
    const wf = await createWorkflow(api, {
      id: uniqueId('hooked'),
      steps: [{ id: 'only', kind: 'rules', rules: [], default: { ok: true } }],
    });
    const executionId = await trigger(api, wf, {});
    await waitForExecution(api, executionId);
    await waitFor(async () => receiver.requestsTo(path).filter((r) => r.answered === 200).length === 1, {
      what: 'the second attempt',
    });

    await row.getByRole('link').click();
    const delivery = page.getByTestId('delivery');
    await delivery.getByText('succeeded').waitFor();
    expect(await delivery.textContent())
      .to.include('execution.completed')
      .and.include(executionId);
    const attempts = delivery.getByTestId('attempt');
    await waitFor(async () => (await attempts.count()) === 2, { what: 'two attempts listed' });
    expect(await attempts.nth(0).textContent()).to.include('500');
    expect(await attempts.nth(1).textContent()).to.include('200');
    await expectAccessible(page, 'the delivery log');

    await delivery.getByRole('button', { name: 'Redeliver' }).click();
    await page.getByText(/is being sent again/).waitFor();
    await waitFor(async () => (await attempts.count()) === 3, {
      what: 'a third attempt listed',
      timeoutMs: 30_000,
    });
    expect(await attempts.nth(2).textContent()).to.include('200');
    const received = receiver.requestsTo(path);
    expect(received).to.have.length(3);
    expect(new Set(received.map((r) => r.headers['webhook-id'])).size).to.equal(1);
    // The secret shown is the one that signs.
    expect(
      new Webhook(secret).verify(received[2]!.body, received[2]!.headers as Record<string, string>),
    ).to.include({
      event: 'execution.completed',
      execution_id: executionId,
    });
    expectNoErrors(tab.watch);
  });
});
