/**
 * The onboard scenario's tight floor (variant `floor_tight`): the leanest service one could hand-write on
 * Temporal's TypeScript SDK for the onboard flow, in one process. A `node:http` server takes the signed
 * hook (the inbound hooks' scheme: src/inbound-hooks/signature.ts), checks its signature, and starts the
 * workflow (bench/workflows/onboard-floor-tight.ts) with eager start: the client and the worker share one
 * NativeConnection, so the dev server hands the run's first workflow task back in the start response to
 * this worker. 100 workflow-task slots, so that a slot is free for every eager start; an admission gate
 * of 16 runs in flight (admission-gate.ts). The workflow id is the signed content's digest (as the
 * service's replay key), so Temporal's workflow-id uniqueness dedupes a replayed request.
 *
 * Settings from the environment: FLOOR_TEMPORAL_ADDRESS, FLOOR_TASK_QUEUE, FLOOR_HOOK_SECRET (the hook
 * secret the requests are signed with), FLOOR_RECEIVER_URL (where the activity POSTs). Listens on a free
 * loopback port and sends it to its parent ({ port }) once the worker polls; stops on SIGTERM. Started by
 * floor-tight.ts. BENCH_FLOOR_START_EXTRAS=1 starts each run with what the service's starts add to it
 * (src/executions/trigger.ts: our search attributes, a static summary, a memo, a fairness key), to measure
 * what they cost the dev server (docs/benchmarks.md#what-our-start-options-cost-the-dev-server).
 * BENCH_FLOOR_VERSIONING=1 runs its worker under worker versioning as the service's (a deployment version
 * made current, runs PINNED), to measure what versioning costs the dev server
 * (docs/benchmarks.md#what-worker-versioning-costs-the-dev-server). BENCH_FLOOR_PAYLOADS=1 makes its runs
 * carry what ours carry: the definition's snapshot in the start input, the steps' records in the local
 * activity's answer (docs/benchmarks.md#what-our-payloads-cost).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { replayKey, verifySignature } from '../../src/inbound-hooks/signature';
import {
  TRIGGER_ATTRIBUTE,
  VERSION_ATTRIBUTE,
  WAITING_ATTRIBUTE,
  WORKFLOW_ATTRIBUTE,
  WORKSPACE_ATTRIBUTE,
} from '../../core/search-attributes';
import { REQUEST_ID_MEMO } from '../../core/telemetry';
import { workspacePriority } from '../../core/fairness';
import { onboardFloorTight } from '../workflows/onboard-floor-tight';
import { applyRollout } from '../../platform/temporal/worker-deployment';
import { AdmissionGate } from './admission-gate';
import { createTightFloorActivities } from './floor-service-activities';
import { ONBOARD_WORKFLOW_ID, onboardDefinition } from './flow';
import { runDefinition } from '../../core/definitions/run-definition';

/** The service's path for the onboard workflow's hook (bench/onboard/flow.ts), so that the requests are the same. */
const FLOOR_HOOK_PATH = '/v1/hooks/onboard';
const WORKFLOW_TASK_SLOTS = 100;
const RUNS_IN_FLIGHT = 16;
/** The worker's deployment version under BENCH_FLOOR_VERSIONING. */
const FLOOR_VERSION = { deploymentName: 'bench-floor', buildId: 'floor-1' };

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const taskQueue = required('FLOOR_TASK_QUEUE');
  const secret = required('FLOOR_HOOK_SECRET');
  const gate = new AdmissionGate(RUNS_IN_FLIGHT);
  const connection = await NativeConnection.connect({ address: required('FLOOR_TEMPORAL_ADDRESS') });
  const client = new Client({ connection });
  const versioned = process.env['BENCH_FLOOR_VERSIONING'] === '1';
  const payloads = process.env['BENCH_FLOOR_PAYLOADS'] === '1';
  // What our run's input carries besides the trigger's input (trigger.ts): the workspace, the definition's
  // snapshot as runs receive it (core/definitions/run-definition.ts), the trigger.
  const run = payloads
    ? {
        workspaceId: 'bench',
        workflow: {
          id: ONBOARD_WORKFLOW_ID,
          version: 1,
          definition: runDefinition(
            onboardDefinition(required('FLOOR_RECEIVER_URL').replace(/\/onboarded$/, '')),
          ),
        },
        trigger: { type: 'webhook' },
        emit_started: false,
      }
    : undefined;
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowBundle: await bundleWorkflowCode({
      workflowsPath: require.resolve('../workflows/onboard-floor-tight'),
      logger: new DefaultLogger('WARN'),
    }),
    activities: createTightFloorActivities({
      url: required('FLOOR_RECEIVER_URL'),
      records: payloads,
      onDone: (workflowId) => gate.release(workflowId),
    }),
    maxConcurrentWorkflowTaskExecutions: WORKFLOW_TASK_SLOTS,
    maxConcurrentLocalActivityExecutions: WORKFLOW_TASK_SLOTS,
    ...(versioned && {
      workerDeploymentOptions: {
        useWorkerVersioning: true,
        version: FLOOR_VERSION,
        defaultVersioningBehavior: 'PINNED' as const,
      },
    }),
  });

  const answer = (res: http.ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };

  const accept = async (rawBody: Buffer, header: string | undefined, res: http.ServerResponse) => {
    const verified = verifySignature({ header, rawBody, secrets: [secret] });
    if (!verified.ok) return answer(res, 401, { error: verified.reason });
    let input: { customer?: unknown; plan?: unknown };
    try {
      input = JSON.parse(rawBody.toString('utf8')) as typeof input;
    } catch {
      return answer(res, 400, { error: 'not JSON' });
    }
    if (typeof input.customer !== 'string' || typeof input.plan !== 'string')
      return answer(res, 400, { error: 'customer and plan must be strings' });
    const workflowId = replayKey(verified.timestamp, rawBody);
    await gate.admit(workflowId);
    try {
      const handle = await client.workflow.start(onboardFloorTight, {
        taskQueue,
        workflowId,
        args: [{ customer: input.customer, plan: input.plan, ...(run && { run }) }],
        requestEagerStart: true,
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        ...(startExtras && serviceStartExtras(workflowId)),
      });
      answer(res, 202, { execution_id: workflowId, eagerly_started: handle.eagerlyStarted });
    } catch (error) {
      gate.release(workflowId);
      if (error instanceof WorkflowExecutionAlreadyStartedError)
        answer(res, 202, { execution_id: workflowId, eagerly_started: false });
      else answer(res, 500, { error: (error as Error).message });
    }
  };

  const startExtras = process.env['BENCH_FLOOR_START_EXTRAS'] === '1';
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== FLOOR_HOOK_PATH) return answer(res, 404, { error: 'not found' });
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const header = req.headers['x-service-signature'];
      void accept(Buffer.concat(chunks), typeof header === 'string' ? header : undefined, res);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  const running = worker.run();
  // As the service's worker: its version current once it polls (platform/temporal/worker-deployment.ts).
  if (versioned)
    await applyRollout({ client, version: FLOOR_VERSION, identity: 'bench floor', timeoutMs: 30_000 });
  process.send?.({ port: (server.address() as AddressInfo).port });
  process.once('SIGTERM', () => {
    server.close();
    server.closeAllConnections();
    worker.shutdown();
  });
  await running;
  await connection.close();
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`floor service: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);

/** What the service's start of an onboard run adds to the floor's (executionStartOptions, trigger.ts). */
function serviceStartExtras(workflowId: string) {
  return {
    typedSearchAttributes: [
      { key: WORKSPACE_ATTRIBUTE, value: 'bench' },
      { key: WORKFLOW_ATTRIBUTE, value: 'onboard' },
      { key: VERSION_ATTRIBUTE, value: 1 },
      { key: TRIGGER_ATTRIBUTE, value: 'webhook' },
      { key: WAITING_ATTRIBUTE, value: false },
    ],
    staticSummary: 'Onboarding (benchmark) (onboard v1)',
    memo: { [REQUEST_ID_MEMO]: `req_${workflowId.slice(0, 20)}` },
    priority: workspacePriority('bench'),
  };
}
