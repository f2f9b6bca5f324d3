/**
 * The service in its production shape, on this machine, for fault and load tests: a Temporal dev server
 * (its own database file), a PostgreSQL database behind a TCP proxy that can be cut, and the API and
 * the worker as separate processes (`node dist/processes/api-main.js`, `node dist/processes/worker-main.js`). Each
 * part can be killed with SIGKILL and started again on the same data.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { newApiKey, randomBase62 } from '../../platform/ids';
import { projectRoot } from '../../platform/paths';
import { createApiKey } from '../../platform/store/api-keys';
import { openDatabase, type Database } from '../../platform/store/db';
import { createWorkspace } from '../../platform/store/workspaces';
import { startDevServer, type DevServer } from '../../platform/temporal/dev-server';
import { freePort } from './ports';
import {
  apiClient,
  createPostgresDatabase,
  sharedTemporal,
  tempDir,
  testLogger,
  type ApiClient,
} from './stack';
import { TcpProxy } from './tcp-proxy';
import { waitFor } from './wait';

export interface DeploymentOptions {
  /** Extra configuration for the API and the worker. */
  env?: Record<string, string>;
}

/**
 * TEST_PROCESS_LOGS=<folder>: every process a test starts writes its whole output there, one file per
 * process (`<name>-<pid>.log`); a test keeps only the last 20,000 characters otherwise.
 */
function processLog(name: string, pid: number | undefined): fs.WriteStream | undefined {
  const folder = process.env['TEST_PROCESS_LOGS'];
  if (!folder) return undefined;
  fs.mkdirSync(folder, { recursive: true });
  return fs.createWriteStream(path.join(folder, `${name.replace(/\W+/g, '-')}-${pid}.log`));
}

/**
 * TEST_WORKER_METRICS_PORT=<port>: the deployment's first worker serves /metrics there (the SDK's slot,
 * poller and cache gauges among them), to watch a stuck worker; one deployment at a time.
 */
function workerMetricsEnv(): Record<string, string> {
  const port = process.env['TEST_WORKER_METRICS_PORT'];
  return port ? { METRICS_PORT: port } : {};
}

/** A child process of ours with its output kept for failure messages. */
export class Managed {
  private child: ChildProcess | undefined;
  output = '';

  constructor(
    readonly name: string,
    private readonly script: string,
    private readonly env: () => Record<string, string>,
    /** The folder the process runs in, and `script` is relative to: the checkout, or an image's folder. */
    private readonly root: string = projectRoot,
  ) {}

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  start(): void {
    this.output = '';
    const child = spawn(process.execPath, [path.join(this.root, this.script)], {
      cwd: this.root,
      env: { ...process.env, ...this.env() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    const log = processLog(this.name, child.pid);
    const keep = (chunk: Buffer) => {
      log?.write(chunk);
      this.output = (this.output + chunk.toString()).slice(-20_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
  }

  async waitForOutput(pattern: RegExp, timeoutMs = 60_000): Promise<void> {
    await waitFor(
      async () => {
        if (!this.running) throw new Error(`${this.name} exited:\n${this.output.slice(-3000)}`);
        return pattern.test(this.output);
      },
      { timeoutMs, intervalMs: 100, what: `${this.name} to be ready` },
    );
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  }
}

export class Deployment {
  readonly adminKey = newApiKey();
  readonly taskQueue = `deploy-${randomBase62(8)}`;
  private devServer: DevServer | undefined;
  private proxy: TcpProxy | undefined;
  private dropDatabase: (() => Promise<void>) | undefined;
  private temporalPort = 0;
  private temporalDir = '';
  private apiPort = 0;
  private databaseUrl = '';
  readonly api: Managed;
  readonly worker: Managed;
  /** Processes started besides the first API and worker (replicas, other builds). */
  private readonly extras: Managed[] = [];

  constructor(private readonly options: DeploymentOptions = {}) {
    this.api = new Managed('the API', 'dist/processes/api-main.js', () => ({
      ...this.env(),
      PORT: String(this.apiPort),
    }));
    this.worker = new Managed('the worker', 'dist/processes/worker-main.js', () => ({
      ...this.env(),
      ...workerMetricsEnv(),
    }));
  }

  get url(): string {
    return `http://127.0.0.1:${this.apiPort}`;
  }

  /** The Temporal frontend of this deployment (its own dev server). */
  get temporalAddress(): string {
    return `127.0.0.1:${this.temporalPort}`;
  }

  client(key: string = this.adminKey): ApiClient {
    return apiClient(this.url, key);
  }

  private env(): Record<string, string> {
    return {
      HOST: '127.0.0.1',
      TEMPORAL_ADDRESS: `127.0.0.1:${this.temporalPort}`,
      TEMPORAL_TASK_QUEUE: this.taskQueue,
      DATABASE_URL: this.databaseUrl,
      SECRETS_KEY: 'fault-test-secrets-key',
      BOOTSTRAP_API_KEY: this.adminKey,
      ALLOW_PRIVATE_DESTINATIONS: 'true',
      DATA_DIR: path.join(this.temporalDir, 'service'),
      LOG_LEVEL: 'info',
      RATE_LIMIT_PER_SECOND: '100000',
      RATE_LIMIT_BURST: '100000',
      WORKSPACE_RATE_LIMIT_PER_SECOND: '100000',
      WORKSPACE_RATE_LIMIT_BURST: '100000',
      SEED_DEMO: 'false',
      ...this.options.env,
    };
  }

  async start(): Promise<void> {
    this.temporalPort = await freePort();
    this.apiPort = await freePort();
    this.temporalDir = tempDir('sy-deploy-');
    await this.startTemporal();
    const database = await createPostgresDatabase();
    this.dropDatabase = () => database.drop();
    const url = new URL(database.url);
    this.proxy = await TcpProxy.start({ host: url.hostname, port: Number(url.port || 5432) });
    url.host = `127.0.0.1:${this.proxy.port}`;
    this.databaseUrl = url.toString();
    await this.startApi();
    await this.startWorker();
  }

  async startTemporal(): Promise<void> {
    this.devServer = await startDevServer({
      cliPath: (await sharedTemporal()).cliPath,
      dataDir: this.temporalDir,
      ip: '127.0.0.1',
      port: this.temporalPort,
      uiPort: 0,
      namespace: 'default',
      logger: testLogger,
    });
  }

  /** SIGKILL: the dev server's committed state survives in its database file (WAL). */
  async killTemporal(): Promise<void> {
    const server = this.devServer;
    if (!server) return;
    const exited = new Promise<void>((resolve) => server.process.once('exit', () => resolve()));
    server.process.kill('SIGKILL');
    await exited;
  }

  async startApi(): Promise<void> {
    await startUntilReady(this.api, this.url);
  }

  async startWorker(): Promise<void> {
    this.worker.start();
    await this.worker.waitForOutput(/Worker running/);
  }

  /** One more API process, on its own port, sharing everything else; returns its base URL. */
  async startExtraApi(): Promise<{ process: Managed; url: string }> {
    const port = await freePort();
    const api = new Managed(`API ${this.extras.length + 2}`, 'dist/processes/api-main.js', () => ({
      ...this.env(),
      PORT: String(port),
    }));
    this.extras.push(api);
    const url = `http://127.0.0.1:${port}`;
    await startUntilReady(api, url);
    return { process: api, url };
  }

  /** One more worker process; `env` overrides its configuration (another build: WORKER_BUILD_ID). */
  async startExtraWorker(name: string, env: Record<string, string> = {}): Promise<Managed> {
    const worker = new Managed(name, 'dist/processes/worker-main.js', () => ({ ...this.env(), ...env }));
    this.extras.push(worker);
    worker.start();
    await worker.waitForOutput(/Worker running/);
    return worker;
  }

  /** A new workspace with an admin key, written straight into the deployment's database. */
  async newWorkspace(): Promise<{ workspaceId: string; key: string }> {
    return this.withDatabase(async (db) => {
      const workspaceId = `ws-${randomBase62(8).toLowerCase()}`;
      await createWorkspace(db, workspaceId, workspaceId);
      return {
        workspaceId,
        key: (await createApiKey(db, { workspaceId, name: 'load', scopes: ['admin'] })).key,
      };
    });
  }

  /** Runs `work` on a connection of its own to the deployment's database. */
  async withDatabase<T>(work: (db: Database) => Promise<T>): Promise<T> {
    const db = await openDatabase({ url: this.databaseUrl, dataDir: this.temporalDir, maxConnections: 1 });
    try {
      return await work(db);
    } finally {
      await db.close();
    }
  }

  async cutDatabase(): Promise<void> {
    await this.proxy?.cut();
  }

  async restoreDatabase(): Promise<void> {
    await this.proxy?.restore();
  }

  async stop(): Promise<void> {
    for (const extra of this.extras) await extra.kill('SIGTERM');
    await this.worker.kill('SIGTERM');
    await this.api.kill('SIGTERM');
    await this.proxy?.restore().catch(() => undefined);
    await this.devServer?.stop();
    await this.dropDatabase?.();
    fs.rmSync(this.temporalDir, { recursive: true, force: true });
  }
}

/** Starts an API process and waits until its /readyz answers 200 (fails at once if it exits). */
export async function startUntilReady(api: Managed, url: string): Promise<void> {
  api.start();
  await waitFor(
    async () => {
      if (!api.running) throw new Error(`${api.name} exited:\n${api.output.slice(-3000)}`);
      return (await request(url).get('/readyz').timeout(2000)).status === 200;
    },
    { timeoutMs: 60_000, intervalMs: 200, what: `${api.name} to be ready` },
  );
}
