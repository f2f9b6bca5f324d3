/**
 * The service process of the embedded setup: API and worker in one process, run (and restarted when it
 * dies) by `npm start`'s supervisor (processes/main.ts), which passes it the dev server's TEMPORAL_ADDRESS.
 */
import { listeningPort } from '../platform/net/listening-port';
import { failStart, loadConfigOrExit, processLogger, stopOnSignals } from './process-lifecycle';
import { startRuntime } from './runtime';
import { isSupervised, reportToSupervisor } from './supervisor';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = processLogger(config, 'service');
  const runtime = await startRuntime({ config, logger, api: true, worker: true }).catch((error: unknown) =>
    failStart(logger, error),
  );
  const stop = stopOnSignals(runtime, logger, isSupervised());
  reportToSupervisor(runtime.server ? listeningPort(runtime.server) : null, () =>
    stop.request('the supervisor is gone'),
  );
}

void main();
