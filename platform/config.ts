/**
 * Configuration: one zod schema over the environment, parsed once at start, failing fast with every
 * problem listed. Every variable is documented in docs/configuration.md (test/unit/docs.test.ts checks it).
 */
import path from 'node:path';
import { z } from 'zod';
import { parsePayloadKeys, type PayloadKey } from './payload-keys';
import { MAX_STEP_TIMEOUT_MS } from '../core/definitions/schema';
import type { WorkspaceLimits } from '../core/workspace-limits';
import { DEFAULT_DEV_SERVER_MEMORY_LIMIT_MIB } from './temporal/dev-server';

const booleanFromEnv = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();

/** A workspace limit's default: a whole number (0 allows none), or `unlimited` (null). */
const workspaceLimit = (defaultValue: number | 'unlimited') =>
  z
    .union([z.literal('unlimited'), z.coerce.number().int().min(0)], {
      error: 'must be a whole number (0 or more) or "unlimited"',
    })
    .default(defaultValue)
    .transform((value) => (value === 'unlimited' ? null : value));

const retrySchedule = (defaultSeconds: number[]) =>
  z
    .string()
    .regex(/^\s*\d+(\.\d+)?\s*(,\s*\d+(\.\d+)?\s*)*$/, 'comma-separated delays in seconds, e.g. "5,300,1800"')
    .default(defaultSeconds.join(','))
    .transform((value) => value.split(',').map((part) => Math.round(Number(part.trim()) * 1000)));

/**
 * SECRETS_KEY values printed in this repository (docker-compose.yml's old default, the docs' `...`): public,
 * so a key equal to one of them protects nothing. Refused at start rather than silently used.
 */
export const PLACEHOLDER_SECRETS_KEYS: readonly string[] = ['insecure-placeholder-set-SECRETS_KEY', '...'];

const envSchema = z.object({
  PORT: port.default(3000),
  HOST: z.string().min(1).default('0.0.0.0'),
  DATA_DIR: z.string().min(1).default('./.data'),
  DATABASE_URL: z.string().min(1).optional(),
  DATABASE_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).max(3_600_000).default(15_000),
  TEMPORAL_ADDRESS: z.string().min(1).optional(),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('switchyard'),
  TEMPORAL_CLI_PATH: z.string().min(1).optional(),
  TEMPORAL_DEV_PORT: port.default(7233),
  TEMPORAL_UI_PORT: port.default(8233),
  TEMPORAL_UI_URL: z.string().url().optional(),
  TEMPORAL_DEV_IP: z.string().min(1).default('127.0.0.1'),
  TEMPORAL_DEV_MEMORY_LIMIT_MB: z.coerce
    .number()
    .int()
    .min(0)
    .max(1024 * 1024)
    .default(DEFAULT_DEV_SERVER_MEMORY_LIMIT_MIB),
  TEMPORAL_RETENTION_DAYS: positiveInt.max(3650).default(30),
  CRASH_LOOP_ATTEMPTS: positiveInt.min(2).max(100).default(3),
  BOOTSTRAP_API_KEY: z
    .string()
    .regex(/^sk_[A-Za-z0-9]{32,}$/, 'must look like sk_ followed by at least 32 base62 characters')
    .optional(),
  SECRETS_KEY: z
    .string()
    .min(1)
    .refine((value) => !PLACEHOLDER_SECRETS_KEYS.includes(value.trim()), {
      message: 'is a placeholder from the documentation; generate a key (openssl rand -base64 32)',
    })
    .optional(),
  PAYLOAD_ENCRYPTION_KEYS: z
    .string()
    .transform((text, ctx) => {
      const { keys, problems } = parsePayloadKeys(text);
      for (const message of problems) ctx.addIssue({ code: 'custom', message });
      return problems.length > 0 ? z.NEVER : keys;
    })
    .optional(),
  AI_BASE_URL: z.string().url().optional(),
  AI_API_KEY: z.string().min(1).optional(),
  AI_MODEL: z.string().min(1).optional(),
  ALLOW_PRIVATE_DESTINATIONS: booleanFromEnv.default(false),
  CONNECTOR_MAX_RESPONSE_BYTES: positiveInt.max(10 * 1024 * 1024).default(1024 * 1024),
  CONNECTOR_BODY_IDLE_TIMEOUT_MS: positiveInt.max(MAX_STEP_TIMEOUT_MS).default(30_000),
  WEBHOOK_RETRY_SCHEDULE: retrySchedule([5, 300, 1800, 7200, 18000, 36000, 36000]),
  DELIVERY_LOG_RETENTION_DAYS: positiveInt.default(30),
  EVENT_RETENTION_DAYS: positiveInt.max(3650).default(7),
  BULK_ACTIONS_PER_SECOND: positiveInt.max(1000).default(20),
  BULK_LEASE_MS: positiveInt.min(5_000).max(3_600_000).default(60_000),
  ADMISSION_SWEEP_MS: positiveInt.max(3_600_000).default(5_000),
  ADMISSION_CHECK_MS: positiveInt.max(86_400_000).default(60_000),
  HOUSEKEEPING_INTERVAL_MINUTES: positiveInt.default(60),
  PGLITE_UPKEEP_SECONDS: positiveInt.default(60),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  LOG_FORMAT: z.enum(['auto', 'json', 'pretty']).default('auto'),
  METRICS_ENABLED: booleanFromEnv.default(true),
  METRICS_PORT: port.optional(),
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  BODY_LIMIT_BYTES: positiveInt.default(1024 * 1024),
  RATE_LIMIT_PER_SECOND: positiveInt.default(50),
  RATE_LIMIT_BURST: positiveInt.default(100),
  WORKSPACE_RATE_LIMIT_PER_SECOND: positiveInt.default(200),
  WORKSPACE_RATE_LIMIT_BURST: positiveInt.default(400),
  WORKSPACE_MAX_WORKFLOWS: workspaceLimit(1000),
  WORKSPACE_MAX_SECRETS: workspaceLimit(500),
  WORKSPACE_MAX_WEBHOOK_ENDPOINTS: workspaceLimit(50),
  WORKSPACE_MAX_API_KEYS: workspaceLimit(100),
  WORKSPACE_MAX_OPEN_EXECUTIONS: workspaceLimit(1000),
  WORKSPACE_MAX_STEPS_PER_DEFINITION: workspaceLimit(200),
  WORKSPACE_MAX_AI_TOKENS_PER_DAY: workspaceLimit('unlimited'),
  WORKSPACE_MAX_CONSOLE_SESSIONS: positiveInt.default(100),
  SEED_DEMO: booleanFromEnv.default(true),
  SHUTDOWN_TIMEOUT_MS: positiveInt.default(10_000),
  REQUEST_TIMEOUT_MS: positiveInt.default(30_000),
  BACKLOG_LIMIT_MS: z.coerce.number().int().min(0).default(0),
  TRIGGER_BACKLOG: positiveInt.default(16),
  TRIGGER_MAX_WAIT_MS: positiveInt.default(10_000),
  COMPUTE_THREADS: positiveInt.max(64).default(2),
  // Default: WORKFLOW_TASK_SLOTS_ALONE or, in a process that runs the API too, WORKFLOW_TASK_SLOTS_BESIDE_API.
  WORKER_WORKFLOW_TASK_SLOTS: positiveInt.min(2).optional(),
  WORKER_LOCAL_ACTIVITY_SLOTS: positiveInt.default(100),
  WORKER_ACTIVITY_SLOTS: positiveInt.default(200),
  // Default: min(10, WORKER_LOCAL_ACTIVITY_SLOTS); at most WORKER_LOCAL_ACTIVITY_SLOTS (checked in loadConfig).
  WORKER_LOCAL_CALL_SLOTS_PER_WORKSPACE: positiveInt.optional(),
  WORKER_CACHED_WORKFLOWS: z.coerce.number().int().min(0).default(200),
  WORKER_VERSIONING: booleanFromEnv.default(true),
  WORKER_DEPLOYMENT_NAME: z
    .string()
    .min(1)
    .max(255)
    .regex(/^[^.]+$/, 'must not contain a dot')
    .optional(),
  WORKER_BUILD_ID: z.string().min(1).max(255).optional(),
  WORKER_ROLLOUT: z.enum(['replace', 'rolling', 'manual']).default('replace'),
  CONSOLE_SESSION_HOURS: z.coerce.number().positive().max(720).default(12),
  CONSOLE_SECURE_COOKIE: booleanFromEnv.optional(),
  TRUST_PROXY: booleanFromEnv.default(false),
});

export type Env = z.infer<typeof envSchema>;

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  temporal: {
    /** Address of an existing cluster; undefined means "start the dev server". */
    address: string | undefined;
    namespace: string;
    taskQueue: string;
    cliPath: string | undefined;
    devPort: number;
    uiPort: number;
    /** Where people open Temporal UI (the console links runs to it); unset: the embedded dev server's UI. */
    uiUrl: string | undefined;
    /** GOMEMLIMIT of the dev server that `npm start` runs, in MiB; 0: none. */
    devMemoryLimitMiB: number;
    devIp: string;
    retentionDays: number;
    /** A run whose workflow task reached this attempt after crashing workers is terminated at worker start. */
    crashLoopAttempts: number;
  };
  bootstrapApiKey: string | undefined;
  secretsKey: string | undefined;
  /**
   * Keys that encrypt what goes into Temporal (docs/operations.md#encrypted-step-data), the current one
   * first; undefined: payloads are written in clear.
   */
  payloadEncryptionKeys: PayloadKey[] | undefined;
  ai: { baseUrl: string | undefined; apiKey: string | undefined; model: string | undefined };
  allowPrivateDestinations: boolean;
  /**
   * Connector and AI calls: the largest response body read (more fails the step with
   * `response_too_large`), and the longest a response body may pause between two chunks.
   */
  connector: { maxResponseBytes: number; bodyIdleTimeoutMs: number };
  webhookRetryScheduleMs: number[];
  /** Finished webhook deliveries and their attempts are kept this long (the housekeeping job purges them). */
  deliveryLogRetentionDays: number;
  /** Events sent to POST /v1/events are kept this long, with what was done with them (the housekeeping job purges them). */
  eventRetentionDays: number;
  /** Actions a bulk operation takes per second, per API process (src/bulk/runner.ts). */
  bulkActionsPerSecond: number;
  /** How long a bulk runner's claim on an operation holds without renewal (a dead runner's is taken over after it). */
  bulkLeaseMs: number;
  /** Flow control's sweeper (src/flow-control/admission-sweeper.ts): its pass, and its check of rows against runs. */
  admissionSweep: { sweepMs: number; checkEveryMs: number };
  /** How often the housekeeping job runs (a Temporal Schedule per task queue). */
  housekeepingIntervalMinutes: number;
  /** How often the process that opened PGlite vacuums its tables (platform/store/pglite-vacuum.ts). */
  pgliteUpkeepSeconds: number;
  logLevel: Env['LOG_LEVEL'];
  /** `auto`: readable lines (pino-pretty) when stdout is a terminal, JSON lines otherwise. */
  logFormat: Env['LOG_FORMAT'];
  /**
   * Prometheus metrics (docs/operations.md#metrics): `GET /metrics` on `port` when set, else on the API's
   * port; with `token`, only for `Authorization: Bearer <token>`.
   */
  /** `host`: where the METRICS_PORT server listens (METRICS_HOST, loopback unless set). */
  metrics: { enabled: boolean; port: number | undefined; host: string; token: string | undefined };
  bodyLimitBytes: number;
  /** Token bucket per API key (RATE_LIMIT_*). */
  rateLimit: { perSecond: number; burst: number };
  /** Token bucket per workspace, taken beside the key's, so more keys do not mean more requests. */
  workspaceRateLimit: { perSecond: number; burst: number };
  /**
   * Every workspace's limits unless an operator changed them for it (docs/operations.md#workspace-limits);
   * null: unlimited.
   */
  workspaceLimits: WorkspaceLimits;
  /** Console sessions a workspace keeps at most; a new sign-in past it ends the oldest. */
  maxConsoleSessionsPerWorkspace: number;
  seedDemo: boolean;
  shutdownTimeoutMs: number;
  /** How long a client may take to send a whole request (headers and body). */
  requestTimeoutMs: number;
  /** Triggers answer 429 while workflow tasks wait longer than this to start (0: never). */
  backlogLimitMs: number;
  /** With the worker in the same process: accepted executions whose steps have not begun, at most (admission.ts). */
  triggerBacklog: number;
  /** How long a trigger waits for its turn before it is refused (429). */
  triggerMaxWaitMs: number;
  /**
   * Threads that run workspaces' schemas and regular expressions off the event loop, each task within a
   * time limit (platform/compute/pool.ts).
   */
  computeThreads: number;
  /** How much work one worker process takes on at once (docs/benchmarks.md#worker-settings). */
  worker: WorkerTuning;
  /** The same for a worker that runs in one process with the API (`npm start`): more workflow-task slots. */
  workerBesideApi: WorkerTuning;
  /**
   * Worker Deployment Versioning (docs/operations.md#deploys-worker-builds-and-versioning); undefined: the
   * worker polls unversioned.
   */
  workerVersioning: WorkerVersioning | undefined;
  /** The web console's sign-in: how long a session lasts, and whether its cookie is Secure (undefined: when the request came over TLS). */
  console: { sessionTtlMs: number; secureCookie: boolean | undefined };
  /** Trust X-Forwarded-Proto (and -Host, -For) from a proxy in front (TRUST_PROXY). */
  trustProxy: boolean;
  /** PostgreSQL statement_timeout of the pool's connections (0: none). */
  databaseStatementTimeoutMs: number;
  /** The environment this was read from: @temporalio/envconfig reads its TEMPORAL_* variables from it too. */
  environment: Record<string, string>;
}

export interface WorkerTuning {
  /** Workflow tasks in progress at once (a run's steps run inside its task). */
  workflowTaskSlots: number;
  /** Step local activities running at once. */
  localActivitySlots: number;
  /** Activities (retries of connector and ai steps, webhook deliveries) running at once. */
  activitySlots: number;
  /** Runs kept in memory between their workflow tasks (an approval's wait, a retry); 0: none. */
  cachedWorkflows: number;
  /**
   * Connector and ai calls one workspace may run at once in the step local activity of this worker; its
   * further steps run as regular activities, shared fairly by Temporal (workers/activities/step-slots.ts).
   */
  localCallSlotsPerWorkspace: number;
}

/**
 * A tenth of the default local activity slots: one workspace's slow calls never hold more, and a run's
 * call still goes at once while fewer than ten of its workspace's calls are in flight.
 */
export const DEFAULT_LOCAL_CALL_SLOTS_PER_WORKSPACE = 10;

/**
 * Workflow-task slots of a worker process of its own. With 100, such a worker under the load test stopped
 * polling (every slot held, the process idle: docs/benchmarks.md#eager-starts-2026-11-27-later) in three runs
 * of three; with 40 it never did. It gets no eager starts, so more slots would only queue more tasks inside
 * it, where Temporal's fairness between workspaces no longer applies.
 */
export const WORKFLOW_TASK_SLOTS_ALONE = 40;
/**
 * Workflow-task slots of a worker that runs in one process with the API: a start is eager only when a slot
 * is free at that moment, and with 100 every start of the onboard benchmark was, against 70–90 % with 40,
 * for 20–34 % less CPU per run and a lower p99 at 50 callers (docs/benchmarks.md#workflow-task-slots-beside-the-api).
 */
export const WORKFLOW_TASK_SLOTS_BESIDE_API = 100;

function workerTuningOf(e: z.infer<typeof envSchema>, defaultWorkflowTaskSlots: number): WorkerTuning {
  return {
    workflowTaskSlots: e.WORKER_WORKFLOW_TASK_SLOTS ?? defaultWorkflowTaskSlots,
    localActivitySlots: e.WORKER_LOCAL_ACTIVITY_SLOTS,
    activitySlots: e.WORKER_ACTIVITY_SLOTS,
    cachedWorkflows: e.WORKER_CACHED_WORKFLOWS,
    localCallSlotsPerWorkspace:
      e.WORKER_LOCAL_CALL_SLOTS_PER_WORKSPACE ??
      Math.min(DEFAULT_LOCAL_CALL_SLOTS_PER_WORKSPACE, e.WORKER_LOCAL_ACTIVITY_SLOTS),
  };
}

export interface WorkerVersioning {
  /** The Worker Deployment this worker belongs to (default: the task queue's name). */
  deploymentName: string;
  /** This build's id; undefined: a hash of the workflow bundle, so new workflow code is a new build. */
  buildId: string | undefined;
  /**
   * What the worker does when it starts:
   * - replace: makes its build current and moves runs pinned to other builds onto it (one worker, or
   *   identical workers replaced together: the embedded setup, docker-compose);
   * - rolling: makes its build current; older builds finish their own runs (keep their workers until drained);
   * - manual: only polls; an operator makes the build current (`temporal worker deployment set-current-version`).
   */
  rollout: 'replace' | 'rolling' | 'manual';
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Reads the configuration from an environment (process.env by default); throws ConfigError listing every problem. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Empty strings mean "unset": `FOO= npm start` should not fail validation.
  const present = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value !== ''),
  );
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`));
  }
  const e = parsed.data;
  if (
    e.WORKER_LOCAL_CALL_SLOTS_PER_WORKSPACE !== undefined &&
    e.WORKER_LOCAL_CALL_SLOTS_PER_WORKSPACE > e.WORKER_LOCAL_ACTIVITY_SLOTS
  ) {
    throw new ConfigError([
      `WORKER_LOCAL_CALL_SLOTS_PER_WORKSPACE: must be at most WORKER_LOCAL_ACTIVITY_SLOTS (${e.WORKER_LOCAL_ACTIVITY_SLOTS}), got ${e.WORKER_LOCAL_CALL_SLOTS_PER_WORKSPACE}`,
    ]);
  }
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir: path.resolve(e.DATA_DIR),
    databaseUrl: e.DATABASE_URL,
    databaseStatementTimeoutMs: e.DATABASE_STATEMENT_TIMEOUT_MS,
    temporal: {
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE,
      taskQueue: e.TEMPORAL_TASK_QUEUE,
      cliPath: e.TEMPORAL_CLI_PATH,
      devPort: e.TEMPORAL_DEV_PORT,
      uiPort: e.TEMPORAL_UI_PORT,
      uiUrl: e.TEMPORAL_UI_URL?.replace(/\/+$/, ''),
      devIp: e.TEMPORAL_DEV_IP,
      devMemoryLimitMiB: e.TEMPORAL_DEV_MEMORY_LIMIT_MB,
      retentionDays: e.TEMPORAL_RETENTION_DAYS,
      crashLoopAttempts: e.CRASH_LOOP_ATTEMPTS,
    },
    bootstrapApiKey: e.BOOTSTRAP_API_KEY,
    secretsKey: e.SECRETS_KEY,
    payloadEncryptionKeys: e.PAYLOAD_ENCRYPTION_KEYS,
    ai: { baseUrl: e.AI_BASE_URL, apiKey: e.AI_API_KEY, model: e.AI_MODEL },
    allowPrivateDestinations: e.ALLOW_PRIVATE_DESTINATIONS,
    connector: {
      maxResponseBytes: e.CONNECTOR_MAX_RESPONSE_BYTES,
      bodyIdleTimeoutMs: e.CONNECTOR_BODY_IDLE_TIMEOUT_MS,
    },
    webhookRetryScheduleMs: e.WEBHOOK_RETRY_SCHEDULE,
    deliveryLogRetentionDays: e.DELIVERY_LOG_RETENTION_DAYS,
    eventRetentionDays: e.EVENT_RETENTION_DAYS,
    bulkActionsPerSecond: e.BULK_ACTIONS_PER_SECOND,
    bulkLeaseMs: e.BULK_LEASE_MS,
    admissionSweep: { sweepMs: e.ADMISSION_SWEEP_MS, checkEveryMs: e.ADMISSION_CHECK_MS },
    housekeepingIntervalMinutes: e.HOUSEKEEPING_INTERVAL_MINUTES,
    pgliteUpkeepSeconds: e.PGLITE_UPKEEP_SECONDS,
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
    metrics: {
      enabled: e.METRICS_ENABLED,
      port: e.METRICS_PORT,
      host: e.METRICS_HOST,
      token: e.METRICS_TOKEN,
    },
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    rateLimit: { perSecond: e.RATE_LIMIT_PER_SECOND, burst: e.RATE_LIMIT_BURST },
    workspaceRateLimit: { perSecond: e.WORKSPACE_RATE_LIMIT_PER_SECOND, burst: e.WORKSPACE_RATE_LIMIT_BURST },
    workspaceLimits: {
      workflows: e.WORKSPACE_MAX_WORKFLOWS,
      secrets: e.WORKSPACE_MAX_SECRETS,
      webhook_endpoints: e.WORKSPACE_MAX_WEBHOOK_ENDPOINTS,
      api_keys: e.WORKSPACE_MAX_API_KEYS,
      open_executions: e.WORKSPACE_MAX_OPEN_EXECUTIONS,
      steps_per_definition: e.WORKSPACE_MAX_STEPS_PER_DEFINITION,
      ai_tokens_per_day: e.WORKSPACE_MAX_AI_TOKENS_PER_DAY,
    },
    maxConsoleSessionsPerWorkspace: e.WORKSPACE_MAX_CONSOLE_SESSIONS,
    seedDemo: e.SEED_DEMO,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
    backlogLimitMs: e.BACKLOG_LIMIT_MS,
    triggerBacklog: e.TRIGGER_BACKLOG,
    triggerMaxWaitMs: e.TRIGGER_MAX_WAIT_MS,
    computeThreads: e.COMPUTE_THREADS,
    worker: workerTuningOf(e, WORKFLOW_TASK_SLOTS_ALONE),
    workerBesideApi: workerTuningOf(e, WORKFLOW_TASK_SLOTS_BESIDE_API),
    workerVersioning: e.WORKER_VERSIONING
      ? {
          // Temporal writes a version as `deployment.build`, so a deployment's name has no dot.
          deploymentName: e.WORKER_DEPLOYMENT_NAME ?? e.TEMPORAL_TASK_QUEUE.replaceAll('.', '-'),
          buildId: e.WORKER_BUILD_ID,
          rollout: e.WORKER_ROLLOUT,
        }
      : undefined,
    console: {
      sessionTtlMs: Math.round(e.CONSOLE_SESSION_HOURS * 3_600_000),
      secureCookie: e.CONSOLE_SECURE_COOKIE,
    },
    trustProxy: e.TRUST_PROXY,
    environment: present as Record<string, string>,
  };
}

/** The environment variable names the service reads; the docker-compose test checks against this list. */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(envSchema.shape);
