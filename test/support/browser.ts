/**
 * Headless Chromium for browser tests: the machine's own Chromium driven by playwright-core, so nothing
 * downloads a browser build. Found as CHROMIUM_PATH, else `chromium`, `chromium-browser`, `google-chrome`
 * (or `google-chrome-stable`) on PATH; when there is none on a Debian-like system, installed with
 * `apt-get install chromium` (as root, or through `sudo -n`).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

const CANDIDATES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];

const HOW_TO_INSTALL =
  'Install Chromium (Debian/Ubuntu: `sudo apt-get install chromium`) or set CHROMIUM_PATH to a Chromium ' +
  'or Chrome executable.';

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** CHROMIUM_PATH, or the first Chromium or Chrome on PATH; undefined when there is none. */
export function findChromium(): string | undefined {
  const configured = process.env['CHROMIUM_PATH'];
  if (configured) {
    if (!isExecutable(configured)) throw new Error(`CHROMIUM_PATH=${configured} is not an executable file.`);
    return configured;
  }
  const dirs = (process.env['PATH'] ?? '').split(path.delimiter).filter(Boolean);
  for (const name of CANDIDATES) {
    for (const dir of dirs) {
      const file = path.join(dir, name);
      if (isExecutable(file)) return file;
    }
  }
  return undefined;
}

const isRoot = (): boolean => process.getuid?.() === 0;

/** How to run apt-get: directly as root, through sudo when it needs no password; undefined otherwise. */
function privilegedRunner(): string[] | undefined {
  if (isRoot()) return [];
  const sudo = spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' });
  return sudo.status === 0 ? ['sudo', '-n'] : undefined;
}

function run(command: string[]): void {
  process.stderr.write(`  $ ${command.join(' ')}\n`);
  const [file, ...args] = command as [string, ...string[]];
  // Progress goes to the terminal as it comes: an install takes a minute or two.
  const result = spawnSync(file, args, {
    stdio: ['ignore', process.stderr, process.stderr],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`\`${command.join(' ')}\` exited with ${result.status}.`);
}

/** The Chromium to launch, installed with apt-get first when the machine has none. */
export function ensureChromium(): string {
  const found = findChromium();
  if (found) return found;
  if (!isExecutable('/usr/bin/apt-get')) {
    throw new Error(`The browser tests need Chromium, and none was found. ${HOW_TO_INSTALL}`);
  }
  const runner = privilegedRunner();
  if (!runner) {
    throw new Error(
      `The browser tests need Chromium; none was found, and installing it needs root (or sudo without a ` +
        `password). ${HOW_TO_INSTALL}`,
    );
  }
  process.stderr.write('Chromium not found: installing it with apt-get for the browser tests.\n');
  run([...runner, 'apt-get', 'update']);
  run([...runner, 'apt-get', 'install', '-y', 'chromium']);
  const installed = findChromium();
  if (!installed) throw new Error(`apt-get installed chromium, yet it is not on PATH. ${HOW_TO_INSTALL}`);
  process.stderr.write(`Chromium installed: ${installed}\n`);
  return installed;
}

/** A headless Chromium (one per test file: launching costs about a second). */
export async function launchBrowser(): Promise<Browser> {
  const executablePath = ensureChromium();
  return chromium.launch({
    executablePath,
    headless: true,
    // Chromium refuses to start its sandbox as root; containers often have a tiny /dev/shm.
    args: [...(isRoot() ? ['--no-sandbox'] : []), '--disable-dev-shm-usage'],
  });
}

/** What a page did that a test may want to refuse: errors, and requests to anywhere but its own origin. */
export interface PageWatch {
  consoleErrors: string[];
  pageErrors: string[];
  /** Every request (of the page, its frames and workers) whose origin is not `origin`; data: is local. */
  foreignRequests: string[];
}

/** Starts recording a context's console errors, uncaught page errors and requests that leave `origin`. */
export function watchContext(context: BrowserContext, origin: string): PageWatch {
  const watch: PageWatch = { consoleErrors: [], pageErrors: [], foreignRequests: [] };
  const watchPage = (page: Page) => {
    page.on('console', (message) => {
      if (message.type() === 'error') watch.consoleErrors.push(message.text());
    });
    page.on('pageerror', (error) => watch.pageErrors.push(error.message));
  };
  context.pages().forEach(watchPage);
  context.on('page', watchPage);
  context.on('request', (request) => {
    const url = request.url();
    if (url.startsWith('data:')) return;
    // A blob: URL's origin is the origin of the page that made it.
    if (new URL(url).origin !== origin) watch.foreignRequests.push(url);
  });
  return watch;
}
