/**
 * The Temporal worker of executions: the prebuilt workflow bundle (`npm run build` writes it; bundling
 * at every start would cost seconds), and the activities wired to this process's dependencies.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@temporalio/client';
import {
  DefaultLogger,
  Runtime,
  Worker,
  type NativeConnection,
  type WorkerOptions,
  type WorkflowBundleOption,
} from '@temporalio/worker';
import type { DataConverter, PayloadCodec, WorkerDeploymentVersion } from '@temporalio/common';
import type { WorkerTuning } from '../platform/config';
import type { Logger } from '../platform/logger';
import { workflowBundlePath } from '../platform/paths';
import { dataConverterOf } from '../platform/temporal/encryption-codec';
import { createActivities, type ActivityDeps } from './activities';
import type { Tracing } from '../platform/observability/tracing';
import { activityTelemetry, metricsSinks, tracedActivity, tracingSinks } from './telemetry';
import { bundleWorkflows } from './workflow-bundle';

export interface ExecutionWorkerOptions extends Omit<ActivityDeps, 'client'> {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  logger: Logger;
  /** A bundle built earlier in this process (tests share one across workers). */
  bundle?: WorkflowBundleOption;
  tuning: WorkerTuning;
  /** Told when a batch of an execution's steps begins (ActivityDeps.onStepsBegin). */
  onStepsBegin?: (executionId: string) => void;
  /**
   * This worker's Worker Deployment Version (platform/temporal/worker-deployment.ts); undefined: unversioned.
   * Runs are pinned to the version that started them unless their workflow says otherwise.
   */
  version?: WorkerDeploymentVersion;
  /** Payload encryption (platform/temporal/encryption-codec.ts); none: payloads in clear. */
  payloadCodecs?: readonly PayloadCodec[];
  /** OpenTelemetry (platform/observability/tracing.ts); none: no tracing interceptor or sink at all. */
  tracing?: Tracing;
  /** Activities besides the service's own (tests whose bundle calls them). */
  extraActivities?: Record<string, (...args: never[]) => Promise<unknown>>;
  /**
   * Probation (platform/temporal/crash-loop.ts): this identity, one workflow task at a time and no sticky
   * cache (the SDK allows a single workflow task slot only without one), so that a crash names its run.
   */
  probation?: { identity: string };
}

const SDK_LEVELS = { TRACE: 'trace', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' } as const;

/**
 * Routes the Temporal SDK's own logs into our structured logger. Must run before the first connection
 * of the process; later calls are ignored.
 */
export function installTemporalRuntime(
  logger: Logger,
  options: {
    /** Where the SDK's Prometheus exporter listens (`127.0.0.1:<port>`); none: no SDK metrics. */
    prometheusBindAddress?: string;
  } = {},
): boolean {
  const sdkLogger = logger.child({ component: 'temporal-sdk' });
  try {
    Runtime.install({
      logger: new DefaultLogger('WARN', (entry) => {
        sdkLogger[SDK_LEVELS[entry.level]]({ ...entry.meta }, entry.message);
      }),
      telemetryOptions: {
        // The native core logs (connection retries and the like) go through the same logger, as JSON.
        logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} },
        ...(options.prometheusBindAddress && {
          metrics: {
            prometheus: { bindAddress: options.prometheusBindAddress, useSecondsForDurations: true },
          },
        }),
      },
    });
    return true;
  } catch {
    // Already installed in this process (tests create several services): the first one's settings hold.
    return false;
  }
}

/** What a worker logs when it bundles its workflow code at start (an image ships the bundle instead). */
export const BUNDLING_AT_START =
  'No prebuilt workflow bundle; bundling the workflow code now (run `npm run build` to skip this)';

/** The workflow bundle: the one `npm run build` wrote, or a fresh one (development without a build). */
export async function loadWorkflowBundle(logger: Logger): Promise<WorkflowBundleOption> {
  if (fs.existsSync(workflowBundlePath)) return { codePath: workflowBundlePath };
  logger.info(BUNDLING_AT_START);
  return { code: await bundleWorkflows(path.resolve(__dirname, '..')) };
}

/**
 * Worker settings from the configuration (WORKER_*, chosen from measurements:
 * docs/benchmarks.md#worker-settings); the benchmark's floor worker takes the same, so that the comparison is
 * of the code, not the settings.
 */
export function workerTuning(tuning: WorkerTuning) {
  return {
    maxConcurrentWorkflowTaskExecutions: tuning.workflowTaskSlots,
    maxConcurrentLocalActivityExecutions: tuning.localActivitySlots,
    maxConcurrentActivityTaskExecutions: tuning.activitySlots,
    maxCachedWorkflows: tuning.cachedWorkflows,
  } satisfies Partial<WorkerOptions>;
}

/**
 * The data converter of the worker's workflows: the payload codecs, and with encryption on, the failure
 * converter that encrypts failure messages too. Replays of its histories (run-moves.ts) need the same.
 */
export function workerDataConverter(payloadCodecs: readonly PayloadCodec[]): DataConverter {
  const dataConverter = dataConverterOf(payloadCodecs);
  return payloadCodecs.length > 0
    ? { ...dataConverter, failureConverterPath: require.resolve('./failure-converter') }
    : dataConverter;
}

export async function createExecutionWorker(options: ExecutionWorkerOptions): Promise<Worker> {
  const encryptsPayloads = (options.payloadCodecs?.length ?? 0) > 0;
  const dataConverter = dataConverterOf(options.payloadCodecs ?? []);
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    workflowBundle: options.bundle ?? (await loadWorkflowBundle(options.logger)),
    dataConverter: workerDataConverter(options.payloadCodecs ?? []),
    activities: {
      ...options.extraActivities,
      ...createActivities({
        ...options,
        localCallSlotsPerWorkspace: options.tuning.localCallSlotsPerWorkspace,
        // Half the slots a call holds (its local activity's, its run's workflow task's) stay for the shares.
        localCallsBorrowable: Math.floor(
          Math.min(options.tuning.workflowTaskSlots, options.tuning.localActivitySlots) / 2,
        ),
        encryptsPayloads,
        client: new Client({ connection: options.connection, namespace: options.namespace, dataConverter }),
      }),
    },
    interceptors: {
      // Tracing's first: ours then annotates its span.
      activity: options.tracing ? [tracedActivity(options.tracing), activityTelemetry] : [activityTelemetry],
    },
    sinks: options.tracing ? { ...metricsSinks, ...tracingSinks(options.tracing) } : metricsSinks,
    ...workerTuning(options.tuning),
    ...(options.probation && {
      identity: options.probation.identity,
      maxConcurrentWorkflowTaskExecutions: 1,
      maxCachedWorkflows: 0,
    }),
    ...(options.version && {
      workerDeploymentOptions: {
        useWorkerVersioning: true,
        version: options.version,
        defaultVersioningBehavior: 'PINNED',
      },
    }),
    shutdownGraceTime: '10s',
  });
}
