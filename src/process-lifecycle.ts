/** Entrypoint plumbing: config errors as readable messages, and a clean stop on Ctrl-C / SIGTERM. */
import { ConfigError, loadConfig, type Config } from './config';
import { createLogger, type Logger } from './logger';
import type { Runtime } from './runtime';

export function loadConfigOrExit(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
}

export function processLogger(config: Config, role: string): Logger {
  return createLogger(config.logLevel, { role });
}

/**
 * Runs `stop` on the first SIGINT/SIGTERM, then exits (0, or 1 if it failed); a second signal exits at
 * once. Returns whether a stop has begun.
 */
export function exitOnSignals(logger: Logger, stop: () => Promise<void>): () => boolean {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, 'Second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'Stopping (press Ctrl-C again to force)');
    stop().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'Error while stopping');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return () => stopping;
}

/** Stops the runtime on the first SIGINT/SIGTERM (exitOnSignals), and exits if the worker stops by itself. */
export function stopOnSignals(runtime: Runtime, logger: Logger): void {
  const stopping = exitOnSignals(logger, () => runtime.stop());
  void runtime.workerStopped.then(() => {
    if (stopping()) return;
    logger.fatal('The worker stopped unexpectedly; exiting so a supervisor can restart the process');
    void runtime.stop().finally(() => process.exit(1));
  });
}

export function failStart(logger: Logger, error: unknown): never {
  logger.fatal({ err: error }, (error as Error).message ?? 'Start failed');
  process.exit(1);
}
