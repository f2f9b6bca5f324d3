/**
 * The floor's worker, a process of its own (so that its CPU and memory are its own): the onboard-floor
 * workflow and its activity on FLOOR_TASK_QUEUE, at FLOOR_TEMPORAL_ADDRESS, with the service worker's
 * settings (WORKER_* variables, workerTuning). Tells its parent when it polls; stops on SIGTERM.
 */
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { loadConfig } from '../platform/config';
import { workerTuning } from '../workers/worker';
import { floorActivities } from './floor-activities';

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const connection = await NativeConnection.connect({ address: process.env['FLOOR_TEMPORAL_ADDRESS']! });
  const worker = await Worker.create({
    connection,
    taskQueue: process.env['FLOOR_TASK_QUEUE']!,
    workflowBundle: await bundleWorkflowCode({
      workflowsPath: require.resolve('./workflows/onboard-floor'),
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
