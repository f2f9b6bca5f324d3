/**
 * The onboard scenario's `floor_tight` variant: the tight floor service (floor-service.ts) in a process of
 * its own on a dev server of its own (floor-dev-server.ts), triggered with the same signed requests as the
 * service's hook, and measured as every variant is (driver.ts): both processes' CPU by thread, their
 * peak memory, and how many starts were eager. Its `floor_contract` variant is the same service carrying
 * what our contract adds to every run (CONTRACT_ADDITIONS).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { Pool } from 'undici';
import { stopChild } from '../proc';
import { runPhases, type PhaseResult, type PhaseSizes, type Starter } from './driver';
import { startFloorDevServer } from './floor-dev-server';
import { postSignedHook } from './hook-request';
import type { OnboardReceiver } from './receiver';

interface FloorService {
  pid: number;
  baseUrl: string;
  stop(): Promise<void>;
}

/**
 * Forks floor-service.js with Node's default flags (as the service's process runs without the bench's),
 * and with `--cpu-prof` into `profileDir` when given (BENCH_PROFILE_DIR, as for the service's variants).
 */
async function startFloorService(env: Record<string, string>, profileDir?: string): Promise<FloorService> {
  const child: ChildProcess = fork(path.join(__dirname, 'floor-service.js'), [], {
    env: { ...process.env, ...env },
    execArgv: profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = () => stopChild(child, 'SIGTERM', exited);
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.once('message', (message: { port: number }) => resolve(message.port));
      child.once('exit', (code) => reject(new Error(`the floor service exited with ${code}`)));
    });
    return { pid: child.pid!, baseUrl: `http://127.0.0.1:${port}`, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * What every run of ours carries that the tight floor's does not (floor-service.ts): our start options
 * (search attributes, summary, memo, fairness key), worker versioning with pinned runs, and our payloads
 * (the definition's snapshot in the input, the steps' records in the local activity's answer).
 */
const CONTRACT_ADDITIONS = {
  BENCH_FLOOR_START_EXTRAS: '1',
  BENCH_FLOOR_VERSIONING: '1',
  BENCH_FLOOR_PAYLOADS: '1',
};

export async function benchFloorTight(
  sizes: PhaseSizes,
  cliPath: string,
  receiver: OnboardReceiver,
  profileDir?: string,
  options: { contract?: boolean } = {},
): Promise<{ phases: Record<string, PhaseResult> }> {
  const variant = options.contract ? 'floor_contract' : 'floor_tight';
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  const devServer = await startFloorDevServer(cliPath);
  let service: FloorService | undefined;
  let pool: Pool | undefined;
  const connection = await Connection.connect({ address: devServer.address });
  try {
    service = await startFloorService(
      {
        FLOOR_TEMPORAL_ADDRESS: devServer.address,
        FLOOR_TASK_QUEUE: 'onboard-floor-tight',
        FLOOR_HOOK_SECRET: secret,
        FLOOR_RECEIVER_URL: `${receiver.url}/onboarded`,
        ...(options.contract && CONTRACT_ADDITIONS),
      },
      profileDir,
    );
    pool = new Pool(service.baseUrl, {
      connections: Math.max(...sizes.concurrencies),
      pipelining: 1,
      keepAliveTimeout: 60_000,
    });
    const requests = pool;
    const start: Starter = async (customer, index) => {
      const response = await postSignedHook(requests, secret, customer, index);
      const text = await response.body.text();
      if (response.statusCode !== 202) throw new Error(`HTTP ${response.statusCode}: ${text.slice(0, 200)}`);
      const accepted = JSON.parse(text) as { execution_id: string; eagerly_started: boolean };
      return { workflowId: accepted.execution_id, eagerlyStarted: accepted.eagerly_started };
    };
    const pids = { service: service.pid, dev_server: devServer.pid };
    const client = new Client({ connection });
    return { phases: await runPhases(variant, sizes, start, receiver, pids, client) };
  } finally {
    await pool?.close();
    await service?.stop();
    await connection.close();
    await devServer.stop();
  }
}
