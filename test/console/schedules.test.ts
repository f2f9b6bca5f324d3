/**
 * The schedule panel of a workflow page (docs/console.md): state and note, the next five runs, recent runs
 * that open their run, pause and resume, run now, and the backfill dialog; nothing to click for a read key.
 */
import { expect } from 'chai';
import { createWorkflow, definition } from '../support/fixtures';
import { deleteWorkflows, echo, weekdayMornings } from '../support/schedules';
import type { ApiClient } from '../support/stack';
import {
  expectAccessible,
  expectNoErrors,
  openSignedIn,
  startConsoleHarness,
  type ConsoleHarness,
  type ConsoleTab,
} from './harness';

describe('Console: schedules @browser', function () {
  this.timeout(180_000);
  let harness: ConsoleHarness;
  let workspaceId: string;
  let key: string;
  let api: ApiClient;
  let tab: ConsoleTab | undefined;

  before(async () => {
    harness = await startConsoleHarness();
    ({ workspaceId, key } = await harness.service.newWorkspace(['write']));
    api = harness.service.api(key);
  });
  afterEach(async () => {
    await tab?.close();
    tab = undefined;
  });
  after(async () => {
    // Their schedules leave the shared dev server with them.
    if (api) await deleteWorkflows(api);
    await harness?.close();
  });

  it('shows the schedule, pauses with a note, resumes, runs now and backfills a window', async () => {
    const id = await createWorkflow(api, definition(echo(), { trigger: weekdayMornings() }));
    tab = await openSignedIn(harness, key, { path: `/workflows/${id}` });
    const { page } = tab;
    const panel = page.getByTestId('schedule-panel');
    const state = panel.getByTestId('schedule-state');
    await state.getByText('active').waitFor();
    expect(await panel.locator('.facts').textContent())
      .to.include('cron 0 9 * * 1-5')
      .and.include('Europe/Paris');
    expect(await panel.getByTestId('next-runs').locator('li').count()).to.equal(5);
    await panel.getByText('No runs of this schedule yet.').waitFor();
    await expectAccessible(page, 'the schedule panel');

    await panel.getByLabel('Pause note (optional)').fill('CRM maintenance');
    await panel.getByRole('button', { name: 'Pause schedule' }).click();
    await state.getByText('paused').waitFor();
    expect(await panel.locator('.facts').textContent()).to.include('CRM maintenance');
    await panel.getByText('None while the schedule is paused.').waitFor();
    expect((await api.get(`/v1/workflows/${id}/schedule`).expect(200)).body).to.include({
      paused: true,
      note: 'CRM maintenance',
    });
    await panel.getByRole('button', { name: 'Resume schedule' }).click();
    await state.getByText('active').waitFor();

    await panel.getByRole('button', { name: 'Run now' }).click();
    const started = panel.getByRole('status').getByRole('link');
    const executionId = (await started.textContent())!;
    expect(executionId).to.match(/^ex_/);
    // The recent runs show it once visibility has it; its link opens the run.
    await panel.getByTestId('schedule-run').getByRole('link', { name: executionId }).click();
    await page.waitForURL(new RegExp(`/runs/${executionId}$`));
    await page.locator('.page-head .badge', { hasText: 'success' }).waitFor({ timeout: 30_000 });

    await page.goBack();
    await panel.getByRole('button', { name: 'Backfill…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Backfill past runs' });
    // Sunday noon to Saturday noon, in the browser's time zone: the five weekday mornings between.
    await dialog.getByLabel('Start').fill('2026-11-15T12:00');
    await dialog.getByLabel('End').fill('2026-11-21T12:00');
    await expectAccessible(page, 'the backfill dialog');
    await dialog.getByRole('button', { name: 'Start backfill' }).click();
    await panel.getByText('Backfill started: 5 runs.').waitFor();
    // The dialog closes in the effect after the render that shows the notice.
    await dialog.waitFor({ state: 'hidden', timeout: 5_000 });
    await panel.getByTestId('schedule-run').nth(5).waitFor({ timeout: 30_000 });

    // A refusal keeps the dialog open with the service's answer.
    await panel.getByRole('button', { name: 'Backfill…' }).click();
    await dialog.getByLabel('End').fill('2099-01-01T00:00');
    await dialog.getByRole('button', { name: 'Start backfill' }).click();
    await dialog.getByRole('alert').getByText('/end must not be in the future').waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden', timeout: 5_000 });
    expectNoErrors(tab.watch, [/status of 400/]);
  });

  it('shows a read key the schedule with nothing to click', async () => {
    const id = await createWorkflow(api, definition(echo(), { trigger: weekdayMornings() }));
    const reader = await harness.service.newKey(workspaceId, ['read']);
    tab = await openSignedIn(harness, reader, { path: `/workflows/${id}` });
    const { page } = tab;
    const panel = page.getByTestId('schedule-panel');
    await panel.getByTestId('schedule-state').getByText('active').waitFor();
    expect(await panel.getByRole('button').count()).to.equal(0);
    expectNoErrors(tab.watch);
  });
});
