/** Workspace settings in the console: API keys (create, shown once, revoke) and secrets (names only). */
import { expect } from 'chai';
import request from 'supertest';
import {
  expectAccessible,
  expectNoErrors,
  openSignedIn,
  startConsoleHarness,
  type ConsoleHarness,
  type ConsoleTab,
} from './harness';

describe('Console: settings @browser', function () {
  this.timeout(180_000);
  let harness: ConsoleHarness;
  let tab: ConsoleTab | undefined;

  before(async () => {
    harness = await startConsoleHarness({ worker: false });
  });
  afterEach(async () => {
    await tab?.close();
    tab = undefined;
  });
  after(async () => harness?.close());

  it('creates a key with a scope (shown once), shows when it was last used, and revokes it after confirmation', async () => {
    const { key } = await harness.service.newWorkspace(['admin']);
    tab = await openSignedIn(harness, key, { path: '/settings' });
    const { page } = tab;
    await page.getByTestId('key-row').first().waitFor();
    expect(await page.getByTestId('key-row').first().textContent()).to.include('(this session)');
    await expectAccessible(page, 'the settings page');

    await page.getByLabel('Name', { exact: true }).first().fill('deploy bot');
    await page.getByLabel('write').check();
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByTestId('shown-once').waitFor();
    const created = (await page.getByTestId('secret-value').textContent())!;
    expect(created).to.match(/^sk_/);
    await page.getByRole('button', { name: 'I have copied it' }).click();
    expect(await page.content()).not.to.include(created);

    const row = page.getByTestId('key-row').filter({ hasText: 'deploy bot' });
    expect(await row.textContent())
      .to.include('write')
      .and.include('never');
    await request(harness.service.url)
      .get('/v1/workflows')
      .set('Authorization', `Bearer ${created}`)
      .expect(200);
    await page.reload();
    await row.waitFor();
    expect(await row.textContent()).not.to.include('never');

    await row.getByRole('button', { name: /Revoke/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke this key?' });
    await dialog.waitFor();
    expect(await dialog.textContent()).to.include('deploy bot');
    await expectAccessible(page, 'the revoke confirmation');
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await page.getByText('Key deploy bot').waitFor();
    await row.getByText(/revoked/).waitFor();
    await request(harness.service.url)
      .get('/v1/workflows')
      .set('Authorization', `Bearer ${created}`)
      .expect(401);
    expectNoErrors(tab.watch);
  });

  it('sets, replaces and deletes secrets, showing names only', async () => {
    const { key } = await harness.service.newWorkspace(['write']);
    tab = await openSignedIn(harness, key, { path: '/settings' });
    const { page } = tab;
    await page.getByText('No secrets yet.').waitFor();
    expect(await page.getByText('Only an admin key sees').count()).to.equal(1);

    await page.getByLabel('Name', { exact: true }).fill('CRM_TOKEN');
    await page.getByLabel('Value').fill('first-value-123');
    await page.getByRole('button', { name: 'Set secret' }).click();
    await page.getByText('Secret CRM_TOKEN set.').waitFor();
    const row = page.getByTestId('secret-row').filter({ hasText: 'CRM_TOKEN' });
    await row.waitFor();

    await row.getByRole('button', { name: /Replace/ }).click();
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).to.equal('CRM_TOKEN');
    await page.getByLabel('Value').fill('second-value-456');
    await page.getByRole('button', { name: 'Replace value' }).click();
    await page.getByText('Secret CRM_TOKEN replaced.').waitFor();
    const html = await page.content();
    expect(html).not.to.include('first-value-123');
    expect(html).not.to.include('second-value-456');
    await expectAccessible(page, 'the secrets section');

    await row.getByRole('button', { name: /Delete/ }).click();
    await page
      .getByRole('dialog', { name: 'Delete this secret?' })
      .getByRole('button', { name: 'Delete secret' })
      .click();
    await page.getByText('No secrets yet.').waitFor();
    const listed = await harness.service.api(key).get('/v1/secrets');
    expect(listed.body.data).to.deep.equal([]);
    expectNoErrors(tab.watch);
  });
});
