/** Entrypoint plumbing: config errors as readable messages, and a clean stop on Ctrl-C / SIGTERM. */
import { ConfigError, loadConfig, type Config } from '../platform/config';
import { createLogger, type Logger } from '../platform/logger';
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
  return createLogger(config.logLevel, { role }, { format: config.logFormat });
}

/** A stop that signals (or the caller) start once. */
export interface StopTrigger {
  /** Whether a stop has begun. */
  readonly stopping: boolean;
  /** Begins the stop, as a first signal would; nothing when one has begun. */
  request(reason: string): void;
}

/**
 * Runs `stop` on the first of `signals`, then exits (0, or 1 if it failed); a second signal exits at
 * once.
 */
export function exitOnSignals(
  logger: Logger,
  stop: () => Promise<void>,
  signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM'],
): StopTrigger {
  let stopping = false;
  const begin = (reason: string) => {
    stopping = true;
    logger.info({ reason }, 'Stopping (press Ctrl-C again to force)');
    stop().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'Error while stopping');
        process.exit(1);
      },
    );
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, 'Second signal: exiting now');
      process.exit(1);
    }
    begin(signal);
  };
  for (const signal of signals) process.on(signal, onSignal);
  return {
    get stopping() {
      return stopping;
    },
    request: (reason) => {
      if (!stopping) begin(reason);
    },
  };
}

/**
 * Stops the runtime on the first SIGINT/SIGTERM (exitOnSignals), and exits if the worker stops by itself.
 * A supervised process stops on SIGTERM only: a Ctrl-C in a terminal reaches the whole process group,
 * and the supervisor relays it as a SIGTERM.
 */
export function stopOnSignals(runtime: Runtime, logger: Logger, supervised = false): StopTrigger {
  if (supervised) process.on('SIGINT', () => undefined);
  const trigger = exitOnSignals(logger, () => runtime.stop(), supervised ? ['SIGTERM'] : undefined);
  void runtime.workerStopped.then(() => {
    if (trigger.stopping) return;
    logger.fatal('The worker stopped unexpectedly; exiting so a supervisor can restart the process');
    void runtime.stop().finally(() => process.exit(1));
  });
  return trigger;
}

export function failStart(logger: Logger, error: unknown): never {
  logger.fatal({ err: error }, (error as Error).message ?? 'Start failed');
  process.exit(1);
}
