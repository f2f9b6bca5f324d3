/**
 * `npm start`: the whole service with embedded defaults — the Temporal dev server (unless
 * TEMPORAL_ADDRESS is set) and, supervised, the service process (API + worker, processes/service-main.ts)
 * with PGlite (unless DATABASE_URL is set). The supervisor restarts the service process if it dies
 * (processes/supervisor.ts), and the dev server too (processes/dev-server-keeper.ts), and stops everything
 * on Ctrl-C.
 */
import path from 'node:path';
import { API_REFERENCE_PATH } from '../src/http/paths';
import type { DevServer } from '../platform/temporal/dev-server';
import { exitOnSignals, failStart, loadConfigOrExit, processLogger } from './process-lifecycle';
import { startEmbeddedTemporal } from './embedded-temporal';
import { keepDevServerRunning, type DevServerKeeper } from './dev-server-keeper';
import { superviseService, type ReadyMessage } from './supervisor';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = processLogger(config, 'supervisor');
  let devServer: DevServer | undefined;
  let keeper: DevServerKeeper | undefined;
  if (!config.temporal.address) {
    // Started again on the same ports and data whenever it exits unexpectedly (dev-server-keeper.ts).
    keeper = await keepDevServerRunning({
      start: () => startEmbeddedTemporal(config, logger),
      logger,
    }).catch((error: unknown) => failStart(logger, error));
    devServer = keeper.current;
  }
  let announced = false;
  const supervisor = superviseService({
    entry: path.join(__dirname, 'service-main.js'),
    env: {
      ...(devServer ? { TEMPORAL_ADDRESS: devServer.address } : {}),
      // The service links runs to this UI and answers its codec requests (CORS for its origin only).
      ...(devServer?.uiUrl && !config.temporal.uiUrl ? { TEMPORAL_UI_URL: devServer.uiUrl } : {}),
      // glibc gives every thread that allocates a malloc arena of its own; two keep the service's memory
      // some 50 MB lower under load (docs/benchmarks.md#what-a-run-costs-and-what-keeps-it-cheap).
      MALLOC_ARENA_MAX: process.env['MALLOC_ARENA_MAX'] ?? '2',
    },
    nodeOptions: serviceNodeOptions(),
    logger,
    onReady: (message) => {
      if (announced) {
        logger.info({ port: message.port }, 'The service process is serving again');
        return;
      }
      announced = true;
      process.stdout.write(banner(message, devServer, config.temporal.namespace, config));
    },
  });

  const stopAll = async (): Promise<void> => {
    await supervisor.stop();
    await keeper?.stop();
  };
  exitOnSignals(logger, stopAll);
  supervisor.firstReady.catch((error: unknown) => {
    logger.fatal({ err: error }, (error as Error).message);
    void stopAll().finally(() => process.exit(1));
  });
}

/**
 * V8 lets each heap grow to several times what is live before it collects, with 16 MB semi-spaces per isolate
 * (the main thread and the workflow thread). Under the onboard load that kept some 150 MB the service did not
 * need; smaller semi-spaces and a heap that grows by half of what is live hold it at about 350 MB for a few
 * percent more CPU (docs/benchmarks.md#what-a-run-costs-and-what-keeps-it-cheap). SERVICE_NODE_OPTIONS
 * replaces them.
 */
const DEFAULT_SERVICE_NODE_OPTIONS = ['--max-semi-space-size=4', '--heap-growing-percent=50'];

function serviceNodeOptions(): string[] {
  const configured = process.env['SERVICE_NODE_OPTIONS'];
  return configured === undefined ? DEFAULT_SERVICE_NODE_OPTIONS : configured.split(/\s+/).filter(Boolean);
}

function banner(
  message: ReadyMessage,
  devServer: DevServer | undefined,
  namespace: string,
  config: { databaseUrl: string | undefined; dataDir: string; port: number; payloadEncryptionKeys?: unknown },
): string {
  const port = message.port ?? config.port;
  const lines = [
    '',
    `  Switchyard is running.`,
    `  Console:      http://127.0.0.1:${port}/   (sign in with an API key)`,
    `  API:          http://127.0.0.1:${port}/v1   (OpenAPI: /v1/openapi.json)`,
    `  API docs:     http://127.0.0.1:${port}${API_REFERENCE_PATH}`,
    devServer?.uiUrl ? `  Temporal UI:  ${devServer.uiUrl}/namespaces/${namespace}/workflows` : undefined,
    `  Data:         ${config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : config.dataDir}`,
    config.payloadEncryptionKeys
      ? '  Encrypted:    step data in Temporal; to read it in Temporal UI, see docs/operations.md#temporal-ui'
      : undefined,
    `  An API key:   npm run admin -- create-key --workspace default --name me --scopes admin`,
    `  Stop:         Ctrl-C`,
    '',
  ].filter((line) => line !== undefined);
  return `${lines.join('\n')}\n`;
}

void main();
