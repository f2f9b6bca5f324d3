/**
 * Browser tests of the workspace console (docs/console.md): the real service (API, worker, Temporal dev
 * server, PGlite) driven through headless Chromium. One service and one browser per test file; a fresh
 * browser context (cookies, storage) per test.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { projectRoot } from '../../platform/paths';
import { launchBrowser, watchContext, type PageWatch } from '../support/browser';
import { startTestService, type TestService, type TestServiceOptions } from '../support/stack';

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

export interface ConsoleHarness {
  service: TestService;
  browser: Browser;
  close(): Promise<void>;
}

export async function startConsoleHarness(options: TestServiceOptions = {}): Promise<ConsoleHarness> {
  const service = await startTestService(options);
  let browser: Browser;
  try {
    browser = await launchBrowser();
  } catch (error) {
    await service.stop();
    throw error;
  }
  return {
    service,
    browser,
    close: async () => {
      await browser.close();
      await service.stop();
    },
  };
}

export interface ConsoleTab {
  context: BrowserContext;
  page: Page;
  watch: PageWatch;
  close(): Promise<void>;
}

/** A new browser context on the console's sign-in page. */
export async function openConsole(
  harness: ConsoleHarness,
  options: { viewport?: { width: number; height: number }; path?: string } = {},
): Promise<ConsoleTab> {
  const context = await harness.browser.newContext({ viewport: options.viewport ?? DESKTOP });
  const watch = watchContext(context, harness.service.url);
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  await page.goto(`${harness.service.url}${options.path ?? '/'}`);
  return { context, page, watch, close: () => context.close() };
}

/** Signs in through the form and waits for the shell. */
export async function signIn(page: Page, key: string): Promise<void> {
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('workspace').waitFor();
}

/** A signed-in console tab. */
export async function openSignedIn(
  harness: ConsoleHarness,
  key: string,
  options: { viewport?: { width: number; height: number }; path?: string } = {},
): Promise<ConsoleTab> {
  const tab = await openConsole(harness, { ...options, path: '/' });
  await signIn(tab.page, key);
  if (options.path && options.path !== '/') await tab.page.goto(`${harness.service.url}${options.path}`);
  return tab;
}

/**
 * The page made no console error, no uncaught error and no request outside the service. `allowed` lists
 * console messages a test provokes on purpose (the browser logs every 4xx answer as an error).
 */
export function expectNoErrors(watch: PageWatch, allowed: RegExp[] = []): void {
  const errors = watch.consoleErrors.filter((message) => !allowed.some((pattern) => pattern.test(message)));
  expect(errors, 'console errors').to.deep.equal([]);
  expect(watch.pageErrors, 'page errors').to.deep.equal([]);
  expect(watch.foreignRequests, 'requests leaving the service').to.deep.equal([]);
}

const axeSource = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/**
 * axe-core over the page as it is: no serious or critical violation of WCAG 2.1 A/AA and axe's best
 * practices. axe is evaluated through the DevTools protocol, which the page's CSP does not govern, so
 * the console's own policy stays as strict as it is.
 */
export async function expectAccessible(page: Page, what: string): Promise<void> {
  if (!(await page.evaluate('typeof window.axe !== "undefined"')))
    await page.evaluate(`${axeSource}\n;undefined`);
  const violations = await page.evaluate<AxeViolation[]>(`axe
    .run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } })
    .then((result) => result.violations.map((v) => ({
      id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' ')),
    })))`);
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(serious, `axe-core on ${what}:\n${JSON.stringify(serious, null, 2)}`).to.deep.equal([]);
}

/**
 * Where screenshots go: docs/images when UPDATE_SCREENSHOTS=1 (to commit them), a temporary folder
 * otherwise, so that a test run leaves the working tree as it was.
 */
export function screenshotPath(name: string): string {
  const dir =
    process.env['UPDATE_SCREENSHOTS'] === '1'
      ? path.join(projectRoot, 'docs', 'images')
      : fs.mkdtempSync(path.join(os.tmpdir(), 'sy-console-shots-'));
  fs.mkdirSync(dir, { recursive: true });
  return path.join(dir, name);
}
