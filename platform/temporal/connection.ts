/**
 * Connecting to Temporal. With TEMPORAL_ADDRESS unset the service runs its own dev server and connects
 * to it; otherwise `@temporalio/envconfig` reads TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY,
 * TEMPORAL_TLS* (and TEMPORAL_PROFILE / the config file), exactly as the Temporal CLI does, so the same
 * settings reach a self-hosted cluster or Temporal Cloud.
 *
 * One NativeConnection serves both the client and the worker of a process; sharing it is what lets
 * the single-process mode start workflows eagerly (first task handed back in the start response).
 */
import { Client, type ClientInterceptors } from '@temporalio/client';
import type { PayloadCodec } from '@temporalio/common';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { NativeConnection, type NativeConnectionOptions } from '@temporalio/worker';
import { dataConverterOf } from './encryption-codec';

/**
 * Environment variables read by @temporalio/envconfig (listed in docs/configuration.md and checked by tests).
 */
export const TEMPORAL_ENVCONFIG_VARIABLES = [
  'TEMPORAL_ADDRESS',
  'TEMPORAL_NAMESPACE',
  'TEMPORAL_API_KEY',
  'TEMPORAL_TLS',
  'TEMPORAL_TLS_CLIENT_CERT_PATH',
  'TEMPORAL_TLS_CLIENT_CERT_DATA',
  'TEMPORAL_TLS_CLIENT_KEY_PATH',
  'TEMPORAL_TLS_CLIENT_KEY_DATA',
  'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
  'TEMPORAL_TLS_SERVER_CA_CERT_DATA',
  'TEMPORAL_TLS_SERVER_NAME',
  'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION',
  'TEMPORAL_PROFILE',
  'TEMPORAL_CONFIG_FILE',
] as const;

export interface TemporalTarget {
  connectionOptions: NativeConnectionOptions;
  namespace: string;
}

/** Where to connect: the dev server we started, or what envconfig says. */
export function resolveTemporalTarget(
  devServerAddress: string | undefined,
  namespace: string,
  environment: Record<string, string>,
): TemporalTarget {
  if (devServerAddress) return { connectionOptions: { address: devServerAddress }, namespace };
  const loaded = loadClientConnectConfig({ overrideEnvVars: environment });
  return { connectionOptions: loaded.connectionOptions, namespace: loaded.namespace ?? namespace };
}

export interface TemporalConnection {
  connection: NativeConnection;
  client: Client;
  namespace: string;
  /**
   * What every client and worker of this process runs payloads through (platform/temporal/encryption-codec.ts);
   * empty while encryption is off. Raw history and memo read from Temporal need it too.
   */
  payloadCodecs: readonly PayloadCodec[];
}

export async function connectTemporal(
  target: TemporalTarget,
  payloadCodecs: readonly PayloadCodec[] = [],
  /** The client's interceptors (tracing: platform/observability/tracing.ts). */
  interceptors?: ClientInterceptors,
): Promise<TemporalConnection> {
  const connection = await NativeConnection.connect(target.connectionOptions);
  const client = new Client({
    connection,
    namespace: target.namespace,
    dataConverter: dataConverterOf(payloadCodecs),
    ...(interceptors && { interceptors }),
  });
  return { connection, client, namespace: target.namespace, payloadCodecs };
}
