/**
 * Assembles one process of the service: database (migrated), Temporal (the dev server we start, or an
 * existing cluster), the worker and/or the API, and the order in which they stop. `npm start` runs all
 * of it in one process; production runs the API and the worker as separate processes.
 */
import http from 'node:http';
import net from 'node:net';
import fs from 'node:fs';
import type { Worker, WorkflowBundleOption } from '@temporalio/worker';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { createApp } from '../src/app';
import { API_REFERENCE_PATH } from '../src/http/paths';
import { startEmbeddedTemporal } from './embedded-temporal';
import { handleClientError } from '../src/http/client-error';
import { AdmissionGate } from '../src/flow-control/admission';
import { EventDispatcher } from '../src/events/dispatcher';
import { EventStoreQueue } from '../src/events/store-queue';
import { BulkRunner } from '../src/bulk/runner';
import { AdmissionSweeper } from '../src/flow-control/admission-sweeper';
import { ThrottleSweeper } from '../src/flow-control/throttle-sweeper';
import { DebounceSweeper } from '../src/flow-control/debounce-sweeper';
import { ExecutionBacklog } from '../src/flow-control/backpressure';
import { ComputePool } from '../platform/compute/pool';
import { SchemaValidator } from '../platform/compute/schemas';
import { CachedReads } from '../platform/store/cached-reads';
import { ChangeFeed } from '../platform/store/changes';
import { bootstrap } from './bootstrap';
import type { Config } from '../platform/config';
import type { Logger } from '../platform/logger';
import { listeningPort } from '../platform/net/listening-port';
import { metrics } from '../platform/observability/metrics';
import { setSdkMetricsUrl, startMetricsServer } from '../platform/observability/metrics-server';
import { startTracing, tracingClientInterceptors } from '../platform/observability/tracing';
import { ensureHousekeepingSchedule } from '../workers/housekeeping-schedule';
import { reconcileSchedules } from '../src/definitions/schedule-sync';
import { createSecretCipher, loadOrCreateSecretsKey } from '../platform/secrets/cipher';
import type { Services } from '../src/services';
import { acquireDataDirLock, canServeSocket, pgliteSocketPath } from '../platform/store/data-dir-lock';
import { openDatabase, type Database } from '../platform/store/db';
import { startPgliteUpkeep } from '../platform/store/pglite-vacuum';
import { migrate } from '../platform/store/migrate';
import { queueTotalsByWorkflow } from '../platform/store/queue-totals';
import {
  connectTemporal,
  resolveTemporalTarget,
  type TemporalConnection,
} from '../platform/temporal/connection';
import type { DevServer } from '../platform/temporal/dev-server';
import { payloadCodecsOf } from '../platform/temporal/encryption-codec';
import { ensureRetention, ensureSearchAttributes } from '../platform/temporal/namespace-setup';
import { rollOutWorkerVersion, workerVersion } from '../platform/temporal/worker-deployment';
import { runProbationWorker, type RunningWorker } from './probation-worker';
import {
  createExecutionWorker,
  installTemporalRuntime,
  loadWorkflowBundle,
  workerDataConverter,
} from '../workers/worker';
import { adoptReplayableRuns, type MoveOutcome } from '../workers/run-moves';

export interface RuntimeOptions {
  config: Config;
  logger: Logger;
  api: boolean;
  worker: boolean;
  /** The worker's workflow code, when not the one `npm run build` wrote (tests). */
  workflowBundle?: WorkflowBundleOption;
  /** Activities besides the service's own, for what such workflow code calls (tests). */
  extraActivities?: Record<string, (...args: never[]) => Promise<unknown>>;
}

export interface Runtime {
  services: Services;
  devServer: DevServer | undefined;
  server: http.Server | undefined;
  worker: Worker | undefined;
  /** Resolves when the worker stops by itself (a fatal error); never when there is no worker. */
  workerStopped: Promise<void>;
  /**
   * WORKER_ROLLOUT=replace: the background move of runs pinned to other builds onto this one, once
   * decided (what moved, what stayed and why); undefined when this worker moves nothing.
   */
  runsAdopted: Promise<MoveOutcome[]> | undefined;
  /** Stops everything in order; safe to call twice. */
  stop(): Promise<void>;
}

export async function startRuntime({
  config,
  logger,
  api,
  worker: runWorker,
  workflowBundle,
  extraActivities,
}: RuntimeOptions): Promise<Runtime> {
  const cleanups: (() => Promise<void> | void)[] = [];
  const stop = once(async () => {
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch (error) {
        logger.warn({ err: error }, 'Error while stopping');
      }
    }
  });
  try {
    fs.mkdirSync(config.dataDir, { recursive: true });
    // DATA_DIR holds single-process state: the embedded database and the dev server's database file.
    if (!config.databaseUrl || !config.temporal.address) cleanups.push(acquireDataDirLock(config.dataDir));

    let devServer: DevServer | undefined;
    if (!config.temporal.address) {
      devServer = await startEmbeddedTemporal(config, logger);
      cleanups.push(() => devServer!.stop());
    }

    // Served on METRICS_PORT, or on the API's port; a worker-only process without METRICS_PORT has none.
    const servesMetrics = config.metrics.enabled && (api || config.metrics.port !== undefined);
    if (servesMetrics) {
      // The SDK's exporter listens on loopback only; /metrics relays it (metrics-server.ts).
      const sdkPort = await freeLoopbackPort();
      if (installTemporalRuntime(logger, { prometheusBindAddress: `127.0.0.1:${sdkPort}` }))
        setSdkMetricsUrl(`http://127.0.0.1:${sdkPort}/metrics`);
    } else {
      installTemporalRuntime(logger);
    }
    // Off unless OTEL_EXPORTER_OTLP_ENDPOINT is set: then the client's starts carry the request's trace.
    const tracing = startTracing(config.environment, api && runWorker ? 'service' : api ? 'api' : 'worker');
    const temporal: TemporalConnection = await connectTemporal(
      resolveTemporalTarget(devServer?.address, config.temporal.namespace, config.environment),
      payloadCodecsOf(config.payloadEncryptionKeys),
      tracing && tracingClientInterceptors(tracing),
    );
    if (tracing) cleanups.push(() => tracing.flush());
    cleanups.push(() => temporal.connection.close());
    await ensureSearchAttributes(temporal, logger);
    await ensureRetention(temporal, config.temporal.retentionDays, logger);

    const db: Database = await openDatabase({
      url: config.databaseUrl,
      dataDir: config.dataDir,
      statementTimeoutMs: config.databaseStatementTimeoutMs,
    });
    cleanups.push(() => db.close());
    const migration = await migrate(db);
    if (migration.to !== migration.from) logger.info(migration, 'Database migrated');
    // PGlite has no autovacuum of its own (platform/store/pglite-vacuum.ts).
    if (db.kind === 'pglite')
      cleanups.push(
        startPgliteUpkeep(db, logger.child({ component: 'pglite' }), config.pgliteUpkeepSeconds * 1000),
      );
    const admission =
      api && runWorker
        ? new AdmissionGate({ limit: config.triggerBacklog, maxWaitMs: config.triggerMaxWaitMs })
        : undefined;
    const changes = new ChangeFeed();
    const reads = new CachedReads(db, changes);
    await changes.start(db, logger);
    cleanups.push(() => changes.close());
    if (db.pglite && canServeSocket(config.dataDir)) {
      // Lets `npm run admin` reach this embedded database while the service runs.
      fs.rmSync(pgliteSocketPath(config.dataDir), { force: true });
      const socketServer = new PGLiteSocketServer({ db: db.pglite, path: pgliteSocketPath(config.dataDir) });
      await socketServer.start();
      cleanups.push(() => socketServer.stop());
    }

    const cipher = createSecretCipher(loadOrCreateSecretsKey(config.secretsKey, config.dataDir));
    const compute = new ComputePool({ threads: config.computeThreads });
    cleanups.push(() => compute.close());
    const services: Services = {
      config,
      logger,
      db,
      temporal,
      cipher,
      eagerStart: runWorker,
      backlog: new ExecutionBacklog({ temporal, config, logger }, config.backlogLimitMs),
      admission,
      reads,
      compute,
      schemas: new SchemaValidator(compute),
      eventStore: new EventStoreQueue(db),
      temporalUiUrl: config.temporal.uiUrl ?? devServer?.uiUrl,
      tracing,
    };
    if (api) {
      await bootstrap(db, { bootstrapApiKey: config.bootstrapApiKey, seedDemo: config.seedDemo }, logger);
      // Temporal's schedules match the saved workflows (a failure here must not keep the API down).
      await reconcileSchedules(services).catch((error: unknown) =>
        logger.warn({ err: error }, 'Could not reconcile the Temporal Schedules; the next start tries again'),
      );
    }

    let execution: RunningWorker | undefined;
    let runsAdopted: Promise<MoveOutcome[]> | undefined;
    let workerStopped: Promise<void> = new Promise(() => undefined);
    if (runWorker) {
      const bundle = workflowBundle ?? (await loadWorkflowBundle(logger));
      const version = config.workerVersioning && workerVersion(config.workerVersioning, bundle);
      const create = (probation: { identity: string } | undefined) =>
        createExecutionWorker({
          connection: temporal.connection,
          namespace: temporal.namespace,
          taskQueue: config.temporal.taskQueue,
          logger,
          db,
          reads,
          cipher,
          compute,
          allowPrivateDestinations: config.allowPrivateDestinations,
          maxResponseBytes: config.connector.maxResponseBytes,
          bodyIdleTimeoutMs: config.connector.bodyIdleTimeoutMs,
          ai: config.ai,
          aiTokensPerDay: config.workspaceLimits.ai_tokens_per_day,
          openExecutionsPerWorkspace: config.workspaceLimits.open_executions,
          webhookRetryScheduleMs: config.webhookRetryScheduleMs,
          deliveryLogRetentionDays: config.deliveryLogRetentionDays,
          executionRetentionDays: config.temporal.retentionDays,
          eventRetentionDays: config.eventRetentionDays,
          bundle,
          version,
          payloadCodecs: temporal.payloadCodecs,
          tracing,
          extraActivities,
          // Beside the API every start is eager, and takes a free slot of this worker (config.ts).
          tuning: api ? config.workerBesideApi : config.worker,
          onStepsBegin: admission && ((executionId: string) => admission.release(executionId)),
          probation,
        });
      await ensureHousekeepingSchedule(
        temporal.client,
        config.temporal.taskQueue,
        config.housekeepingIntervalMinutes,
      ).catch((error: unknown) =>
        logger.warn({ err: error }, 'Could not set up the housekeeping schedule; the next start tries again'),
      );
      // A run that crashed the worker before (maybe just now) must not crash this one, nor take the runs
      // that were in flight with it down too: probation (platform/temporal/crash-loop.ts).
      const running = await runProbationWorker({
        client: temporal.client,
        taskQueue: config.temporal.taskQueue,
        maxAttempts: config.temporal.crashLoopAttempts,
        logger,
        create,
      });
      execution = running;
      workerStopped = running.stopped;
      cleanups.push(() => running.stop());
      if (config.workerVersioning && version) {
        const current = await rollOutWorkerVersion(temporal.client, config.workerVersioning, version, logger);
        if (current && config.workerVersioning.rollout === 'replace') {
          // In the background: replaying many waiting runs takes a while, and the worker serves meanwhile.
          const stopping = new AbortController();
          runsAdopted = adoptReplayableRuns({
            signal: stopping.signal,
            client: temporal.client,
            taskQueue: config.temporal.taskQueue,
            version,
            bundle,
            dataConverter: workerDataConverter(temporal.payloadCodecs),
            identity: `switchyard worker ${process.pid} (WORKER_ROLLOUT=replace)`,
            logger,
          }).catch((error: unknown) => {
            // The worker serves new runs either way; the next start tries again.
            logger.warn(
              { err: error },
              'Could not move the runs pinned to other builds onto this build; move them with ' +
                '`npm run admin -- move-runs` (docs/operations.md#moving-runs-between-builds)',
            );
            return [];
          });
          const adoption = runsAdopted;
          // A stop does not wait for the rest of a long move: the run being checked finishes, the others
          // stay where they are for the next start.
          cleanups.push(() => {
            stopping.abort();
            return adoption.then(() => undefined);
          });
        }
      }
      logger.info(
        { taskQueue: config.temporal.taskQueue, namespace: temporal.namespace, ...version },
        'Worker running',
      );
    }

    if (config.metrics.enabled && config.metrics.port !== undefined) {
      const metricsServer = await startMetricsServer({
        host: config.metrics.host,
        port: config.metrics.port,
        token: config.metrics.token,
      });
      cleanups.push(() => new Promise<void>((resolve) => metricsServer.close(() => resolve())));
      logger.info({ host: config.metrics.host, port: listeningPort(metricsServer) }, 'Metrics at /metrics');
    } else if (config.metrics.enabled && !api) {
      logger.info('No METRICS_PORT: this process serves no metrics (docs/operations.md#metrics)');
    }

    let server: http.Server | undefined;
    if (api) {
      const handle = createApp(services).callback();
      // Slow or stalled clients must not hold connections for long: the whole request must arrive
      // within REQUEST_TIMEOUT_MS, its headers within 10 s (or that, if lower). Node checks these only
      // every `connectionsCheckingInterval` (30 s by default, which would let a stalled client stay up
      // to twice as long); once a second keeps the limits what they say.
      server = http.createServer(
        {
          requestTimeout: config.requestTimeoutMs,
          headersTimeout: Math.min(10_000, config.requestTimeoutMs),
          connectionsCheckingInterval: 1_000,
        },
        (req, res) => void handle(req, res),
      );
      server.on('clientError', handleClientError);
      await new Promise<void>((resolve, reject) => {
        server!.once('error', reject);
        server!.listen(config.port, config.host, resolve);
      });
      const s = server;
      cleanups.push(
        () =>
          new Promise<void>((resolve) => {
            s.close(() => resolve());
            s.closeIdleConnections();
            setTimeout(() => s.closeAllConnections(), config.shutdownTimeoutMs).unref();
          }),
      );
      const url = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${listeningPort(server)}`;
      logger.info({ url, docs: `${url}${API_REFERENCE_PATH}` }, 'API listening');
      // Events stored before a crash (or by a process that died) are dispatched from now on; it stops
      // first, so no dispatch is left half-way by the parts it needs.
      const dispatcher = new EventDispatcher(services);
      services.eventDispatch = dispatcher;
      dispatcher.start();
      cleanups.push(() => dispatcher.stop());
      const bulkRunner = new BulkRunner(services, {
        actionsPerSecond: config.bulkActionsPerSecond,
        leaseMs: config.bulkLeaseMs,
      });
      services.bulkRunner = bulkRunner;
      bulkRunner.start();
      cleanups.push(() => bulkRunner.stop());
      // Flow control's repairs (places a crash or a termination left behind).
      const admissionSweeper = new AdmissionSweeper(services, {
        sweepMs: config.admissionSweep.sweepMs,
        graceMs: config.admissionSweep.sweepMs,
        checkEveryMs: config.admissionSweep.checkEveryMs,
      });
      admissionSweeper.start();
      cleanups.push(() => admissionSweeper.stop());
      // Throttles' queues, granted as their windows free starts.
      const throttleSweeper = new ThrottleSweeper(services, { graceMs: config.admissionSweep.sweepMs });
      throttleSweeper.start();
      cleanups.push(() => throttleSweeper.stop());
      // Debounced runs a dying trigger left unstarted, and rows of runs that ended without a word.
      const debounceSweeper = new DebounceSweeper(services, {
        sweepMs: Math.min(2_000, config.admissionSweep.sweepMs),
        startGraceMs: 2 * config.admissionSweep.sweepMs,
        lateMs: config.admissionSweep.checkEveryMs,
      });
      debounceSweeper.start();
      cleanups.push(() => debounceSweeper.stop());
      // The queue gauges of /metrics: read from the tables at scrape time, so right across processes.
      cleanups.push(metrics.trackQueues((top) => queueTotalsByWorkflow(db, top)));
    }

    return {
      services,
      devServer,
      server,
      // The probation worker is replaced by a normal one once no run is suspected of crashing it.
      get worker() {
        return execution?.current;
      },
      workerStopped,
      runsAdopted,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A loopback port nobody listens on right now. */
function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let promise: Promise<void> | undefined;
  return () => (promise ??= fn());
}
