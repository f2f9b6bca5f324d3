/**
 * Every page of the console at 1280×800 and at a phone's width (390 px): nothing wider than the screen,
 * no serious or critical axe-core violation, no console error; keyboard: Tab reaches the skip link, then
 * the navigation. Writes the README's screenshots (docs/images) when UPDATE_SCREENSHOTS=1.
 */
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { createApiKey } from '../../platform/store/api-keys';
import { createWorkspace } from '../../platform/store/workspaces';
import { createWorkflow, trigger, uniqueId, waitForExecution } from '../support/fixtures';
import { Receiver } from '../support/receiver';
import type { ApiClient } from '../support/stack';
import { waitFor } from '../support/wait';
import { onboardingDefinition } from './fixtures';
import {
  DESKTOP,
  PHONE,
  expectAccessible,
  expectNoErrors,
  openSignedIn,
  screenshotPath,
  startConsoleHarness,
  type ConsoleHarness,
} from './harness';

/** A run worth looking at: rules, an HTTP call, an approval, a skipped step. */
function showcaseDefinition(serviceUrl: string): Record<string, unknown> {
  return {
    id: 'customer-onboarding',
    name: 'Customer onboarding',
    input_schema: {
      type: 'object',
      required: ['customer', 'plan'],
      properties: { customer: { type: 'string' }, plan: { type: 'string', enum: ['starter', 'enterprise'] } },
    },
    steps: [
      {
        id: 'route',
        name: 'Route by plan',
        kind: 'rules',
        rules: [{ when: 'input.plan = "enterprise"', output: { tier: 'high', account_manager: true } }],
        default: { tier: 'standard', account_manager: false },
      },
      {
        id: 'crm',
        name: 'Create CRM account',
        kind: 'connector',
        connector: 'http',
        request: { method: 'GET', url: `${serviceUrl}/healthz`, query: { customer: '{{ input.customer }}' } },
      },
      {
        id: 'discount',
        name: 'Starter discount',
        kind: 'rules',
        if: 'steps.route.output.tier = "standard"',
        rules: [],
        default: { percent: 10 },
      },
      {
        id: 'review',
        name: 'Manager review',
        kind: 'approval',
        if: 'steps.route.output.tier = "high"',
        message: 'Approve {{ input.customer }} on the enterprise plan?',
        timeout: '72h',
      },
      {
        id: 'welcome',
        name: 'Welcome message',
        kind: 'rules',
        rules: [],
        default: { message: 'Welcome aboard, {{ input.customer }}!' },
      },
    ],
  };
}

/** Steps that hold steps: branches, cases, items, iterations and a child run of `child`. */
function composedDefinition(child: string): Record<string, unknown> {
  const constant = (id: string, value: unknown) => ({ id, kind: 'rules', rules: [], default: value });
  return {
    id: uniqueId('fan-out'),
    name: 'Fan-out',
    steps: [
      {
        id: 'enrich',
        kind: 'parallel',
        branches: [
          { id: 'profile', steps: [constant('profile_get', { name: 'Ada' })] },
          { id: 'score', steps: [constant('score_get', 42), constant('score_round', 40)] },
        ],
      },
      {
        id: 'by_plan',
        kind: 'switch',
        cases: [{ id: 'gold', when: "input.plan = 'enterprise'", steps: [constant('gold_perks', true)] }],
        default: [constant('standard_perks', false)],
      },
      {
        id: 'notify',
        kind: 'map',
        items: 'input.contacts',
        as: 'contact',
        concurrency: 2,
        steps: [constant('send', '{{ contact }}')],
      },
      {
        id: 'poll',
        kind: 'loop',
        until: 'steps.check.output >= 2',
        max_iterations: 5,
        steps: [constant('check', '{{ iteration + 1 }}')],
      },
      { id: 'onboard', kind: 'workflow', workflow: child, input: { customer: 'Ada', plan: 'pro' } },
    ],
  };
}

interface Fixture {
  runId: string;
  workflowId: string;
  webhookId: string;
  composedWorkflowId: string;
  composedRunId: string;
  eventId: string;
  bulkOperationId: string;
}

async function seed(harness: ConsoleHarness, api: ApiClient, receiver: Receiver): Promise<Fixture> {
  const hook = await api.post('/v1/webhooks', {
    url: `${receiver.url}/events`,
    events: ['execution.completed', 'execution.failed'],
    description: 'Order system',
  });
  expect(hook.status).to.equal(201);
  await api.put('/v1/secrets/CRM_TOKEN', { value: 'crm-token-value' }).expect(204);
  const workflowId = await createWorkflow(api, showcaseDefinition(harness.service.url));
  const other = await createWorkflow(api, onboardingDefinition(uniqueId('invoicing')));
  const runId = await trigger(api, workflowId, { customer: 'Ada Lovelace', plan: 'enterprise' });
  await waitForExecution(api, runId, (e) => e.status === 'waiting');
  await api.post(`/v1/executions/${runId}/steps/review/approve`, { comment: 'Contract signed' }).expect(200);
  const runs = [
    trigger(api, workflowId, { customer: 'Grace Hopper', plan: 'starter' }),
    trigger(api, other, { customer: 'Eve', plan: 'banned' }),
    trigger(api, workflowId, { customer: 'Alan Turing', plan: 'enterprise' }),
    trigger(api, other, { customer: 'Barbara Liskov', plan: 'pro' }),
  ];
  for (const id of await Promise.all(runs)) await waitForExecution(api, id, (e) => e.status !== 'running');
  await waitForExecution(api, runId);
  const composedWorkflowId = await createWorkflow(api, composedDefinition(other));
  const composedRunId = await trigger(api, composedWorkflowId, {
    plan: 'pro',
    contacts: ['a@x.test', 'b@x.test'],
  });
  await waitForExecution(api, composedRunId);
  await waitFor(async () => receiver.requests.length >= 3, { what: 'deliveries' });
  const event = await api
    .post('/v1/events', { name: 'user.signup', data: { customer: 'Ada Lovelace', plan: 'pro' } })
    .expect(202);
  // A cancel of a finished run: it skips it, and leaves the runs as they are.
  const bulk = await api
    .post('/v1/bulk-operations', { action: 'cancel', filter: { execution_ids: [runId] } })
    .expect(202);
  return {
    bulkOperationId: bulk.body.id as string,
    runId,
    workflowId,
    webhookId: hook.body.id as string,
    composedWorkflowId,
    composedRunId,
    eventId: (event.body.ids as string[])[0]!,
  };
}

/** Waits for a page to have loaded its data (no loading state left). */
async function settled(page: Page): Promise<void> {
  await page.locator('main h1').first().waitFor();
  await waitFor(async () => (await page.locator('.state-loading').count()) === 0, { what: 'loading to end' });
}

describe('Console: every page at desktop and phone width @browser', function () {
  this.timeout(240_000);
  let harness: ConsoleHarness;
  let receiver: Receiver;
  let key: string;
  let fixture: Fixture;

  before(async () => {
    harness = await startConsoleHarness();
    receiver = await Receiver.start();
    // A workspace with a readable name, as the screenshots show it.
    const db = harness.service.runtime.services.db;
    const workspaceId = `acme-${uniqueId('ws')}`;
    await createWorkspace(db, workspaceId, 'Acme Inc.');
    key = (await createApiKey(db, { workspaceId, name: 'ops console', scopes: ['admin'] })).key;
    fixture = await seed(harness, harness.service.api(key), receiver);
  });
  after(async () => {
    await receiver?.stop();
    await harness?.close();
  });

  const pages = (f: Fixture) => [
    { path: '/', name: 'the runs list' },
    { path: `/runs/${f.runId}`, name: 'a run' },
    { path: '/workflows', name: 'the workflows' },
    { path: `/workflows/${f.workflowId}`, name: 'a workflow' },
    { path: `/workflows/${f.composedWorkflowId}`, name: 'a workflow of containers' },
    { path: `/runs/${f.composedRunId}`, name: 'a run of containers' },
    { path: '/events', name: 'the events' },
    { path: `/events/${f.eventId}`, name: 'an event' },
    { path: '/webhooks', name: 'the webhooks' },
    { path: `/webhooks/${f.webhookId}`, name: 'an endpoint' },
    { path: '/settings', name: 'the settings' },
    { path: '/bulk-operations', name: 'the bulk operations' },
    { path: `/bulk-operations/${f.bulkOperationId}`, name: 'a bulk operation' },
    { path: '/no/such/page', name: 'a missing page' },
  ];

  for (const [label, viewport] of [
    ['1280×800', DESKTOP],
    ['390 px (phone)', PHONE],
  ] as const) {
    it(`shows every page at ${label}: nothing wider than the screen, accessible, no console error`, async () => {
      const tab = await openSignedIn(harness, key, { viewport });
      try {
        for (const { path, name } of pages(fixture)) {
          await tab.page.goto(`${harness.service.url}${path}`);
          await settled(tab.page);
          const width = await tab.page.evaluate<{ scroll: number; inner: number }>(
            '({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth })',
          );
          expect(width.scroll, `${name} at ${label} is wider than the screen`).to.be.at.most(width.inner);
          await expectAccessible(tab.page, `${name} at ${label}`);
        }
        expectNoErrors(tab.watch);
      } finally {
        await tab.close();
      }
    });
  }

  it('is usable from the keyboard: skip link, navigation, a step opened with Enter', async () => {
    const tab = await openSignedIn(harness, key, { path: `/runs/${fixture.runId}` });
    try {
      const { page } = tab;
      await settled(page);
      await page.keyboard.press('Tab');
      expect(await page.evaluate<string>('document.activeElement.textContent')).to.equal('Skip to content');
      await page.keyboard.press('Tab');
      expect(await page.evaluate<string>('document.activeElement.textContent')).to.equal('Switchyard');
      const crm = page.getByRole('button', { name: /Create CRM account/ });
      await crm.focus();
      await page.keyboard.press('Enter');
      expect(await crm.getAttribute('aria-expanded')).to.equal('true');
      await page.getByRole('group', { name: 'Output of step crm' }).waitFor();
      await page.getByRole('link', { name: 'Workflows' }).focus();
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Workflows' }).waitFor();
      expectNoErrors(tab.watch);
    } finally {
      await tab.close();
    }
  });

  it('takes the screenshots of the runs list and of a run (docs/images with UPDATE_SCREENSHOTS=1)', async () => {
    const tab = await openSignedIn(harness, key);
    try {
      const { page } = tab;
      await page.getByLabel('Live refresh').uncheck();
      await settled(page);
      await page.getByTestId('run-row').nth(4).waitFor();
      await page.screenshot({ path: screenshotPath('console-runs.png') });
      await page.goto(`${harness.service.url}/runs/${fixture.runId}`);
      await settled(page);
      await page.getByRole('button', { name: /Create CRM account/ }).click();
      await page.getByRole('group', { name: 'Output of step crm' }).waitFor();
      await page.screenshot({ path: screenshotPath('console-execution.png') });
      expectNoErrors(tab.watch);
    } finally {
      await tab.close();
    }
  });
});
