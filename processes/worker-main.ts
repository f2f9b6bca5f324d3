/** Production worker process (no API). Needs TEMPORAL_ADDRESS and DATABASE_URL (shared with the API). */
import { failStart, loadConfigOrExit, processLogger, stopOnSignals } from './process-lifecycle';
import { startRuntime } from './runtime';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = processLogger(config, 'worker');
  if (!config.secretsKey) {
    // Processes that share a database must share the key that seals its secrets.
    failStart(
      logger,
      new Error('SECRETS_KEY must be set when the API and the worker run as separate processes.'),
    );
  }
  if (!config.temporal.address || !config.databaseUrl) {
    failStart(
      logger,
      new Error(
        'The worker process needs TEMPORAL_ADDRESS and DATABASE_URL (use `npm start` for the all-in-one embedded mode).',
      ),
    );
  }
  const runtime = await startRuntime({ config, logger, api: false, worker: true }).catch((error: unknown) =>
    failStart(logger, error),
  );
  stopOnSignals(runtime, logger);
}

void main();
