/**
 * Events in the console: the list (newest first, filtered by name, paged with "Load more"), an event with
 * its data and the run it started (a link, and back from the run to the event), and an event whose data a
 * trigger refused, with the reason.
 */
import { expect } from 'chai';
import { createWorkflow, uniqueId } from '../support/fixtures';
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
import { onboardingDefinition } from './fixtures';

describe('Console: events @browser', function () {
  this.timeout(180_000);
  let harness: ConsoleHarness;
  let key: string;
  let api: ApiClient;
  let tab: ConsoleTab | undefined;

  /** Sends events and waits until the service has acted on them. */
  async function send(events: unknown[]): Promise<string[]> {
    const res = await api.post('/v1/events', events).expect(202);
    const ids = res.body.ids as string[];
    const db = harness.service.runtime.services.db;
    await waitFor(
      async () =>
        (
          await db.query<{ n: number }>(
            'select count(*)::int as n from events where id = any($1) and dispatched_at is not null',
            [ids],
          )
        )[0]!.n === ids.length,
      { what: 'the events to be acted on' },
    );
    return ids;
  }

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

  it('lists events, filters them by name, shows the run one started and why another was refused', async () => {
    const workflowId = await createWorkflow(api, {
      ...onboardingDefinition(uniqueId('signup')),
      trigger: { type: 'event', event: 'user.signup' },
    });
    const [started, refused, other] = await send([
      { name: 'user.signup', data: { customer: 'Ada Lovelace', plan: 'pro' }, id: 'signup-ada' },
      { name: 'user.signup', data: { customer: 'Nobody', plan: 'gold' }, id: 'signup-nobody' },
      { name: 'invoice.paid', data: { invoice: 42 }, id: 'invoice-42' },
    ]);

    tab = await openSignedIn(harness, key, { path: '/events' });
    const { page } = tab;
    const rows = page.getByTestId('event-row');
    await waitFor(async () => (await rows.count()) === 3, { what: 'three events listed' });
    expect(await rows.nth(0).textContent(), 'newest first').to.include(other);
    await expectAccessible(page, 'the events page');

    await page.getByLabel('Name').fill('user.signup');
    await page.getByRole('button', { name: 'Filter' }).click();
    await waitFor(async () => (await rows.count()) === 2, { what: 'the user.signup events only' });
    expect(page.url()).to.include('name=user.signup');
    expect(await rows.nth(0).textContent()).to.include(refused);
    expect(await rows.nth(1).textContent())
      .to.include(started)
      .and.include('1 started');

    await rows.nth(1).getByRole('link').click();
    await page.getByRole('heading', { name: `Event ${started}` }).waitFor();
    expect(await page.getByRole('group', { name: `Data of event ${started}` }).textContent()).to.include(
      'Ada Lovelace',
    );
    await expectAccessible(page, 'an event that started a run');
    const run = page.getByTestId('started-run');
    expect(await run.count()).to.equal(1);
    const runId = (await run.textContent())!.trim();
    await run.getByRole('link').click();
    await page.getByRole('heading', { name: `Run ${runId}` }).waitFor();
    expect(await page.getByTestId('run-event').textContent()).to.include(started);
    await page.getByTestId('run-event').getByRole('link').click();
    await page.getByRole('heading', { name: `Event ${started}` }).waitFor();

    await page.goto(`${harness.service.url}/events/${refused}`);
    const error = page.getByTestId('event-error');
    await error.waitFor();
    expect(await error.textContent())
      .to.include(workflowId)
      .and.include('invalid_input')
      .and.include('/plan');
    expect(await page.getByTestId('started-run').count()).to.equal(0);
    await expectAccessible(page, 'an event a trigger refused');
    expectNoErrors(tab.watch);
  });

  it('pages through many events with Load more', async () => {
    const name = `bulk.${uniqueId('n')}`;
    const ids = await send(Array.from({ length: 25 }, (_, i) => ({ name, data: { i } })));
    tab = await openSignedIn(harness, key, { path: `/events?name=${name}` });
    const { page } = tab;
    const rows = page.getByTestId('event-row');
    await waitFor(async () => (await rows.count()) === 20, { what: 'the first page of 20' });
    await page.getByRole('button', { name: 'Load more' }).click();
    await waitFor(async () => (await rows.count()) === 25, { what: 'all 25 events' });
    expect(await rows.nth(24).textContent()).to.include(ids[0]);
    expect(await page.getByRole('button', { name: 'Load more' }).count()).to.equal(0);
    expectNoErrors(tab.watch);
  });
});
