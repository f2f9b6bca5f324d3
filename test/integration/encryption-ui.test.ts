/**
 * Temporal UI with encrypted step data (docs/operations.md#temporal-ui): a browser signed in to the console
 * with an operator key, whose Temporal UI is set to the API's codec endpoint with cross-origin credentials
 * (what an operator sets in the UI's codec settings, or TEMPORAL_CODEC_ENDPOINT and
 * TEMPORAL_CODEC_INCLUDE_CREDENTIALS on its server), shows a run's input decoded; a browser that is not
 * signed in sees only ciphertext.
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser } from '../support/browser';
import { createWorkflow, definition, rulesStep, trigger, waitForExecution } from '../support/fixtures';
import { sharedTemporal, startTestService, type TestService } from '../support/stack';
import { waitFor } from '../support/wait';

describe('Temporal UI with encrypted step data @integration', function () {
  this.timeout(180_000);
  let service: TestService;
  let browser: Browser;
  let uiUrl: string;
  const customer = `Quillon-${randomBytes(5).toString('hex')}`;
  let executionId: string;

  before(async () => {
    uiUrl = (await sharedTemporal()).devServer.uiUrl!;
    service = await startTestService({
      env: {
        PAYLOAD_ENCRYPTION_KEYS: `ui:${randomBytes(32).toString('base64')}`,
        TEMPORAL_UI_URL: uiUrl,
      },
    });
    browser = await launchBrowser();
    // A one-step definition: the input's customer falls within the lines the UI's code view renders.
    const workflowId = await createWorkflow(
      service.api(),
      definition([rulesStep('greet', [{ when: 'true', output: 'Hello {{ input.customer }}' }])]),
    );
    executionId = await trigger(service.api(), workflowId, { customer });
    expect((await waitForExecution(service.api(), executionId)).status).to.equal('success');
  });
  after(async () => {
    await browser?.close();
    await service?.stop();
  });

  /** A browser whose Temporal UI decodes through the service's codec endpoint, with credentials. */
  async function uiContext(): Promise<BrowserContext> {
    const context = await browser.newContext({ viewport: { width: 1600, height: 1000 } });
    // The UI's own codec settings (its "Codec Server" dialog keeps them in localStorage).
    await context.addInitScript(
      ({ endpoint }) => {
        const storage = (globalThis as unknown as { localStorage: { setItem(k: string, v: string): void } })
          .localStorage;
        storage.setItem('endpoint', JSON.stringify(endpoint));
        storage.setItem('includeCredentials', 'true');
        storage.setItem('passAccessToken', 'false');
        storage.setItem('overrideRemoteCodecConfiguration', 'true');
      },
      { endpoint: `${service.url}/codec` },
    );
    return context;
  }

  async function runPageText(page: Page): Promise<string> {
    await page.goto(`${uiUrl}/namespaces/default/workflows/${executionId}`);
    await page.getByRole('heading', { name: executionId }).waitFor({ timeout: 60_000 });
    await page.getByText('Completed', { exact: true }).first().waitFor();
    return page.content();
  }

  it('shows the decoded input to a browser signed in to the console with an operator key', async () => {
    const context = await uiContext();
    try {
      const signIn = await context.request.post(`${service.url}/console/session`, {
        data: { api_key: service.adminKey },
      });
      expect(signIn.status()).to.equal(201);
      const page = await context.newPage();
      const codecCalls: number[] = [];
      page.on('response', (response) => {
        if (response.url().startsWith(`${service.url}/codec/`)) codecCalls.push(response.status());
      });
      await runPageText(page);
      await waitFor(async () => ((await page.innerText('main')).includes(customer) ? true : undefined), {
        timeoutMs: 30_000,
        what: "the run's decoded input in Temporal UI",
      });
      expect(codecCalls.length, 'codec requests').to.be.greaterThan(0);
      expect(codecCalls.every((status) => status === 200)).to.equal(true);
    } finally {
      await context.close();
    }
  });

  it('shows only ciphertext to a browser that is not signed in', async () => {
    const context = await uiContext();
    try {
      const page = await context.newPage();
      const codecCalls: number[] = [];
      page.on('response', (response) => {
        if (response.url().startsWith(`${service.url}/codec/`)) codecCalls.push(response.status());
      });
      await runPageText(page);
      await waitFor(async () => (codecCalls.length > 0 ? true : undefined), {
        timeoutMs: 30_000,
        what: 'a codec request from Temporal UI',
      });
      expect(codecCalls.every((status) => status === 401)).to.equal(true);
      expect(await page.innerText('main')).not.to.contain(customer);
      expect(await page.content()).not.to.contain(customer);
    } finally {
      await context.close();
    }
  });
});
