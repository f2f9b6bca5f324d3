/**
 * The stack a benchmark run measures, built from the service's own code: a Temporal dev server of its
 * own (free port, temporary data folder, headless), and one service process (API + worker) over an
 * embedded PGlite database in another temporary folder (or the PostgreSQL database BENCH_DATABASE_URL),
 * with the rate limiter lifted and private destinations allowed (connector steps call a local receiver).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { loadConfig, type Config } from '../platform/config';
import type { Logger } from '../platform/logger';
import { newApiKey } from '../platform/ids';
import { listeningPort } from '../platform/net/listening-port';
import { startRuntime, type Runtime } from '../processes/runtime';
import { ensureTemporalCli } from '../platform/temporal/cli';
import { startDevServer, type DevServer } from '../platform/temporal/dev-server';
import { freePort } from '../test/support/ports';

export interface BenchStack {
  runtime: Runtime;
  devServer: DevServer;
  cliPath: string;
  config: Config;
  logger: Logger;
  /** Base URL of the listening API. */
  baseUrl: string;
  /** BOOTSTRAP_API_KEY: an admin key of the `default` workspace, where the demo workflow is seeded. */
  apiKey: string;
  /** Stops the service, then the dev server, then removes the temporary folders; safe to call twice. */
  stop(): Promise<void>;
}

/** The in-process stack, as the report's environment describes it. */
export function stackDescription(stack: BenchStack) {
  return {
    cliPath: stack.cliPath,
    database: stack.runtime.services.db.kind,
    eagerStart: stack.runtime.services.eagerStart,
  };
}

/** Progress for the person watching; stdout is reserved for the JSON report. */
export function progress(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

/** Service logs on stderr, so that they never mix with the JSON report on stdout. */
function stderrLogger(level: Config['logLevel']): Logger {
  return pino(
    { level, base: { service: 'switchyard', component: 'bench' }, timestamp: pino.stdTimeFunctions.isoTime },
    pino.destination(2),
  );
}

export async function startBenchStack(): Promise<BenchStack> {
  const logLevel = (process.env['BENCH_LOG_LEVEL'] as Config['logLevel'] | undefined) ?? 'warn';
  const databaseUrl = process.env['BENCH_DATABASE_URL'] || undefined;
  const logger = stderrLogger(logLevel);
  const temporalDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sy-bench-temporal-'));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sy-bench-data-'));
  const removeDirs = () => {
    for (const dir of [temporalDir, dataDir]) fs.rmSync(dir, { recursive: true, force: true });
  };

  let devServer: DevServer | undefined;
  try {
    const cliPath = await ensureTemporalCli(process.env['TEMPORAL_CLI_PATH'], logger);
    progress(`starting the Temporal dev server (${cliPath})`);
    devServer = await startDevServer({
      cliPath,
      dataDir: temporalDir,
      ip: '127.0.0.1',
      port: await freePort(),
      uiPort: 0,
      namespace: 'default',
      logger,
    });
    const apiKey = newApiKey();
    const config = loadConfig({
      DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      TEMPORAL_ADDRESS: devServer.address,
      BOOTSTRAP_API_KEY: apiKey,
      // The benchmark measures the service, not its per-key limiter.
      RATE_LIMIT_PER_SECOND: '1000000',
      RATE_LIMIT_BURST: '1000000',
      WORKSPACE_RATE_LIMIT_PER_SECOND: '1000000',
      WORKSPACE_RATE_LIMIT_BURST: '1000000',
      // Connector steps of the multi-step scenarios call a receiver on 127.0.0.1.
      ALLOW_PRIVATE_DESTINATIONS: 'true',
      LOG_LEVEL: logLevel,
      // A PostgreSQL server instead of PGlite (an empty database of its own: the service migrates it).
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    });
    progress(`starting the service (API + worker, ${databaseUrl ? 'PostgreSQL' : 'PGlite'})`);
    const runtime = await startRuntime({ config, logger, api: true, worker: true });
    const server = devServer;
    let stopping: Promise<void> | undefined;
    return {
      runtime,
      devServer,
      cliPath,
      config,
      logger,
      baseUrl: `http://127.0.0.1:${listeningPort(runtime.server!)}`,
      apiKey,
      stop: () =>
        (stopping ??= (async () => {
          await runtime.stop();
          await server.stop();
          removeDirs();
        })()),
    };
  } catch (error) {
    await devServer?.stop();
    removeDirs();
    throw error;
  }
}
