/**
 * The Temporal dev server of the embedded setup (`npm start`). A module of its own, light to load: the
 * supervisor (main.ts) starts the dev server and imports this, not the service's runtime, so that it stays
 * a small process (docs/operations.md#memory).
 */
import type { Config } from '../platform/config';
import type { Logger } from '../platform/logger';
import { ensureTemporalCli } from '../platform/temporal/cli';
import { startDevServer, type DevServer } from '../platform/temporal/dev-server';
import { CODEC_PATH } from '../src/http/paths';

/** The Temporal dev server of the embedded setup, in DATA_DIR, on the configured ports. */
export async function startEmbeddedTemporal(config: Config, logger: Logger): Promise<DevServer> {
  const cliPath = await ensureTemporalCli(config.temporal.cliPath, logger);
  return startDevServer({
    cliPath,
    dataDir: config.dataDir,
    ip: config.temporal.devIp,
    port: config.temporal.devPort,
    uiPort: config.temporal.uiPort,
    namespace: config.temporal.namespace,
    logger,
    uiCodecEndpoint: embeddedCodecEndpoint(config),
    memoryLimitMiB: config.temporal.devMemoryLimitMiB,
  });
}

/**
 * With payload encryption on, the embedded Temporal UI decodes through the API's codec endpoint
 * (docs/operations.md#encrypted-step-data); its browser still has to be signed in to the console.
 */
export function embeddedCodecEndpoint(config: Config): string | undefined {
  if (!config.payloadEncryptionKeys || config.port === 0) return undefined;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.port}${CODEC_PATH}`;
}
