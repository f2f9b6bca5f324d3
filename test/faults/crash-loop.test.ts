/**
 * Fault (a poison pill, docs/operations.md#a-run-that-crashes-the-worker): a run whose workflow task crashes the worker process. The embedded
 * setup's supervisor (processes/supervisor.ts, what `npm start` runs) restarts the service process with a
 * growing delay; Temporal hands the task out again and it crashes the new worker too; at the start where
 * the task reached CRASH_LOOP_ATTEMPTS, the worker terminates the run (platform/temporal/crash-loop.ts) and
 * goes on serving every other run.
 *
 * The crash is real: test workflow code (support/crash-interceptor.ts, bundled only here) makes the
 * worker abort the way expressions once did when they ran in workflow code (a workflow task past the
 * SDK's isolate time limit).
 *
 * A bystander run is in the middle of a slow connector call (its workflow task open while the step local
 * activity runs) each time the poison run takes the process down: its task times out with the poison's,
 * comes due with it, and reaches CRASH_LOOP_ATTEMPTS with it. Only the poison may be terminated: the
 * worker goes into probation (one workflow task at a time) until the poison has crashed it alone, and the
 * bystander completes.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { expect } from 'chai';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { newApiKey } from '../../platform/ids';
import { superviseService, type Supervisor } from '../../processes/supervisor';
import { createWorkflow, definition, httpStep, rulesStep, type ExecutionBody } from '../support/fixtures';
import { capturingLogger } from '../support/log-capture';
import { freePort } from '../support/ports';
import { apiClient, sharedTemporal, tempDir, type ApiClient } from '../support/stack';
import { waitFor } from '../support/wait';

describe('fault: a run that crashes the worker @integration @faults', function () {
  this.timeout(300_000);
  let supervisor: Supervisor;
  let api: ApiClient;
  let dataDir: string;
  const log = capturingLogger();
  /** The service processes' own output (the aborts print native stack traces): shown if a test fails. */
  let output = '';
  let workflowId: string;
  /** A connector step to `slow`, which answers after SLOW_MS. */
  let slowWorkflowId: string;
  let slow: http.Server;
  let slowCalls = 0;
  const SLOW_MS = 3_000;

  before(async () => {
    dataDir = tempDir('sy-crash-loop-');
    slow = http.createServer((req, res) => {
      slowCalls += 1;
      req.resume();
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ slow: true }));
      }, SLOW_MS);
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const slowUrl = `http://127.0.0.1:${(slow.address() as { port: number }).port}`;
    const { code } = await bundleWorkflowCode({
      workflowsPath: require.resolve('../../workers/workflows'),
      workflowInterceptorModules: [require.resolve('../support/crash-interceptor')],
      logger: new DefaultLogger('WARN'),
    });
    const bundlePath = path.join(dataDir, 'crashing-bundle.js');
    fs.writeFileSync(bundlePath, code);
    const key = newApiKey();
    const port = await freePort();
    supervisor = superviseService({
      entry: path.join(__dirname, '..', 'support', 'crashing-service-main.js'),
      env: {
        TEMPORAL_ADDRESS: (await sharedTemporal()).address,
        TEMPORAL_TASK_QUEUE: `crash-loop-${port}`,
        DATA_DIR: dataDir,
        PORT: String(port),
        HOST: '127.0.0.1',
        BOOTSTRAP_API_KEY: key,
        // Info: the tests follow the worker into probation and out of it.
        LOG_LEVEL: 'info',
        TEST_WORKFLOW_BUNDLE: bundlePath,
        // The bystander's connector calls the local slow server.
        ALLOW_PRIVATE_DESTINATIONS: 'true',
      },
      logger: log.logger,
      onOutput: (text) => (output += text),
      initialDelayMs: 500,
      maxDelayMs: 2000,
    });
    await supervisor.firstReady;
    api = apiClient(`http://127.0.0.1:${port}`, key);
    workflowId = await createWorkflow(
      api,
      definition([rulesStep('echo', [{ when: 'true', output: '{{ input }}' }])]),
    );
    slowWorkflowId = await createWorkflow(api, definition([httpStep('call', { url: `${slowUrl}/work` })]));
  });
  afterEach(function () {
    if (this.currentTest?.state === 'failed')
      process.stderr.write(`service output:\n${output.slice(-5000)}\n`);
  });
  after(async () => {
    await supervisor?.stop();
    slow?.closeAllConnections();
    await new Promise((resolve) => slow?.close(resolve));
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** Triggers (retrying while the service restarts); returns the execution id. */
  function start(input: unknown, workflow = workflowId): Promise<string> {
    return waitFor(
      async () => {
        const res = await api.post(`/v1/workflows/${workflow}/trigger`, input).catch(() => undefined);
        return res?.status === 202 ? (res.body as { execution_id: string }).execution_id : undefined;
      },
      { what: 'the trigger to be accepted', timeoutMs: 60_000 },
    );
  }

  /** Waits for a final status. */
  function toEnd(id: string): Promise<ExecutionBody> {
    return waitFor(
      async () => {
        const res = await api.get(`/v1/executions/${id}`).catch(() => undefined);
        const body = res?.status === 200 ? (res.body as ExecutionBody) : undefined;
        return body && !['running', 'waiting'].includes(body.status) ? body : undefined;
      },
      { what: `execution ${id} to end`, timeoutMs: 240_000, intervalMs: 500 },
    );
  }

  async function runToEnd(input: unknown): Promise<ExecutionBody> {
    return toEnd(await start(input));
  }

  let bystander: Promise<ExecutionBody>;

  it('runs ordinary executions before the crash', async () => {
    expect((await runToEnd({ n: 1 })).status).to.equal('success');
  });

  it('terminates the crashing run after CRASH_LOOP_ATTEMPTS crashes, with a reason that says so', async () => {
    // The bystander's workflow task is in flight (its connector call waits on `slow`) when the poison
    // takes the process down.
    const bystanderId = await start({ n: 3 }, slowWorkflowId);
    bystander = toEnd(bystanderId);
    await waitFor(async () => slowCalls > 0 || undefined, { what: 'the bystander to call the slow server' });
    const crashed = await runToEnd({ crash_worker: true });
    expect(crashed.status).to.equal('terminated');
    expect(crashed.error?.message).to.match(
      /timed out \d+ times in a row, each time taking down the worker .*on a worker in probation that ran nothing else/,
    );
  });

  it('does not terminate a run that was in flight at each crash: it completes', async () => {
    const done = await bystander;
    expect(done.status, `the bystander ended ${done.status}: ${done.error?.message}`).to.equal('success');
    expect(slowCalls, 'the bystander was in flight at the crashes').to.be.at.least(2);
  });

  it('worked in probation, one workflow task at a time, and left it once no suspect was left', async () => {
    expect(output).to.match(/this worker starts in probation \(one workflow task at a time\)/);
    // The last process that started in probation replaced its worker by a normal one, or a later
    // process started without probation.
    await waitFor(
      async () => {
        const last = output.lastIndexOf('starts in probation');
        const itsStart = output.indexOf('Worker running', last);
        return (
          output.includes('Worker out of probation', last) ||
          (itsStart >= 0 && output.includes('Worker running', itsStart + 1)) ||
          undefined
        );
      },
      { what: 'the worker to leave probation', timeoutMs: 30_000 },
    );
  });

  it('restarted the crashed service process each time, with a growing delay, and logged why', () => {
    expect(supervisor.restarts).to.be.at.least(3);
    const restarts = log
      .text()
      .split('\n')
      .filter((line) => line.includes('restarting it in'));
    expect(restarts.length).to.be.at.least(3);
    expect(restarts[0]).to.match(
      /The service process died \((signal SIGABRT|exit code \d+)\); restarting it in 0\.5 s/,
    );
    expect(restarts[1]).to.include('restarting it in 1 s');
  });

  it('runs ordinary executions after, on the same worker', async () => {
    const done = await runToEnd({ n: 2 });
    expect(done.status).to.equal('success');
    expect(done.steps[1]!.output).to.deep.equal({ n: 2 });
  });
});
