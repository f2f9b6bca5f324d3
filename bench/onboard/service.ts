/**
 * The service as `npm start` runs it, in processes of its own so that each one's CPU and memory can be
 * read from /proc: the supervisor (dist/processes/main.js), the Temporal dev server it starts, and the service
 * process (API + worker) it runs. A temporary data folder, free ports, the rate limiter lifted, private
 * destinations allowed (the receiver is on loopback); PGlite, or a database of its own on a PostgreSQL
 * server.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { newApiKey, randomBase62 } from '../../platform/ids';
import { projectRoot } from '../../platform/paths';
import { freePort } from '../../test/support/ports';
import { waitFor } from '../../test/support/wait';
import { childrenOf, commandLine, stopChild } from '../proc';
import { progress } from '../stack';

export interface ServiceUnderTest {
  baseUrl: string;
  apiKey: string;
  /** The dev server's frontend, for the benchmark's own Temporal client. */
  temporalAddress: string;
  taskQueue: string;
  database: 'pglite' | 'postgres';
  pids: { service: number; dev_server: number; supervisor: number };
  stop(): Promise<void>;
}

export interface ServiceOptions {
  cliPath: string;
  /** A PostgreSQL server to create the service's database on; PGlite when undefined. */
  postgresUrl?: string;
  /** More environment for the service (e.g. worker settings to compare). */
  env?: Record<string, string>;
  /** Writes CPU profiles of the service process here (node --cpu-prof) when set. */
  profileDir?: string;
  /** Another build of the service to run (a checkout with its dist/), e.g. an earlier commit's. */
  root?: string;
}

export async function startServiceProcess(options: ServiceOptions): Promise<ServiceUnderTest> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sy-bench-onboard-'));
  const database = options.postgresUrl ? await createDatabase(options.postgresUrl) : undefined;
  const port = await freePort();
  const devPort = await freePort();
  const apiKey = newApiKey();
  const taskQueue = 'switchyard';
  const env: Record<string, string> = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    TEMPORAL_DEV_PORT: String(devPort),
    TEMPORAL_UI_PORT: '0',
    TEMPORAL_CLI_PATH: options.cliPath,
    TEMPORAL_TASK_QUEUE: taskQueue,
    BOOTSTRAP_API_KEY: apiKey,
    RATE_LIMIT_PER_SECOND: '1000000',
    RATE_LIMIT_BURST: '1000000',
    WORKSPACE_RATE_LIMIT_PER_SECOND: '1000000',
    WORKSPACE_RATE_LIMIT_BURST: '1000000',
    ALLOW_PRIVATE_DESTINATIONS: 'true',
    SEED_DEMO: 'false',
    LOG_LEVEL: process.env['BENCH_LOG_LEVEL'] ?? 'warn',
    ...(database ? { DATABASE_URL: database.url } : {}),
    ...options.env,
  };
  const execArgv = options.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.profileDir}`] : [];
  const supervisor: ChildProcess = spawn(
    process.execPath,
    [...execArgv, path.join(options.root ?? projectRoot, 'dist/processes/main.js')],
    {
      env,
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const baseUrl = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => supervisor.once('exit', () => resolve()));
  const stop = async () => {
    await stopChild(supervisor, 'SIGINT', exited);
    await database?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await waitFor(
      async () => {
        if (supervisor.exitCode !== null) throw new Error(`the service exited with ${supervisor.exitCode}`);
        const response = await fetch(`${baseUrl}/readyz`);
        return response.status === 200;
      },
      { timeoutMs: 120_000, intervalMs: 250, what: 'the service to be ready' },
    );
    const children = childrenOf(supervisor.pid!);
    // Builds before the supervisor ran the service in main.js itself.
    const service = children.find((pid) => commandLine(pid).includes('service-main.js')) ?? supervisor.pid;
    const devServer = children.find((pid) => commandLine(pid).includes('start-dev'));
    if (!service || !devServer) throw new Error('could not find the service and dev server processes');
    progress(
      `service up (${database ? 'PostgreSQL' : 'PGlite'}): service pid ${service}, dev server pid ${devServer}`,
    );
    return {
      baseUrl,
      apiKey,
      temporalAddress: `127.0.0.1:${devPort}`,
      taskQueue,
      database: database ? 'postgres' : 'pglite',
      pids: { service, dev_server: devServer, supervisor: supervisor.pid! },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function createDatabase(serverUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `sy_bench_${randomBase62(10).toLowerCase()}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}
