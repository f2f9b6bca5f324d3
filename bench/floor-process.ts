/**
 * Starts a floor's worker (floor-worker.ts) in a process of its own, against a dev server, and waits
 * until it polls.
 */
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { stopChild } from './proc';

/** The floor workflow modules of bench/workflows/ a floor worker can run. */
export const FLOOR_WORKFLOW_MODULES = ['onboard-floor', 'composition-floor', 'events-floor'] as const;
export type FloorWorkflowModule = (typeof FLOOR_WORKFLOW_MODULES)[number];

export interface FloorWorker {
  pid: number;
  /** Sends SIGTERM (the worker shuts down) and waits for the process to exit. */
  stop(): Promise<void>;
}

export async function startFloorWorker(options: {
  temporalAddress: string;
  taskQueue: string;
  workflows: FloorWorkflowModule;
}): Promise<FloorWorker> {
  const worker: ChildProcess = fork(path.join(__dirname, 'floor-worker.js'), [], {
    env: {
      ...process.env,
      FLOOR_TEMPORAL_ADDRESS: options.temporalAddress,
      FLOOR_TASK_QUEUE: options.taskQueue,
      FLOOR_WORKFLOWS: options.workflows,
    },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  const stop = () => stopChild(worker, 'SIGTERM', exited);
  try {
    await new Promise<void>((resolve, reject) => {
      worker.once('message', () => resolve());
      worker.once('exit', (code) => reject(new Error(`the floor worker exited with ${code}`)));
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return { pid: worker.pid!, stop };
}
