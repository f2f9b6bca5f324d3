/**
 * A floor's worker, a process of its own (so that its CPU and memory are its own): the floor workflows of
 * FLOOR_WORKFLOWS (a module of bench/workflows/, onboard-floor by default) and the floor activities on
 * FLOOR_TASK_QUEUE, at FLOOR_TEMPORAL_ADDRESS, with the service worker's settings (WORKER_* variables,
 * workerTuning). Tells its parent when it polls; stops on SIGTERM. Started by startFloorWorker
 * (floor-process.ts).
 */
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { loadConfig } from '../platform/config';
import { workerTuning } from '../workers/worker';
import { floorActivities } from './floor-activities';
import { FLOOR_WORKFLOW_MODULES, type FloorWorkflowModule } from './floor-process';

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const workflows = (process.env['FLOOR_WORKFLOWS'] ?? 'onboard-floor') as FloorWorkflowModule;
  if (!FLOOR_WORKFLOW_MODULES.includes(workflows)) throw new Error(`FLOOR_WORKFLOWS: unknown "${workflows}"`);
  const connection = await NativeConnection.connect({ address: process.env['FLOOR_TEMPORAL_ADDRESS']! });
  const worker = await Worker.create({
    connection,
    taskQueue: process.env['FLOOR_TASK_QUEUE']!,
    workflowBundle: await bundleWorkflowCode({
      workflowsPath: require.resolve(`./workflows/${workflows}`),
      logger: new DefaultLogger('WARN'),
    }),
    activities: floorActivities,
    ...workerTuning(loadConfig().worker),
  });
  const running = worker.run();
  process.send?.('ready');
  process.once('SIGTERM', () => worker.shutdown());
  await running;
  await connection.close();
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`floor worker: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
