/** Production API process (no worker). Needs TEMPORAL_ADDRESS and, to share data with workers, DATABASE_URL. */
import { failStart, loadConfigOrExit, processLogger, stopOnSignals } from './process-lifecycle';
import { startRuntime } from './runtime';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = processLogger(config, 'api');
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
        'The API process needs TEMPORAL_ADDRESS and DATABASE_URL (use `npm start` for the all-in-one embedded mode).',
      ),
    );
  }
  const runtime = await startRuntime({ config, logger, api: true, worker: false }).catch((error: unknown) =>
    failStart(logger, error),
  );
  stopOnSignals(runtime, logger);
}

void main();
