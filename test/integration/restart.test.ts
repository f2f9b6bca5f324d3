/**
 * The service as a user runs it (`npm start`'s process, embedded Temporal dev server and PGlite in one
 * data folder): keys from the admin CLI, executions, a clean stop, and a restart that loses nothing.
 */
import fs from 'node:fs';
import { expect } from 'chai';
import { createWorkflow, definition, httpStep, trigger, waitForExecution } from '../support/fixtures';
import { freePort } from '../support/ports';
import { Receiver } from '../support/receiver';
import { keyFromAdminOutput, ServiceProcess } from '../support/service-process';
import { apiClient, sharedTemporal, tempDir } from '../support/stack';
import { lockFile } from '../../platform/store/data-dir-lock';
import { waitFor } from '../support/wait';
import { liveDevServerPid } from '../../platform/temporal/dev-server';

describe('restart of the service @integration', function () {
  this.timeout(180_000);
  let service: ServiceProcess;
  let receiver: Receiver;
  let dataDir: string;
  let key: string;
  let finishedId: string;
  let inFlightId: string;
  let failedId: string;
  let workflowId: string;

  before(async () => {
    dataDir = tempDir('sy-restart-');
    receiver = await Receiver.start();
    service = new ServiceProcess({
      DATA_DIR: dataDir,
      PORT: String(await freePort()),
      TEMPORAL_DEV_PORT: String(await freePort()),
      TEMPORAL_UI_PORT: '0',
      TEMPORAL_CLI_PATH: (await sharedTemporal()).cliPath,
      ALLOW_PRIVATE_DESTINATIONS: 'true',
      LOG_LEVEL: 'warn',
    });
    await service.start();
  });
  after(async () => {
    // SIGINT stops the service's own dev server too; stop() falls back to SIGKILL.
    await service?.stop('SIGINT');
    await receiver?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('creates an API key with the admin CLI while the service runs', async () => {
    key = keyFromAdminOutput(
      await service.admin('create-key', '--workspace', 'default', '--name', 'restart', '--scopes', 'admin'),
    );
    await apiClient(service.url, key).get('/v1/workflows').expect(200);
  });

  it('creates a workspace with an admin key from the admin CLI', async () => {
    const output = await service.admin('create-workspace', '--name', 'Acme', '--id', 'acme');
    const acmeKey = keyFromAdminOutput(output);
    const res = await apiClient(service.url, acmeKey).get('/v1/workflows').expect(200);
    expect(res.body.data).to.deep.equal([]);
  });

  it('runs the demo workflow to success', async () => {
    finishedId = await trigger(apiClient(service.url, key), 'customer-onboarding', {
      customer: 'Ada',
      plan: 'enterprise',
    });
    expect((await waitForExecution(apiClient(service.url, key), finishedId)).status).to.equal('success');
  });

  it('records a failed execution before the restart', async () => {
    receiver.replyOnceTo('/fails-once', { status: 500 });
    const failing = await createWorkflow(
      apiClient(service.url, key),
      definition([httpStep('call', { url: `${receiver.url}/fails-once` }, { retry: { max_attempts: 1 } })]),
    );
    failedId = await trigger(apiClient(service.url, key), failing);
    expect((await waitForExecution(apiClient(service.url, key), failedId)).status).to.equal('failed');
  });

  it('stops cleanly on Ctrl-C (SIGINT), releasing the data folder', async () => {
    // An execution in flight across the restart: its connector fails now and succeeds on the retry after it.
    receiver.replyOnce({ status: 503 });
    const retry = { max_attempts: 5, initial_interval: '4s', backoff: 1, max_interval: '4s' };
    workflowId = await createWorkflow(
      apiClient(service.url, key),
      definition([httpStep('call', { url: `${receiver.url}/later` }, { retry })]),
    );
    inFlightId = await trigger(apiClient(service.url, key), workflowId);
    await waitForExecution(apiClient(service.url, key), inFlightId, (e) =>
      e.steps.some((s) => s.error !== null),
    );
    expect(await service.stop('SIGINT')).to.equal(0);
    expect(fs.existsSync(lockFile(dataDir))).to.equal(false);
  });

  it('lets the admin CLI use the embedded database while the service is stopped', async () => {
    expect(await service.admin('list-workspaces')).to.include('acme');
  });

  it('keeps API keys, workflows and executions across a restart', async () => {
    await service.start();
    const api = apiClient(service.url, key);
    const execution = await waitForExecution(api, finishedId);
    expect(execution.status).to.equal('success');
    expect(execution.steps.map((s) => s.id)).to.deep.equal(['trigger', 'route', 'welcome']);
    await api.get(`/v1/workflows/${workflowId}`).expect(200);
  });

  it('retries, after the restart, an execution that failed before it', async () => {
    const api = apiClient(service.url, key);
    await api.post(`/v1/executions/${failedId}/retry`).expect(202);
    expect((await waitForExecution(api, failedId)).status).to.equal('success');
  });

  it('finishes an execution that was in flight when the service stopped', async () => {
    const execution = await waitForExecution(apiClient(service.url, key), inFlightId);
    expect(execution.status).to.equal('success');
    expect(execution.steps[1]!.attempts).to.equal(2);
  });

  it('starts again after being killed with SIGKILL, stopping the dev server it left behind', async () => {
    expect(await service.stop('SIGKILL')).to.equal(null);
    await service.start();
    const execution = await waitForExecution(apiClient(service.url, key), finishedId);
    expect(execution.status).to.equal('success');
    await trigger(apiClient(service.url, key), 'customer-onboarding', { customer: 'Bo', plan: 'starter' });
  });

  it('starts its Temporal dev server again when it dies, and executions go on', async () => {
    const killed = liveDevServerPid(dataDir);
    expect(killed, 'the running dev server').to.be.a('number');
    process.kill(killed!, 'SIGKILL');
    const restarted = await waitFor(
      async () => {
        const pid = liveDevServerPid(dataDir);
        return pid !== undefined && pid !== killed ? pid : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250, what: 'a new dev server process' },
    );
    expect(restarted).to.not.equal(killed);
    const api = apiClient(service.url, key);
    // The service loses Temporal meanwhile, and may be restarted by its own supervisor: accepted once back.
    const executionId = await waitFor(
      async () => {
        const res = await api
          .post('/v1/workflows/customer-onboarding/trigger', { customer: 'Cy', plan: 'enterprise' })
          .catch(() => undefined);
        return res?.status === 202 ? (res.body.execution_id as string) : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 500, what: 'a trigger accepted after the dev server came back' },
    );
    expect((await waitForExecution(api, executionId)).status).to.equal('success');
    // Its data folder was kept: the runs from before are still there.
    expect((await waitForExecution(api, finishedId)).status).to.equal('success');
  });

  it('refuses a second process on the same data folder', async () => {
    const second = new ServiceProcess({
      ...service.env,
      PORT: String(await freePort()),
      TEMPORAL_DEV_PORT: String(await freePort()),
    });
    try {
      await second.start(30_000);
      expect.fail('the second process should not start');
    } catch (error) {
      expect((error as Error).message).to.match(/in use by process/);
    }
  });
});
