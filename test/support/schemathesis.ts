/**
 * Schemathesis, the independent OpenAPI fuzzer test/integration/openapi-fuzz.test.ts runs against the
 * service: found in .tools or installed there from PyPI on first use, like the Temporal CLI
 * (platform/temporal/cli.ts). A virtual environment in .tools/schemathesis when Python can make one, else
 * `pip install --target .tools/schemathesis-pip`; never system-wide. The version is pinned, so every run
 * (and CI) fuzzes with the same generator.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { toolsDirectory } from '../../platform/paths';

const run = promisify(execFile);

/** The pinned release (a 4.x: the CLI, the config file and the hooks the test uses are 4.x's). */
export const SCHEMATHESIS_VERSION = '4.32.5';

const VENV_DIR = path.join(toolsDirectory, 'schemathesis');
const VENV_PYTHON = path.join(VENV_DIR, 'bin', 'python3');
const TARGET_DIR = path.join(toolsDirectory, 'schemathesis-pip');
const LOCK_DIR = path.join(toolsDirectory, 'schemathesis.lock');

/** How to start Schemathesis: `command ...args <schemathesis arguments>` with `env` added. */
export interface SchemathesisCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
  version: string;
}

const venvCommand = (): SchemathesisCommand => ({
  command: VENV_PYTHON,
  args: ['-m', 'schemathesis.cli'],
  env: {},
  version: SCHEMATHESIS_VERSION,
});

const targetCommand = (): SchemathesisCommand => ({
  command: 'python3',
  args: ['-m', 'schemathesis.cli'],
  env: { PYTHONPATH: TARGET_DIR, PYTHONNOUSERSITE: '1' },
  version: SCHEMATHESIS_VERSION,
});

async function isPinnedSchemathesis(candidate: SchemathesisCommand): Promise<boolean> {
  try {
    const { stdout } = await run(candidate.command, [...candidate.args, '--version'], {
      timeout: 60_000,
      env: { ...process.env, ...candidate.env },
    });
    return stdout.includes(`version ${SCHEMATHESIS_VERSION}`);
  } catch {
    return false;
  }
}

async function pip(python: string, args: string[]): Promise<void> {
  await run(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', ...args], {
    timeout: 10 * 60_000,
    maxBuffer: 16 * 1024 * 1024,
  });
}

/** One installer at a time (two test processes starting together); a lock older than 15 min is stale. */
async function withInstallLock<T>(work: () => Promise<T>): Promise<T> {
  fs.mkdirSync(toolsDirectory, { recursive: true });
  const deadline = Date.now() + 15 * 60_000;
  for (;;) {
    try {
      fs.mkdirSync(LOCK_DIR);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const age = Date.now() - fs.statSync(LOCK_DIR, { throwIfNoEntry: false })!.mtimeMs;
      if (age > 15 * 60_000 || Date.now() > deadline) fs.rmSync(LOCK_DIR, { recursive: true, force: true });
      else await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
  try {
    return await work();
  } finally {
    fs.rmSync(LOCK_DIR, { recursive: true, force: true });
  }
}

async function installInVenv(): Promise<SchemathesisCommand> {
  if (!fs.existsSync(VENV_PYTHON)) {
    fs.rmSync(VENV_DIR, { recursive: true, force: true });
    await run('python3', ['-m', 'venv', VENV_DIR], { timeout: 5 * 60_000 });
  }
  await pip(VENV_PYTHON, [`schemathesis==${SCHEMATHESIS_VERSION}`]);
  const command = venvCommand();
  if (!(await isPinnedSchemathesis(command)))
    throw new Error(
      `installed, but ${VENV_PYTHON} -m schemathesis.cli --version does not say ${SCHEMATHESIS_VERSION}`,
    );
  return command;
}

async function installWithTarget(): Promise<SchemathesisCommand> {
  // A private folder, then a rename: a half-done install is never mistaken for a working one.
  const staging = fs.mkdtempSync(path.join(toolsDirectory, 'schemathesis-pip-'));
  try {
    await pip('python3', ['--target', staging, `schemathesis==${SCHEMATHESIS_VERSION}`]);
    fs.rmSync(TARGET_DIR, { recursive: true, force: true });
    fs.renameSync(staging, TARGET_DIR);
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
  const command = targetCommand();
  if (!(await isPinnedSchemathesis(command)))
    throw new Error(`installed into ${TARGET_DIR}, but python3 -m schemathesis.cli does not run from there`);
  return command;
}

/**
 * A working Schemathesis at the pinned version: the one installed earlier into .tools, else a fresh
 * install from PyPI (about 30 MB, once). Throws saying what is missing when Python or pip is.
 */
export async function ensureSchemathesis(
  log: (line: string) => void = () => undefined,
): Promise<SchemathesisCommand> {
  for (const candidate of [venvCommand(), targetCommand()]) {
    if (await isPinnedSchemathesis(candidate)) return candidate;
  }
  try {
    await run('python3', ['-m', 'pip', '--version'], { timeout: 60_000 });
  } catch (error) {
    throw new Error(
      'The OpenAPI fuzz test needs Schemathesis, installed from PyPI with Python 3 and pip, and ' +
        `\`python3 -m pip --version\` failed (${(error as Error).message.split('\n')[0]}). Install Python 3 with pip ` +
        `(e.g. apt-get install python3-pip python3-venv), or install schemathesis==${SCHEMATHESIS_VERSION} into ` +
        `${VENV_DIR} yourself (python3 -m venv ${VENV_DIR} && ${VENV_DIR}/bin/pip install schemathesis==${SCHEMATHESIS_VERSION}).`,
    );
  }
  return withInstallLock(async () => {
    // Another process may have installed it while this one waited for the lock.
    for (const candidate of [venvCommand(), targetCommand()]) {
      if (await isPinnedSchemathesis(candidate)) return candidate;
    }
    log(
      `Schemathesis not found: installing schemathesis==${SCHEMATHESIS_VERSION} from PyPI into ${VENV_DIR} (once)`,
    );
    const problems: string[] = [];
    try {
      return await installInVenv();
    } catch (error) {
      problems.push(`python3 -m venv + pip install: ${lastLines(error)}`);
    }
    log(`No virtual environment (${problems[0]}); trying pip install --target ${TARGET_DIR}`);
    try {
      return await installWithTarget();
    } catch (error) {
      problems.push(`pip install --target: ${lastLines(error)}`);
    }
    throw new Error(
      `Schemathesis ${SCHEMATHESIS_VERSION} could not be installed from PyPI:\n  ${problems.join('\n  ')}`,
    );
  });
}

function lastLines(error: unknown): string {
  const err = error as Error & { stderr?: string };
  return (err.stderr?.trim() || err.message).split('\n').slice(-3).join(' ');
}
