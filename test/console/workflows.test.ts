/**
 * Workflows in the console: the list, a definition with its versions and the differences between two, and
 * a run started from the form generated from `input_schema`, followed on its page until success.
 */
import { expect } from 'chai';
import { createWorkflow, uniqueId, waitForExecution } from '../support/fixtures';
import type { ApiClient } from '../support/stack';
import {
  expectAccessible,
  expectNoErrors,
  openSignedIn,
  startConsoleHarness,
  type ConsoleHarness,
  type ConsoleTab,
} from './harness';

function signupDefinition(id: string, greeting = 'Hello'): Record<string, unknown> {
  return {
    id,
    name: 'Sign-up',
    description: 'Greets a new customer',
    input_schema: {
      type: 'object',
      required: ['customer', 'plan', 'seats'],
      properties: {
        customer: { type: 'string', minLength: 1, description: 'Who signs up' },
        plan: { type: 'string', enum: ['starter', 'pro'] },
        seats: { type: 'integer', minimum: 1 },
        trial: { type: 'boolean' },
        tags: { type: 'array', items: { type: 'string' } },
      },
    },
    steps: [
      {
        id: 'greet',
        kind: 'rules',
        rules: [],
        default: { message: `${greeting} {{ input.customer }}`, seats: '{{ input.seats }}' },
      },
    ],
  };
}

describe('Console: workflows @browser', function () {
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

  it('lists workflows and shows a definition with its versions and the differences between two', async () => {
    const id = await createWorkflow(api, signupDefinition(uniqueId('signup')));
    const saved = await api.put(`/v1/workflows/${id}`, signupDefinition(id, 'Welcome'));
    expect(saved.status, JSON.stringify(saved.body)).to.equal(200);

    tab = await openSignedIn(harness, key, { path: '/workflows' });
    const { page } = tab;
    await page.getByRole('link', { name: id }).click();
    await page.getByRole('heading', { name: 'Sign-up' }).waitFor();
    expect(await page.locator('.facts').textContent()).to.include('2 of 2');
    await page.getByTestId('diff').waitFor();
    const diff = page.getByTestId('diff');
    const removed = await diff.locator('.removed').allTextContents();
    const added = await diff.locator('.added').allTextContents();
    expect(removed).to.have.length(1);
    expect(removed[0]).to.match(/^- +"message": "Hello \{\{ input.customer \}\}"/);
    expect(added).to.have.length(1);
    expect(added[0]).to.match(/^\+ +"message": "Welcome \{\{ input.customer \}\}"/);
    await expectAccessible(page, 'a workflow definition');

    await page.getByLabel('Version', { exact: true }).selectOption('1');
    await page.waitForURL(/version=1/);
    await page.getByText('1 of 2').waitFor();
    // The JSON viewer opens node by node.
    const definition = page.getByRole('group', { name: 'Definition of version 1' });
    await definition.locator('summary', { hasText: 'steps:' }).click();
    await definition.locator('summary', { hasText: /^0:/ }).click();
    await definition.locator('summary', { hasText: /^default:/ }).click();
    await definition.getByText('"Hello {{ input.customer }}"').waitFor();

    await page.getByRole('link', { name: 'Workflows' }).first().click();
    await page.getByTestId('workflow-row').first().waitFor();
    await expectAccessible(page, 'the workflows list');
    expectNoErrors(tab.watch);
  });

  it('offers the 20 newest versions, loads older ones on request, and shows an old version opened by its URL', async () => {
    const id = await createWorkflow(api, signupDefinition(uniqueId('signup')));
    for (let i = 2; i <= 24; i++)
      await api.put(`/v1/workflows/${id}`, signupDefinition(id, `Hello ${i}`)).expect(200);
    tab = await openSignedIn(harness, key, { path: `/workflows/${id}` });
    const { page } = tab;
    const picker = page.getByLabel('Version', { exact: true });
    await page.getByText('24 of 24').waitFor();
    const versions = async () =>
      (await picker.locator('option').allTextContents()).map((text) =>
        Number(/Version (\d+)/.exec(text)![1]),
      );
    expect(await versions()).to.deep.equal(Array.from({ length: 20 }, (_, i) => 24 - i));
    await page.getByRole('button', { name: 'Load older versions' }).click();
    await picker.locator('option[value="1"]').waitFor({ state: 'attached' });
    expect(await versions()).to.deep.equal(Array.from({ length: 24 }, (_, i) => 24 - i));
    expect(await page.getByRole('button', { name: 'Load older versions' }).count()).to.equal(0);
    await picker.selectOption('2');
    await page.getByText('2 of 24').waitFor();

    await page.goto(`${harness.service.url}/workflows/${id}?version=3`);
    await page.getByText('3 of 24').waitFor();
    expect(await picker.inputValue()).to.equal('3');
    await expectAccessible(page, 'a workflow with older versions to load');
    expectNoErrors(tab.watch);
  });

  it('starts a run from the form generated from input_schema, checked first, and follows it to success', async () => {
    const id = await createWorkflow(api, signupDefinition(uniqueId('signup')));
    tab = await openSignedIn(harness, key, { path: `/workflows/${id}` });
    const { page } = tab;
    await page.getByRole('heading', { name: /Start a run/ }).waitFor();
    // A field per property: text, enum, integer, boolean; an array as JSON.
    await page.getByLabel('customer').fill('Ada');
    expect(await page.getByLabel('plan').evaluate((el) => el.tagName)).to.equal('SELECT');
    await page.getByLabel('trial').check();
    await page.getByLabel('tags (JSON)').fill('["vip"]');
    await page.getByRole('button', { name: 'Start run' }).click();
    const problems = page.getByRole('alert');
    await problems.waitFor();
    const text = await problems.textContent();
    expect(text).to.include('/plan').and.include('/seats');

    await page.getByLabel('plan').selectOption('pro');
    await page.getByLabel('seats').fill('3');
    await expectAccessible(page, 'the run form');
    await page.getByRole('button', { name: 'Start run' }).click();
    await page.waitForURL(/\/runs\/ex_/);
    await page.locator('.page-head .badge', { hasText: 'success' }).waitFor({ timeout: 30_000 });
    const executionId = decodeURIComponent(page.url().split('/runs/')[1]!);
    const done = await waitForExecution(api, executionId);
    expect(done.steps[0]!.input).to.deep.equal({
      customer: 'Ada',
      plan: 'pro',
      seats: 3,
      trial: true,
      tags: ['vip'],
    });
    expect(done.steps.find((s) => s.id === 'greet')!.output).to.deep.equal({
      message: 'Hello Ada',
      seats: 3,
    });
    expectNoErrors(tab.watch);
  });
});
