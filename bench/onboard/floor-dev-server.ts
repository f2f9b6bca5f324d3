/**
 * The onboard floors' Temporal: a dev server started as the service's is (platform/temporal/dev-server.ts:
 * the same flags and memory limit), in a temporary folder of its own, removed when it stops.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '../../platform/logger';
import {
  DEFAULT_DEV_SERVER_MEMORY_LIMIT_MIB,
  startDevServer,
  type DevServer,
} from '../../platform/temporal/dev-server';
import { freePort } from '../../test/support/ports';

export interface FloorDevServer {
  address: string;
  pid: number;
  stop(): Promise<void>;
}

export async function startFloorDevServer(cliPath: string): Promise<FloorDevServer> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sy-bench-floor-'));
  let devServer: DevServer;
  try {
    devServer = await startDevServer({
      cliPath,
      dataDir,
      ip: '127.0.0.1',
      port: await freePort(),
      uiPort: 0,
      namespace: 'default',
      logger: createLogger('silent'),
      memoryLimitMiB: DEFAULT_DEV_SERVER_MEMORY_LIMIT_MIB,
    });
  } catch (error) {
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  return {
    address: devServer.address,
    pid: devServer.process.pid!,
    stop: async () => {
      await devServer.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
