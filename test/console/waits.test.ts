/**
 * Steps that wait for time or an event, in the console (docs/console.md): a sleeping step shows as waiting
 * with until when, and the diagram draws a sleep with how long it sleeps; a wait_for_event step says which
 * event it waits for (a link to the events of that name) and until when, the event that wakes it lists the
 * run as woken (a link), and the diagram draws the step with its event, match and timeout.
 */
import { expect } from 'chai';
import { createWorkflow, stepOf, trigger, uniqueId, waitForExecution } from '../support/fixtures';
import type { ApiClient } from '../support/stack';
import {
  expectAccessible,
  expectNoErrors,
  openSignedIn,
  startConsoleHarness,
  type ConsoleHarness,
  type ConsoleTab,
} from './harness';

describe('Console: sleep and wait_for_event steps @browser', function () {
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

  it('shows a sleeping step as waiting, with until when it sleeps', async () => {
    const id = await createWorkflow(api, {
      id: uniqueId('nap'),
      steps: [{ id: 'nap', name: 'Cool down', kind: 'sleep', duration: '2h' }],
    });
    const runId = await trigger(api, id);
    const waiting = await waitForExecution(api, runId, (e) => e.status === 'waiting');
    const until = stepOf(waiting, 'nap').waiting_for!.until;

    tab = await openSignedIn(harness, key, { path: `/runs/${runId}` });
    const { page } = tab;
    const row = page.locator('[data-testid="step"][data-step="nap"]');
    await row.locator('.badge', { hasText: 'waiting' }).waitFor();
    const line = row.getByTestId('waiting-for');
    expect(await line.textContent()).to.match(/^Sleeping until /);
    expect(await line.locator('time').getAttribute('datetime')).to.equal(until);
    await expectAccessible(page, 'a sleeping run');

    await api.post(`/v1/executions/${runId}/cancel`).expect(202);
    await row.locator('.badge', { hasText: 'canceled' }).waitFor({ timeout: 30_000 });
    expect(await row.getByTestId('waiting-for').count()).to.equal(0);
    expectNoErrors(tab.watch);
  });

  it('draws a sleep in the diagram with its duration or its until', async () => {
    const id = await createWorkflow(api, {
      id: uniqueId('reminder'),
      steps: [
        { id: 'wait_a_day', kind: 'sleep', duration: '1d' },
        { id: 'wait_until', kind: 'sleep', until: '{{ input.send_at }}' },
      ],
    });
    tab = await openSignedIn(harness, key, { path: `/workflows/${id}` });
    const { page } = tab;
    const diagram = page.getByTestId('diagram');
    const day = diagram.getByRole('group', { name: 'Step wait_a_day, sleep' });
    await day.waitFor();
    expect(await day.locator('.node-line').textContent()).to.equal('sleeps 1d');
    expect(
      await diagram
        .getByRole('group', { name: 'Step wait_until, sleep' })
        .locator('.node-line')
        .textContent(),
    ).to.equal('sleeps until {{ input.send_at }}');
    await expectAccessible(page, 'a definition with sleeps');
    expectNoErrors(tab.watch);
  });

  it('shows which event a waiting step waits for and until when, and the event that woke it links the run', async () => {
    // A name of this test's own: no other test's event wakes the run.
    const eventName = `payment.succeeded.${uniqueId('t')}`;
    const id = await createWorkflow(api, {
      id: uniqueId('order'),
      steps: [
        {
          id: 'payment',
          kind: 'wait_for_event',
          event: eventName,
          match: 'event.data.order_id = input.order_id',
          timeout: '24h',
        },
      ],
    });
    const runId = await trigger(api, id, { order_id: 'ord_7' });
    const waiting = await waitForExecution(
      api,
      runId,
      (e) => e.status === 'waiting' && stepOf(e, 'payment').waiting_for?.type === 'event',
    );
    const until = stepOf(waiting, 'payment').waiting_for!.until;

    tab = await openSignedIn(harness, key, { path: `/runs/${runId}` });
    const { page } = tab;
    const row = page.locator('[data-testid="step"][data-step="payment"]');
    await row.locator('.badge', { hasText: 'waiting' }).waitFor();
    const line = row.getByTestId('waiting-for');
    expect(await line.textContent()).to.match(new RegExp(`^Waiting for event ${eventName} until `));
    expect(await line.locator('time').getAttribute('datetime')).to.equal(until);
    await expectAccessible(page, 'a run waiting for an event');

    await line.getByRole('link', { name: eventName }).click();
    await page.getByRole('heading', { name: 'Events' }).waitFor();
    expect(new URL(page.url()).searchParams.get('name'), 'the events page filtered by the name').to.equal(
      eventName,
    );
    expect(await page.getByLabel('Name').inputValue()).to.equal(eventName);

    const sent = await api.post('/v1/events', { name: eventName, data: { order_id: 'ord_7' } }).expect(202);
    const eventId = (sent.body as { ids: string[] }).ids[0]!;
    await page.goto(`${harness.service.url}/runs/${runId}`);
    await row.locator('.badge', { hasText: 'success' }).waitFor({ timeout: 30_000 });
    expect(await row.getByTestId('waiting-for').count(), 'no waiting line once woken').to.equal(0);

    await page.goto(`${harness.service.url}/events/${eventId}`);
    const woken = page.getByTestId('woken-run');
    await woken.waitFor();
    expect((await woken.textContent())!.trim()).to.equal(runId);
    await woken.getByRole('link').click();
    await page.getByRole('heading', { name: `Run ${runId}` }).waitFor();
    expectNoErrors(tab.watch);
  });

  it('draws a wait_for_event in the diagram with its event, match, timeout and what a timeout does', async () => {
    const id = await createWorkflow(api, {
      id: uniqueId('order-flow'),
      steps: [
        {
          id: 'payment',
          kind: 'wait_for_event',
          event: 'payment.succeeded',
          match: 'event.data.order_id = input.order_id',
          timeout: '24h',
        },
        { id: 'shipped', kind: 'wait_for_event', event: 'order.shipped', on_timeout: 'continue' },
      ],
    });
    tab = await openSignedIn(harness, key, { path: `/workflows/${id}` });
    const { page } = tab;
    const diagram = page.getByTestId('diagram');
    const payment = diagram.getByRole('group', { name: 'Step payment, wait_for_event' });
    await payment.waitFor();
    expect(await payment.locator('.node-line').allTextContents()).to.deep.equal([
      'waits for event payment.succeeded where event.data.order_id = input.order_id',
      'times out after 24h, then fails',
    ]);
    expect(
      await diagram
        .getByRole('group', { name: 'Step shipped, wait_for_event' })
        .locator('.node-line')
        .allTextContents(),
      'without a match or a timeout: any event of the name, the 30-day default',
    ).to.deep.equal(['waits for event order.shipped', 'times out after 30d, then goes on (output null)']);
    await expectAccessible(page, 'a definition with event waits');
    expectNoErrors(tab.watch);
  });
});
