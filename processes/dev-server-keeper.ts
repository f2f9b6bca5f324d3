/**
 * Keeps the embedded Temporal dev server of `npm start` running: when it exits while the supervisor is not
 * stopping (killed by the kernel for memory, a stray signal, a crash), it is started again on the same ports
 * and data folder, after a delay that doubles while starts keep failing. Its SQLite file holds every run, so
 * the runs go on where they were; the service process, which loses its connection meanwhile, is restarted
 * by its own supervisor (supervisor.ts) and finds the server at the same address. Without this, the service
 * would restart against a server that never came back, for as long as `npm start` ran.
 */
import type { Logger } from '../platform/logger';
import type { DevServer } from '../platform/temporal/dev-server';

export interface DevServerKeeperOptions {
  /** Starts the server (the first time too): startEmbeddedTemporal with the supervisor's configuration. */
  start: () => Promise<DevServer>;
  logger: Logger;
  /** First delay before starting again, doubled after each failed start up to `maxDelayMs`. @default 1000 */
  initialDelayMs?: number;
  /** @default 30000 */
  maxDelayMs?: number;
}

export interface DevServerKeeper {
  /** The server running now (the last one started). */
  readonly current: DevServer;
  /** Times the server was started again after an unexpected exit. */
  readonly restarts: number;
  /** Stops the server and does not start it again. */
  stop(): Promise<void>;
}

export async function keepDevServerRunning(options: DevServerKeeperOptions): Promise<DevServerKeeper> {
  const initialDelayMs = options.initialDelayMs ?? 1000;
  const maxDelayMs = options.maxDelayMs ?? 30_000;
  const { logger } = options;
  let current = await options.start();
  let stopping = false;
  let restarts = 0;
  let timer: NodeJS.Timeout | undefined;

  const startAgain = (delayMs: number): void => {
    timer = setTimeout(() => {
      timer = undefined;
      if (stopping) return;
      options.start().then(
        (server) => {
          if (stopping) {
            void server.stop();
            return;
          }
          current = server;
          restarts += 1;
          logger.info({ address: server.address, restarts }, 'The Temporal dev server is serving again');
          watch(server);
        },
        (error: unknown) => {
          const next = Math.min(delayMs * 2, maxDelayMs);
          logger.error(
            { err: error, delayMs: next },
            `The Temporal dev server did not start again; trying again in ${Math.round(next / 1000)} s`,
          );
          startAgain(next);
        },
      );
    }, delayMs);
  };

  const watch = (server: DevServer): void => {
    server.process.once('exit', (code, signal) => {
      if (stopping || server !== current) return;
      logger.error(
        { code, signal, delayMs: initialDelayMs, log: server.logFile },
        `The Temporal dev server stopped (${signal ? `signal ${signal}` : `exit code ${code}`}); starting it again`,
      );
      startAgain(initialDelayMs);
    });
  };
  watch(current);

  return {
    get current() {
      return current;
    },
    get restarts() {
      return restarts;
    },
    async stop() {
      stopping = true;
      clearTimeout(timer);
      await current.stop();
    },
  };
}
