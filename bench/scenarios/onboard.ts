/**
 * `onboard`: the flow users compare with n8n — a signed hook → rules → HTTP call — against the
 * service as `npm start` runs it, each variant on a stack of its own (bench/onboard/service.ts):
 *
 * - `hook_pglite`: signed POST /v1/hooks/onboard, embedded PGlite (what a newcomer runs);
 * - `hook_traced`: the same with OpenTelemetry traces on (OTEL_EXPORTER_OTLP_ENDPOINT to a local OTLP
 *   sink that counts spans), run right after hook_pglite so that both see the same machine;
 * - `hook_encrypted`: the same with PAYLOAD_ENCRYPTION_KEYS set (every payload through the encryption codec),
 *   run soon after hook_pglite so that both see the same machine;
 * - `trigger_pglite`: POST /v1/workflows/onboard/trigger with an API key, PGlite;
 * - `hook_postgres`: the signed hook, with the database on the PostgreSQL server;
 * - `floor_tight`: the floor the others are set beside (versus_floor): the tightest service one could
 *   hand-write on the same SDK, one process taking the same signed hook and starting every run eagerly
 *   (bench/onboard/floor-service.ts), on a dev server started the same way;
 * - `floor_contract`: that floor carrying what our contract adds to every run (our start options, worker
 *   versioning with pinned runs, our payloads: bench/onboard/floor-tight.ts), so that the report shows
 *   which share of our cost the contract asks of any service (versus_contract_floor) and which is ours;
 * - `floor` (only when named): the looser floor it replaced, the same flow on the raw SDK
 *   (bench/workflows/onboard-floor.ts: the rule inline in workflow code, one activity for the POST),
 *   started with `client.workflow.start` from this process, its worker a process of its own with the
 *   service worker's settings.
 *
 * Each: unmeasured warm-up, then a phase per concurrency (closed loop: BENCH_ONBOARD starts each), every
 * process's CPU from /proc (by thread too). Sizes: BENCH_ONBOARD (2000), BENCH_ONBOARD_WARMUP (200),
 * BENCH_ONBOARD_CONCURRENCY ("10,50"), BENCH_ONBOARD_VARIANTS (all but `floor`, and `before` unless
 * BENCH_ONBOARD_BEFORE is set), BENCH_POSTGRES_URL
 * (TEST_DATABASE_URL's default server), BENCH_PROFILE_DIR (CPU profiles of the service process).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { Pool } from 'undici';
import { createLogger } from '../../platform/logger';
import { ensureTemporalCli } from '../../platform/temporal/cli';
import { EncryptionCodec, isEncrypted } from '../../platform/temporal/encryption-codec';
import { parsePayloadKeys } from '../../platform/payload-keys';
import { startFloorWorker, type FloorWorker } from '../floor-process';
import { runPhases, RetryLater, type PhaseResult, type Starter } from '../onboard/driver';
import { startFloorDevServer } from '../onboard/floor-dev-server';
import { benchFloorTight } from '../onboard/floor-tight';
import { ONBOARD_WORKFLOW_ID, onboardDefinition, onboardInput } from '../onboard/flow';
import { postSignedHook } from '../onboard/hook-request';
import { startOnboardReceiver, type OnboardReceiver } from '../onboard/receiver';
import { startServiceProcess, type ServiceUnderTest } from '../onboard/service';
import { progress } from '../stack';
import { ratio } from '../stats';
import { ONBOARD_FLOOR_WORKFLOW_TYPE } from '../workflows/onboard-floor';

export const ONBOARD_VARIANTS = [
  'hook_pglite',
  'hook_traced',
  'hook_encrypted',
  'trigger_pglite',
  'hook_postgres',
  'floor_tight',
  'floor_contract',
  'floor',
  'before',
] as const;
type Variant = (typeof ONBOARD_VARIANTS)[number];

export interface OnboardSettings {
  count: number;
  warmup: number;
  concurrencies: number[];
  variants: Variant[];
  postgresUrl: string;
  profileDir: string | undefined;
  /** A checkout of an earlier build (BENCH_ONBOARD_BEFORE): the `before` variant runs it like hook_pglite. */
  beforeRoot: string | undefined;
}

export function onboardSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): OnboardSettings {
  const int = (name: string, fallback: number) => {
    const value = Number(env[name] ?? fallback);
    if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer`);
    return value;
  };
  const beforeRoot = env['BENCH_ONBOARD_BEFORE'];
  const defaults = ONBOARD_VARIANTS.filter(
    (variant) => variant !== 'floor' && (variant !== 'before' || beforeRoot),
  );
  const variants = (env['BENCH_ONBOARD_VARIANTS'] ?? defaults.join(','))
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
  for (const variant of variants)
    if (!(ONBOARD_VARIANTS as readonly string[]).includes(variant))
      throw new Error(
        `BENCH_ONBOARD_VARIANTS: unknown variant "${variant}" (${ONBOARD_VARIANTS.join(', ')})`,
      );
  return {
    count: int('BENCH_ONBOARD', 2000),
    warmup: int('BENCH_ONBOARD_WARMUP', 200),
    concurrencies: (env['BENCH_ONBOARD_CONCURRENCY'] ?? '10,50').split(',').map((c) => Number(c.trim())),
    variants: variants as Variant[],
    postgresUrl:
      env['BENCH_POSTGRES_URL'] ?? env['TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    profileDir: env['BENCH_PROFILE_DIR'],
    beforeRoot,
  };
}

export interface VariantResult {
  /** One phase per concurrency, keyed `c<N>`. */
  phases: Record<string, PhaseResult>;
  database?: string;
  /** hook_encrypted: what the codec itself costs per execution (measureCodec). */
  codec?: Awaited<ReturnType<typeof measureCodec>>;
}

export async function benchOnboard(settings: OnboardSettings) {
  const cliPath = await ensureTemporalCli(process.env['TEMPORAL_CLI_PATH'], silentLogger);
  const receiver = await startOnboardReceiver();
  const results: Partial<Record<Variant, VariantResult>> = {};
  try {
    for (const variant of settings.variants) {
      progress(`onboard: ${variant}`);
      results[variant] =
        variant === 'floor_tight' || variant === 'floor_contract'
          ? await benchFloorTight(
              settings,
              cliPath,
              receiver,
              settings.profileDir && path.join(settings.profileDir, variant),
              { contract: variant === 'floor_contract' },
            )
          : variant === 'floor'
            ? await benchFloor(settings, cliPath, receiver)
            : await benchService(variant, settings, cliPath, receiver);
    }
  } finally {
    await receiver.stop();
  }
  return {
    settings: { ...settings, postgresUrl: undefined, beforeRoot: undefined },
    ...(settings.beforeRoot ? { before_commit: await commitOf(settings.beforeRoot) } : {}),
    ...results,
    versus_floor: versusFloor(results),
    versus_contract_floor: results.floor_contract ? versusFloor(results, 'floor_contract') : null,
    tracing_cost: tracingCost(results),
    encryption_cost: encryptionCost(results),
  };
}

/**
 * What a variant costs beside hook_pglite, at each concurrency: CPU ms per execution added (all processes
 * and the service process) and executions/s as a ratio. Null unless both ran.
 */
function costBeside(results: Partial<Record<Variant, VariantResult>>, variant: Variant) {
  const off = results.hook_pglite?.phases;
  const on = results[variant]?.phases;
  if (!off || !on) return null;
  const difference = (a: number | undefined, b: number | undefined) =>
    a === undefined || b === undefined ? null : Math.round((a - b) * 100) / 100;
  const phases: Record<
    string,
    {
      cpu_ms_added_per_execution: number | null;
      service_cpu_ms_added: number | null;
      executions_per_sec: number | null;
    }
  > = {};
  for (const [phase, measured] of Object.entries(on)) {
    const base = off[phase];
    if (!base) continue;
    phases[phase] = {
      cpu_ms_added_per_execution: difference(
        measured.cpu_ms_per_execution['total'],
        base.cpu_ms_per_execution['total'],
      ),
      service_cpu_ms_added: difference(
        measured.cpu_ms_per_execution['service'],
        base.cpu_ms_per_execution['service'],
      ),
      executions_per_sec: ratio(measured.executions_per_sec ?? NaN, base.executions_per_sec ?? NaN),
    };
  }
  return phases;
}

/** What encrypting step data costs: hook_encrypted beside hook_pglite. */
function encryptionCost(results: Partial<Record<Variant, VariantResult>>) {
  return costBeside(results, 'hook_encrypted');
}

/**
 * Each other variant's executions/s and CPU per execution beside a floor's, per concurrency: the tight
 * floor's when it ran, else the loose one's, unless named (`against` says which).
 */
function versusFloor(
  results: Partial<Record<Variant, VariantResult>>,
  against: Variant = results.floor_tight ? 'floor_tight' : 'floor',
) {
  const floor = results[against]?.phases;
  if (!floor) return null;
  const out: Record<
    string,
    Record<string, { executions_per_sec: number | null; cpu_ms_per_execution: number | null }> | string
  > = { against };
  for (const [variant, result] of Object.entries(results)) {
    if (variant === against || !result) continue;
    out[variant] = {};
    for (const [phase, measured] of Object.entries(result.phases)) {
      const base = floor[phase];
      if (!base) continue;
      out[variant][phase] = {
        executions_per_sec: ratio(measured.executions_per_sec, base.executions_per_sec),
        cpu_ms_per_execution: ratio(
          measured.cpu_ms_per_execution['total'] ?? NaN,
          base.cpu_ms_per_execution['total'] ?? NaN,
        ),
      };
    }
  }
  return out;
}

/**
 * What tracing costs: hook_traced beside hook_pglite (costBeside), and the spans the sink received.
 */
function tracingCost(results: Partial<Record<Variant, VariantResult>>) {
  const phases = costBeside(results, 'hook_traced');
  return phases ? { phases, spans_received: tracedSpans ?? null } : null;
}

/** Spans the OTLP sink of hook_traced received (all of its phases, warm-up included). */
let tracedSpans: number | undefined;

/** An OTLP/HTTP receiver that only counts spans (JSON, what the service's exporter sends). */
async function startTraceSink(): Promise<{ url: string; spans: () => number; stop(): Promise<void> }> {
  let spans = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      spans += (body.match(/"spanId"/g) ?? []).length;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    spans: () => spans,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function benchService(
  variant: Exclude<Variant, 'floor' | 'floor_tight' | 'floor_contract'>,
  settings: OnboardSettings,
  cliPath: string,
  receiver: OnboardReceiver,
): Promise<VariantResult> {
  const encryptionKeys = `bench:${randomBytes(32).toString('base64')}`;
  const traceSink = variant === 'hook_traced' ? await startTraceSink() : undefined;
  const service = await startServiceProcess({
    cliPath,
    ...(variant === 'hook_postgres' ? { postgresUrl: settings.postgresUrl } : {}),
    ...(settings.profileDir ? { profileDir: path.join(settings.profileDir, variant) } : {}),
    ...(variant === 'before' ? { root: settings.beforeRoot } : {}),
    ...(traceSink ? { env: { OTEL_EXPORTER_OTLP_ENDPOINT: traceSink.url } } : {}),
    ...(variant === 'hook_encrypted' ? { env: { PAYLOAD_ENCRYPTION_KEYS: encryptionKeys } } : {}),
  });
  const connection = await Connection.connect({ address: service.temporalAddress });
  const client = new Client({ connection });
  const pool = new Pool(service.baseUrl, {
    connections: Math.max(...settings.concurrencies),
    pipelining: 1,
    keepAliveTimeout: 60_000,
  });
  try {
    const hookSecret = await createOnboardWorkflow(service, pool, receiver.url);
    const start =
      variant === 'trigger_pglite' ? triggerStarter(service, pool) : hookStarter(pool, hookSecret);
    // Every process `npm start` runs: the supervisor too (light, but part of the tree's CPU and memory).
    const pids = service.pids;
    const phases = await runPhases(`${variant}`, settings, start, receiver, pids, client);
    return {
      database: service.database,
      phases,
      ...(variant === 'hook_encrypted' ? { codec: await measureCodec(client, encryptionKeys) } : {}),
    };
  } finally {
    await pool.close();
    await connection.close();
    await service.stop();
    if (traceSink) {
      tracedSpans = traceSink.spans();
      await traceSink.stop();
    }
  }
}

/**
 * The encryption codec's own cost per execution, apart from the noise of a whole run: one run's encrypted
 * payloads (as the service wrote them) decoded and encoded again, many times, on this process's thread.
 */
async function measureCodec(client: Client, keys: string) {
  const codec = new EncryptionCodec(parsePayloadKeys(keys).keys);
  // Raw visibility: the client's own list would decode the (encrypted) memo without the codec.
  const listed = await client.workflowService.listWorkflowExecutions({
    namespace: client.options.namespace,
    query: `WorkflowType = 'execution'`,
    pageSize: 1,
  });
  const workflowId = listed.executions?.[0]?.execution?.workflowId;
  if (!workflowId) return null;
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const encrypted: Payload[] = [];
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object' && !(value instanceof Uint8Array)) {
      if (isEncrypted(value)) encrypted.push(value);
      else Object.values(value).forEach(walk);
    }
  };
  walk(history.events);
  const iterations = 2000;
  let decoded: Payload[] = [];
  const decodeStart = process.cpuUsage();
  for (let i = 0; i < iterations; i++) decoded = await codec.decode(encrypted);
  const decodeUs = process.cpuUsage(decodeStart);
  const encodeStart = process.cpuUsage();
  for (let i = 0; i < iterations; i++) await codec.encode(decoded);
  const encodeUs = process.cpuUsage(encodeStart);
  const perRun = (usage: NodeJS.CpuUsage) => Math.round(((usage.user + usage.system) / iterations) * 10) / 10;
  return {
    payloads_per_execution: encrypted.length,
    plain_bytes_per_execution: decoded.reduce((sum, payload) => sum + (payload.data?.length ?? 0), 0),
    encode_cpu_us_per_execution: perRun(encodeUs),
    decode_cpu_us_per_execution: perRun(decodeUs),
  };
}

/** Creates the onboard workflow through the API; answers its hook secret. */
export async function createOnboardWorkflow(
  service: ServiceUnderTest,
  pool: Pool,
  receiverUrl: string,
): Promise<string> {
  const response = await pool.request({
    method: 'POST',
    path: '/v1/workflows',
    headers: { authorization: `Bearer ${service.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(onboardDefinition(receiverUrl)),
  });
  const body = (await response.body.json()) as { hook_secret?: string };
  if (response.statusCode !== 201 || !body.hook_secret)
    throw new Error(`creating the onboard workflow answered ${response.statusCode}: ${JSON.stringify(body)}`);
  return body.hook_secret;
}

async function commitOf(root: string): Promise<string | null> {
  return new Promise((resolve) =>
    execFile('git', ['rev-parse', '--short', 'HEAD'], { cwd: root }, (error, stdout) =>
      resolve(error ? null : stdout.trim()),
    ),
  );
}

/** Starts onboard executions through the signed hook. */
export function hookStarter(pool: Pool, secret: string): Starter {
  return async (customer, index) => accepted(await postSignedHook(pool, secret, customer, index));
}

function triggerStarter(service: ServiceUnderTest, pool: Pool): Starter {
  return async (customer, index) =>
    accepted(
      await pool.request({
        method: 'POST',
        path: `/v1/workflows/${ONBOARD_WORKFLOW_ID}/trigger`,
        headers: { authorization: `Bearer ${service.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(onboardInput(customer, index)),
      }),
    );
}

/** The execution id of a 202; RetryLater for a 429 or 503 with Retry-After; an error otherwise. */
async function accepted(response: Awaited<ReturnType<Pool['request']>>): Promise<string> {
  const text = await response.body.text();
  if (response.statusCode === 202) return (JSON.parse(text) as { execution_id: string }).execution_id;
  const retryAfter = Number(response.headers['retry-after']);
  if ((response.statusCode === 429 || response.statusCode === 503) && Number.isFinite(retryAfter))
    throw new RetryLater(Math.max(100, retryAfter * 1000));
  throw new Error(`HTTP ${response.statusCode}: ${text.slice(0, 200)}`);
}

/** The loose floor: a dev server started the same way, the floor worker in a process of its own. */
async function benchFloor(
  settings: OnboardSettings,
  cliPath: string,
  receiver: OnboardReceiver,
): Promise<VariantResult> {
  const devServer = await startFloorDevServer(cliPath);
  const taskQueue = 'onboard-floor';
  const connection = await Connection.connect({ address: devServer.address });
  const client = new Client({ connection });
  let worker: FloorWorker | undefined;
  try {
    worker = await startFloorWorker({
      temporalAddress: devServer.address,
      taskQueue,
      workflows: 'onboard-floor',
    });
    const start: Starter = async (customer, index) => {
      const input = { ...onboardInput(customer, index), url: `${receiver.url}/onboarded` };
      await client.workflow.start(ONBOARD_FLOOR_WORKFLOW_TYPE, {
        taskQueue,
        workflowId: customer,
        args: [input],
      });
      return customer;
    };
    const pids = { worker: worker.pid, dev_server: devServer.pid };
    return { phases: await runPhases('floor', settings, start, receiver, pids, client) };
  } finally {
    await worker?.stop();
    await connection.close();
    await devServer.stop();
  }
}

const silentLogger = createLogger('silent');
