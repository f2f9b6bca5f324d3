/**
 * Workspace settings in the console: the workspace's limits beside its usage, API keys (create, shown once,
 * revoke) and secrets (names only).
 */
import { expect } from 'chai';
import request from 'supertest';
import { setLimitOverrides } from '../../platform/store/workspace-limits';
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

  it("shows the workspace's limits beside what it uses of them, and a refusal at a limit", async () => {
    const { workspaceId, key } = await harness.service.newWorkspace(['write']);
    await setLimitOverrides(
      harness.service.runtime.services.db,
      workspaceId,
      new Map([
        ['secrets', 1],
        ['ai_tokens_per_day', 50_000],
      ]),
    );
    await harness.service.api(key).put('/v1/secrets/FIRST', { value: 'first-value' }).expect(204);
    tab = await openSignedIn(harness, key, { path: '/settings' });
    const { page } = tab;
    const row = (limit: string) => page.locator(`[data-testid="limit-row"][data-limit="${limit}"]`);
    await row('secrets').waitFor();
    const cells = async (limit: string) => row(limit).locator('td').allTextContents();
    expect(await cells('secrets')).to.deep.equal(['Secrets', '1', '1']);
    expect(await cells('workflows')).to.deep.equal(['Workflows', '0', '1,000']);
    expect(await cells('api_keys')).to.deep.equal(['API keys (active)', '1', '100']);
    expect(await cells('steps_per_definition')).to.deep.equal(['Steps per definition', '–', '200']);
    expect(await cells('ai_tokens_per_day')).to.deep.equal([
      'AI tokens per day (used today, UTC)',
      '0',
      '50,000',
    ]);
    await expectAccessible(page, 'the limits section');

    await page.getByLabel('Name', { exact: true }).fill('SECOND');
    await page.getByLabel('Value').fill('second-value');
    await page.getByRole('button', { name: 'Set secret' }).click();
    await page.getByText('maximum of 1 secrets').waitFor();
    expectNoErrors(tab.watch, [/409/]);
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
