/**
 * The start-up shared by the two processes of a split deployment (processes/api-main.ts,
 * processes/worker-main.ts): each runs one part of the runtime against a Temporal and a database it shares
 * with the other, so both need their addresses and the same SECRETS_KEY.
 */
import { failStart, loadConfigOrExit, processLogger, stopOnSignals } from './process-lifecycle';
import { startRuntime } from './runtime';

/** Which part of the runtime the process runs: its log role and the name its start errors give it. */
const PARTS = {
  api: { title: 'API', api: true, worker: false },
  worker: { title: 'worker', api: false, worker: true },
} as const;

export async function startSplitProcess(part: keyof typeof PARTS): Promise<void> {
  const { title, api, worker } = PARTS[part];
  const config = loadConfigOrExit();
  const logger = processLogger(config, part);
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
        `The ${title} process needs TEMPORAL_ADDRESS and DATABASE_URL (use \`npm start\` for the all-in-one embedded mode).`,
      ),
    );
  }
  const runtime = await startRuntime({ config, logger, api, worker }).catch((error: unknown) =>
    failStart(logger, error),
  );
  stopOnSignals(runtime, logger);
}
