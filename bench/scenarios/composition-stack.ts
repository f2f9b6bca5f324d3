/**
 * The stack map-10k and parallel-5 run on, started after the onboard scenario's stacks and before the
 * in-process stack: the service as `npm start` runs it (bench/onboard/service.ts: the supervisor, a dev
 * server, the service process with PGlite), and beside it, on the same dev server, the floor's worker
 * (bench/workflows/composition-floor.ts) in a process of its own on a task queue of its own. Each side's
 * CPU is read from /proc: the service process (or the floor worker) and the dev server.
 */
import { Client, Connection } from '@temporalio/client';
import { createLogger } from '../../platform/logger';
import { ensureTemporalCli } from '../../platform/temporal/cli';
import { startFloorWorker, type FloorWorker } from '../floor-process';
import { createApiClient, type ApiClient } from '../http-load';
import { startServiceProcess, type ServiceUnderTest } from '../onboard/service';
import { progress } from '../stack';

export const COMPOSITION_FLOOR_TASK_QUEUE = 'composition-floor';

export interface CompositionStack {
  service: ServiceUnderTest;
  /** The API of the service, with its bootstrap key. */
  api: ApiClient;
  /** A client of the dev server, for results, histories and the floor's starts. */
  client: Client;
  floorTaskQueue: string;
  /** The processes whose CPU each side costs. */
  pids: { service: number; dev_server: number; floor_worker: number };
  stop(): Promise<void>;
}

export async function startCompositionStack(): Promise<CompositionStack> {
  const cliPath = await ensureTemporalCli(process.env['TEMPORAL_CLI_PATH'], createLogger('silent'));
  progress('composition: starting the service (npm start) and the floor worker on its dev server');
  const service = await startServiceProcess({ cliPath });
  let connection: Connection | undefined;
  let floor: FloorWorker | undefined;
  let api: ApiClient | undefined;
  const stop = async () => {
    await api?.close();
    await floor?.stop();
    await connection?.close();
    await service.stop();
  };
  try {
    connection = await Connection.connect({ address: service.temporalAddress });
    floor = await startFloorWorker({
      temporalAddress: service.temporalAddress,
      taskQueue: COMPOSITION_FLOOR_TASK_QUEUE,
      workflows: 'composition-floor',
    });
    api = createApiClient(service.baseUrl, service.apiKey, 16);
    return {
      service,
      api,
      client: new Client({ connection }),
      floorTaskQueue: COMPOSITION_FLOOR_TASK_QUEUE,
      pids: { service: service.pids.service, dev_server: service.pids.dev_server, floor_worker: floor.pid },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
