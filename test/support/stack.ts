/**
 * The real parts every integration test runs against: one Temporal dev server per test run (started on
 * first use), and per test file a service (API + worker on its own task queue) over a fresh database —
 * embedded PGlite or a throwaway database on the PostgreSQL server (TEST_DATABASE_URL).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import request from 'supertest';
import { loadConfig, type Config } from '../../platform/config';
import { createLogger, type Logger } from '../../platform/logger';
import { newApiKey, randomBase62 } from '../../platform/ids';
import { createApiKey, type Scope } from '../../platform/store/api-keys';
import { createWorkspace } from '../../platform/store/workspaces';
import { listeningPort } from '../../platform/net/listening-port';
import { housekeepingScheduleId } from '../../workers/housekeeping-schedule';
import { startRuntime, type Runtime } from '../../processes/runtime';
import { ensureTemporalCli } from '../../platform/temporal/cli';
import { startDevServer, type DevServer } from '../../platform/temporal/dev-server';
import { freePort } from './ports';

export const DB_KINDS = ['pglite', 'postgres'] as const;
export type DbKind = (typeof DB_KINDS)[number];

export const TEST_DATABASE_URL =
  process.env['TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export const testLogger: Logger = createLogger(
  (process.env['TEST_LOG_LEVEL'] as Config['logLevel'] | undefined) ?? 'silent',
);

export function tempDir(prefix = 'sy-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

interface SharedTemporal {
  devServer: DevServer;
  cliPath: string;
  address: string;
}

let shared: Promise<SharedTemporal> | undefined;

/** The run's Temporal dev server, started on first use. */
export function sharedTemporal(): Promise<SharedTemporal> {
  shared ??= (async () => {
    const cliPath = await ensureTemporalCli(process.env['TEMPORAL_CLI_PATH'], testLogger);
    const devServer = await startDevServer({
      cliPath,
      dataDir: tempDir('sy-temporal-'),
      ip: '127.0.0.1',
      port: await freePort(),
      // Temporal UI too: the operators' view is tested (test/integration/temporal-ui.test.ts).
      uiPort: await freePort(),
      namespace: 'default',
      logger: testLogger,
      // Every test service has its own task queue, so its own worker deployment: more than the
      // 100 a namespace may hold by default.
      dynamicConfig: ['matching.maxDeployments=10000'],
    });
    return { devServer, cliPath, address: devServer.address };
  })();
  return shared;
}

export async function stopSharedTemporal(): Promise<void> {
  if (!shared) return;
  const { devServer } = await shared;
  await devServer.stop();
}

/** A database of its own on the PostgreSQL server, dropped by `drop()`. */
export async function createPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `sy_test_${randomBase62(10).toLowerCase()}`;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  try {
    await admin.connect();
  } catch (error) {
    throw new Error(
      `The PostgreSQL tests need a server at ${TEST_DATABASE_URL} (set TEST_DATABASE_URL): ${(error as Error).message}`,
    );
  }
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}

export interface TestService {
  runtime: Runtime;
  config: Config;
  /** Base URL of the listening API. */
  url: string;
  /** An admin key of the `default` workspace (BOOTSTRAP_API_KEY). */
  adminKey: string;
  api(key?: string): ApiClient;
  /** A new workspace with a key of the given scopes. */
  newWorkspace(scopes?: Scope[]): Promise<{ workspaceId: string; key: string }>;
  /** A new key in an existing workspace. */
  newKey(workspaceId: string, scopes: Scope[]): Promise<string>;
  stop(): Promise<void>;
}

export interface ApiClient {
  get(path: string): request.Test;
  delete(path: string): request.Test;
  post(path: string, body?: unknown): request.Test;
  put(path: string, body?: unknown): request.Test;
}

export function apiClient(url: string, key?: string): ApiClient {
  const auth = (test: request.Test) => (key ? test.set('Authorization', `Bearer ${key}`) : test);
  const withBody = (test: request.Test, body: unknown) =>
    body === undefined ? test : test.send(body as object);
  return {
    get: (p) => auth(request(url).get(p)),
    delete: (p) => auth(request(url).delete(p)),
    post: (p, body) => withBody(auth(request(url).post(p)), body),
    put: (p, body) => withBody(auth(request(url).put(p)), body),
  };
}

export interface TestServiceOptions {
  db?: DbKind;
  /** Extra environment (configuration) for this service. */
  env?: Record<string, string>;
  /** Where the service logs (silent by default). */
  logger?: Logger;
  /** Run the worker in this service too (default true). */
  worker?: boolean;
  /**
   * Another service's PostgreSQL database (its `config.databaseUrl`), for a second API process over the
   * same data; stop() leaves it to that service. Default: a fresh database as `db` says.
   */
  databaseUrl?: string;
}

export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  const temporal = await sharedTemporal();
  const dataDir = tempDir();
  const database =
    options.db === 'postgres' && !options.databaseUrl ? await createPostgresDatabase() : undefined;
  const databaseUrl = options.databaseUrl ?? database?.url;
  const adminKey = newApiKey();
  const config = loadConfig({
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_TASK_QUEUE: `test-${randomBase62(8)}`,
    BOOTSTRAP_API_KEY: adminKey,
    ALLOW_PRIVATE_DESTINATIONS: 'true',
    LOG_LEVEL: process.env['TEST_LOG_LEVEL'] ?? 'silent',
    // Suites poll many executions at once with one key; the rate-limit tests set their own limits.
    RATE_LIMIT_PER_SECOND: '100000',
    RATE_LIMIT_BURST: '100000',
    WORKSPACE_RATE_LIMIT_PER_SECOND: '100000',
    WORKSPACE_RATE_LIMIT_BURST: '100000',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    ...options.env,
  });
  let runtime: Runtime;
  try {
    runtime = await startRuntime({
      config,
      logger: options.logger ?? testLogger,
      api: true,
      worker: options.worker ?? true,
    });
  } catch (error) {
    await database?.drop();
    throw error;
  }
  const url = `http://127.0.0.1:${listeningPort(runtime.server!)}`;
  const db = runtime.services.db;
  return {
    runtime,
    config,
    url,
    adminKey,
    api: (key = adminKey) => apiClient(url, key),
    newWorkspace: async (scopes = ['admin']) => {
      const workspaceId = `ws-${randomBase62(8).toLowerCase()}`;
      await createWorkspace(db, workspaceId, workspaceId);
      return { workspaceId, key: (await createApiKey(db, { workspaceId, name: 'test', scopes })).key };
    },
    newKey: async (workspaceId, scopes) =>
      (await createApiKey(db, { workspaceId, name: 'test', scopes })).key,
    stop: async () => {
      // A worker's housekeeping schedule (this service's, or of workers a test started beside it on its
      // task queue) would outlive the service on the shared dev server.
      await runtime.services.temporal.client.schedule
        .getHandle(housekeepingScheduleId(config.temporal.taskQueue))
        .delete()
        .catch(() => undefined);
      await runtime.stop();
      await database?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
