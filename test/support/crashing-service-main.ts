/**
 * The service process of `npm start` (processes/service-main.ts) with the workflow bundle a test names in
 * TEST_WORKFLOW_BUNDLE (the crash-loop test's adds crash-interceptor.ts) and the local activity that
 * bundle calls to abort the process.
 */
import { listeningPort } from '../../platform/net/listening-port';
import { failStart, loadConfigOrExit, processLogger, stopOnSignals } from '../../processes/process-lifecycle';
import { startRuntime } from '../../processes/runtime';
import { isSupervised, reportToSupervisor } from '../../processes/supervisor';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = processLogger(config, 'service');
  const codePath = process.env['TEST_WORKFLOW_BUNDLE'];
  if (!codePath) failStart(logger, new Error('TEST_WORKFLOW_BUNDLE is not set'));
  const runtime = await startRuntime({
    config,
    logger,
    api: true,
    worker: true,
    workflowBundle: { codePath },
    extraActivities: { crash_worker: () => process.abort() },
  }).catch((error: unknown) => failStart(logger, error));
  const stop = stopOnSignals(runtime, logger, isSupervised());
  reportToSupervisor(runtime.server ? listeningPort(runtime.server) : null, () =>
    stop.request('the supervisor is gone'),
  );
}

void main();
