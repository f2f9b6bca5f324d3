/**
 * Keeps the service process running in the embedded setup (`npm start`): the supervisor owns the
 * Temporal dev server and runs the service (API + worker) as a child process, which it restarts, with a
 * growing delay, whenever it dies unexpectedly — for example a worker aborted by the runtime. Runs and
 * events live in Temporal and the database, so a restart loses nothing; a run whose workflow task keeps
 * crashing the worker is terminated at the next start (see platform/temporal/crash-loop.ts).
 *
 * In production the API and worker processes are restarted by whatever runs them (docker-compose's
 * `restart:`, Kubernetes); the same crash-loop check runs at every worker start.
 */
import { fork, type ChildProcess } from 'node:child_process';
import type { Logger } from '../platform/logger';

export interface SupervisorOptions {
  /** The compiled entry point of the service process. */
  entry: string;
  /** Environment of the service process, over this process's. */
  env: Record<string, string>;
  /** Node and V8 options of the service process, after this process's own. */
  nodeOptions?: string[];
  logger: Logger;
  /** Called each time the service process reports it is ready (its first start and every restart). */
  onReady?: (message: ReadyMessage) => void;
  /** Receives the service process's output instead of this process's stdout and stderr (tests). */
  onOutput?: (text: string) => void;
  /** First restart delay, doubled at each restart in a row up to `maxDelayMs`. @default 1000 */
  initialDelayMs?: number;
  /** @default 30000 */
  maxDelayMs?: number;
  /** A process that ran this long without dying restarts after the initial delay again. @default 60000 */
  stableAfterMs?: number;
}

/** What the service process sends its supervisor once it serves. */
export interface ReadyMessage {
  type: 'ready';
  port: number | null;
}

export interface Supervisor {
  /** Restarts so far. */
  readonly restarts: number;
  /** Resolves when the service process first reports ready; rejects if it exits before that. */
  readonly firstReady: Promise<ReadyMessage>;
  /** Stops the service process (SIGTERM, then SIGKILL after `graceMs`) and does not restart it. */
  stop(graceMs?: number): Promise<void>;
}

export function superviseService(options: SupervisorOptions): Supervisor {
  const initialDelayMs = options.initialDelayMs ?? 1000;
  const maxDelayMs = options.maxDelayMs ?? 30_000;
  const stableAfterMs = options.stableAfterMs ?? 60_000;
  const { logger } = options;
  let child: ChildProcess | undefined;
  let stopping = false;
  let restarts = 0;
  let delayMs = initialDelayMs;
  let restartTimer: NodeJS.Timeout | undefined;
  let ready = false;
  let resolveFirst!: (message: ReadyMessage) => void;
  let rejectFirst!: (error: Error) => void;
  const firstReady = new Promise<ReadyMessage>((resolve, reject) => {
    resolveFirst = resolve;
    rejectFirst = reject;
  });
  firstReady.catch(() => undefined);

  const start = (): void => {
    const startedAt = Date.now();
    const process_ = fork(options.entry, [], {
      execArgv: [...process.execArgv, ...(options.nodeOptions ?? [])],
      env: { ...process.env, ...options.env },
      stdio: options.onOutput ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child = process_;
    for (const stream of [process_.stdout, process_.stderr])
      stream?.on('data', (chunk: Buffer) => options.onOutput?.(chunk.toString('utf8')));
    process_.on('message', (message: unknown) => {
      if ((message as ReadyMessage | null)?.type !== 'ready') return;
      ready = true;
      resolveFirst(message as ReadyMessage);
      options.onReady?.(message as ReadyMessage);
    });
    process_.once('exit', (code, signal) => {
      child = undefined;
      if (stopping) return;
      const how = signal ? `signal ${signal}` : `exit code ${code}`;
      if (!ready) {
        // It never came up: a configuration or startup error, which a restart would only repeat.
        rejectFirst(new Error(`The service process exited at start (${how}); see its log above.`));
        return;
      }
      if (Date.now() - startedAt >= stableAfterMs) delayMs = initialDelayMs;
      restarts += 1;
      logger.error(
        { exit: how, restart: restarts, delayMs },
        `The service process died (${how}); restarting it in ${delayMs / 1000} s (restart ${restarts})`,
      );
      restartTimer = setTimeout(start, delayMs);
      delayMs = Math.min(delayMs * 2, maxDelayMs);
    });
  };
  start();

  return {
    get restarts() {
      return restarts;
    },
    firstReady,
    async stop(graceMs = 15_000) {
      stopping = true;
      clearTimeout(restartTimer);
      const running = child;
      if (!running || running.exitCode !== null || running.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
      running.kill('SIGTERM');
      const timer = setTimeout(() => running.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** True in a process the supervisor started (its IPC channel is open). */
export function isSupervised(): boolean {
  return process.send !== undefined;
}

/**
 * In the service process: tells the supervisor it is ready, and stops when the supervisor goes away
 * (its IPC channel closes), so a killed supervisor never leaves a service running on its own.
 */
export function reportToSupervisor(port: number | null, stop: () => void): void {
  if (!process.send) return;
  const message: ReadyMessage = { type: 'ready', port };
  process.send(message);
  process.once('disconnect', stop);
}
