/**
 * `npm start`: the whole service in one process with embedded defaults — the Temporal dev server
 * (unless TEMPORAL_ADDRESS is set), the worker and the API, with PGlite (unless DATABASE_URL is set).
 */
import { failStart, loadConfigOrExit, processLogger, stopOnSignals } from './process-lifecycle';
import { listeningPort } from './net/listening-port';
import { startRuntime } from './runtime';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = processLogger(config, 'all-in-one');
  const runtime = await startRuntime({ config, logger, api: true, worker: true }).catch((error: unknown) =>
    failStart(logger, error),
  );
  stopOnSignals(runtime, logger);
  const port = runtime.server ? listeningPort(runtime.server) : config.port;
  const lines = [
    '',
    `  Switchyard is running.`,
    `  API:          http://127.0.0.1:${port}/v1   (OpenAPI: /v1/openapi.json)`,
    runtime.devServer?.uiUrl
      ? `  Temporal UI:  ${runtime.devServer.uiUrl}/namespaces/${config.temporal.namespace}/workflows`
      : undefined,
    `  Data:         ${config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : config.dataDir}`,
    `  An API key:   npm run admin -- create-key --workspace default --name me --scopes admin`,
    `  Stop:         Ctrl-C`,
    '',
  ].filter((line) => line !== undefined);
  process.stdout.write(`${lines.join('\n')}\n`);
}

void main();
