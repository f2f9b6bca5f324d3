/**
 * The Temporal CLI dev server as a child process: a real Temporal server persisted in a SQLite file
 * under the data folder (so restarts keep every execution), with Temporal UI. Used by `npm start`, the
 * test suite and the benchmarks; production points TEMPORAL_ADDRESS at a real cluster instead.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../logger';
import { SEARCH_ATTRIBUTES } from '../../core/search-attributes';

export interface DevServerOptions {
  cliPath: string;
  /** Folder of the SQLite database and the server's log file. */
  dataDir: string;
  ip: string;
  port: number;
  /** 0 disables the UI. */
  uiPort: number;
  namespace: string;
  logger: Logger;
  /** How long to wait for the frontend to answer. */
  startTimeoutMs?: number;
  /** Dynamic config values besides ours (`key=value`). */
  dynamicConfig?: string[];
  /** Temporal UI decodes payloads through this codec server (`--ui-codec-endpoint`). */
  uiCodecEndpoint?: string | undefined;
  /**
   * The Go runtime's soft memory limit (`GOMEMLIMIT`) in MiB; 0 or unset leaves the environment's. Near
   * it the server collects garbage sooner instead of letting its heap double (docs/operations.md#memory).
   */
  memoryLimitMiB?: number;
}

/**
 * The dev server's memory limit in `npm start` and the bench's floors: under the onboard load it held the
 * server's peak near 380 MB (444 without) at the same CPU; 150 MiB saved more but cost 6–13 ms of its CPU
 * per run (docs/benchmarks.md#against-the-tight-floor-2026-11-27).
 */
export const DEFAULT_DEV_SERVER_MEMORY_LIMIT_MIB = 300;

/** The environment of the server's process: this one's, with the memory limit when one is set. */
export function devServerEnv(
  memoryLimitMiB: number | undefined,
  env: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  return memoryLimitMiB ? { ...env, GOMEMLIMIT: `${memoryLimitMiB}MiB` } : env;
}

export interface DevServer {
  address: string;
  uiUrl: string | undefined;
  logFile: string;
  process: ChildProcess;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

const SEARCH_ATTRIBUTE_TYPE_NAMES: Record<string, string> = {
  KEYWORD: 'Keyword',
  INT: 'Int',
  BOOL: 'Bool',
  TEXT: 'Text',
  DATETIME: 'Datetime',
  DOUBLE: 'Double',
  KEYWORD_LIST: 'KeywordList',
};

export function devServerArgs(options: Omit<DevServerOptions, 'logger' | 'cliPath'>): string[] {
  const args = [
    'server',
    'start-dev',
    '--db-filename',
    path.join(options.dataDir, 'temporal.db'),
    '--ip',
    options.ip,
    '--port',
    String(options.port),
    '--log-level',
    'warn',
    // WAL: many times the write throughput of the default journal, without losing committed work
    // when the process is killed.
    '--sqlite-pragma',
    'journal_mode=WAL',
    '--sqlite-pragma',
    'synchronous=NORMAL',
    // Execution lists go through visibility, rate-limited per namespace by default; lift it for one user.
    '--dynamic-config-value',
    'frontend.namespaceRPS.visibility=2000',
    '--dynamic-config-value',
    'frontend.namespaceBurstRatio.visibility=2',
    // Marks runs whose workflow tasks keep failing or timing out (TemporalReportedProblems, Temporal UI's
    // "Task Failures" view): how a worker finds the runs that crash it (temporal/crash-loop.ts).
    '--dynamic-config-value',
    'system.numConsecutiveWorkflowTaskProblemsToTriggerSearchAttribute=2',
    // Task queues dispatch round-robin between fairness keys (workspaces: core/fairness.ts), so one
    // workspace's backlog does not hold up another's tasks (docs/operations.md#fair-sharing-of-workers).
    '--dynamic-config-value',
    'matching.enableFairness=true',
  ];
  for (const value of options.dynamicConfig ?? []) args.push('--dynamic-config-value', value);
  if (options.uiPort > 0) {
    args.push('--ui-port', String(options.uiPort), '--ui-ip', options.ip);
    if (options.uiCodecEndpoint) args.push('--ui-codec-endpoint', options.uiCodecEndpoint);
  } else args.push('--headless');
  if (options.namespace !== 'default') args.push('--namespace', options.namespace);
  for (const key of SEARCH_ATTRIBUTES)
    args.push('--search-attribute', `${key.name}=${SEARCH_ATTRIBUTE_TYPE_NAMES[key.type]}`);
  return args;
}

const pidFile = (dataDir: string): string => path.join(dataDir, 'temporal-dev-server.pid');

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The command line of a live process (Linux /proc), to be sure a recorded pid is still our server. */
function commandLine(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

/** The dev server recorded in `dataDir` (its pid file), when that process still runs on the folder's database. */
export function liveDevServerPid(dataDir: string): number | undefined {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(pidFile(dataDir), 'utf8').trim());
  } catch {
    return undefined;
  }
  const dbFile = path.join(dataDir, 'temporal.db');
  return Number.isInteger(pid) && pid > 0 && isAlive(pid) && commandLine(pid).includes(dbFile)
    ? pid
    : undefined;
}

/**
 * A dev server whose parent was killed (SIGKILL, out of memory) outlives it and keeps the port and the
 * database file. The next start on the same data folder stops it first, so a crash never blocks a restart.
 */
async function stopLeftoverServer(dataDir: string, logger: Logger): Promise<void> {
  const pid = liveDevServerPid(dataDir);
  if (pid !== undefined) {
    logger.warn({ pid }, 'Stopping a Temporal dev server left over from a previous run on this data folder');
    process.kill(pid, 'SIGTERM');
    for (let waited = 0; isAlive(pid) && waited < 10_000; waited += 100)
      await new Promise((resolve) => setTimeout(resolve, 100));
    if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  }
  fs.rmSync(pidFile(dataDir), { force: true });
}

export async function startDevServer(options: DevServerOptions): Promise<DevServer> {
  fs.mkdirSync(options.dataDir, { recursive: true });
  await stopLeftoverServer(options.dataDir, options.logger);
  const logFile = path.join(options.dataDir, 'temporal-dev-server.log');
  const log = fs.openSync(logFile, 'a');
  const address = `${options.ip}:${options.port}`;
  options.logger.info(
    { address, dataDir: options.dataDir, memoryLimitMiB: options.memoryLimitMiB || undefined },
    'Starting the Temporal dev server',
  );
  const [command, args] = tiedToThisProcess(options.cliPath, devServerArgs(options));
  const child = spawn(command, args, {
    stdio: ['ignore', log, log],
    env: devServerEnv(options.memoryLimitMiB),
  });
  fs.closeSync(log);
  if (child.pid !== undefined) fs.writeFileSync(pidFile(options.dataDir), String(child.pid));

  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exitPromise = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = { code, signal };
      resolve();
    });
  });
  child.once('error', (error) => options.logger.error({ err: error }, 'Temporal dev server failed to start'));

  const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
  for (;;) {
    if (exited)
      throw new Error(
        `The Temporal dev server exited at start (${describeExit(exited)}). ${hint(options, logFile)}`,
      );
    if (await frontendAnswers(options.cliPath, address)) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(
        `The Temporal dev server did not answer on ${address} in time. ${hint(options, logFile)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const uiUrl =
    options.uiPort > 0
      ? `http://${options.ip === '0.0.0.0' ? '127.0.0.1' : options.ip}:${options.uiPort}`
      : undefined;
  options.logger.info({ address, ui: uiUrl, pid: child.pid }, 'Temporal dev server is up');

  return {
    address,
    uiUrl,
    logFile,
    process: child,
    async stop(graceMs = 10_000) {
      if (exited) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exitPromise;
      clearTimeout(timer);
      fs.rmSync(pidFile(options.dataDir), { force: true });
    },
  };
}

/** util-linux's setpriv, which can ask the kernel to signal a child when its parent dies (Linux). */
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((candidate) => fs.existsSync(candidate));

/**
 * The command line that starts the server so that it stops when this process dies, however it dies
 * (SIGKILL, an abort): otherwise an orphaned dev server keeps its port and database file, and competes
 * with the next run. Where setpriv is missing, stopLeftoverServer still cleans up at the next start.
 */
function tiedToThisProcess(command: string, args: string[]): [string, string[]] {
  return SETPRIV ? [SETPRIV, ['--pdeathsig', 'TERM', '--', command, ...args]] : [command, args];
}

/**
 * Whether the frontend serves yet, asked with the CLI's own health check rather than a gRPC client: the
 * supervisor of `npm start` starts the server, and loading the Temporal client there only for this would
 * keep tens of MB in it for as long as it runs.
 */
function frontendAnswers(cliPath: string, address: string): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(
      cliPath,
      ['operator', 'cluster', 'health', '--address', address],
      { timeout: 2_000 },
      (error, stdout) => resolve(!error && stdout.includes('SERVING')),
    );
  });
}

function describeExit(exit: { code: number | null; signal: NodeJS.Signals | null }): string {
  return exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`;
}

function hint(options: DevServerOptions, logFile: string): string {
  let tail = '';
  try {
    tail = fs.readFileSync(logFile, 'utf8').split('\n').filter(Boolean).slice(-5).join('\n    ');
  } catch {
    // no log yet
  }
  return (
    `Is port ${options.port} (TEMPORAL_DEV_PORT) or ${options.uiPort} (TEMPORAL_UI_PORT) already in use? ` +
    `Log: ${logFile}${tail ? `\n    ${tail}` : ''}`
  );
}
