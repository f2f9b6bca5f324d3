/**
 * Backpressure (docs/operations.md#backpressure): while workflow tasks wait on the execution task queue
 * longer than BACKLOG_LIMIT_MS, the trigger endpoints answer 429 `rate_limited` with Retry-After; every
 * execution accepted before runs once workers catch up, and triggers are accepted again.
 */
import { expect } from 'chai';
import type { Response } from 'supertest';
import { loadConfig } from '../../platform/config';
import { startRuntime, type Runtime } from '../../processes/runtime';
import {
  createWorkflow,
  definition,
  expectError,
  rulesStep,
  trigger,
  waitForExecution,
} from '../support/fixtures';
import { startTestService, tempDir, testLogger, type TestService } from '../support/stack';
import { waitFor } from '../support/wait';

describe('backpressure @integration', function () {
  this.timeout(120_000);
  let service: TestService;
  let worker: Runtime | undefined;
  let workflowId: string;
  const accepted: string[] = [];

  before(async () => {
    // The API alone at first: nothing runs the executions it accepts.
    service = await startTestService({ db: 'postgres', worker: false, env: { BACKLOG_LIMIT_MS: '300' } });
    workflowId = await createWorkflow(
      service.api(),
      definition([rulesStep('a', [{ when: 'true', output: 1 }])]),
    );
  });
  after(async () => {
    await worker?.stop();
    await service?.stop();
  });

  it('accepts triggers while the backlog is short', async () => {
    accepted.push(await trigger(service.api(), workflowId));
  });

  it('answers 429 rate_limited with Retry-After once executions wait longer than the limit', async () => {
    const refused = await waitFor(
      async () => {
        const res: Response = await service.api().post(`/v1/workflows/${workflowId}/trigger`, {});
        if (res.status === 202) accepted.push((res.body as { execution_id: string }).execution_id);
        return res.status === 429 ? res : undefined;
      },
      { what: 'a trigger refused for the backlog', intervalMs: 200 },
    );
    expectError(refused, 429, 'rate_limited');
    expect(Number(refused.headers['retry-after'])).to.be.at.least(1);
    expect(refused.body.error.message).to.match(/behind: new executions wait \d+\.\d s to start/);
  });

  it('runs every accepted execution once a worker catches up, and accepts triggers again', async () => {
    worker = await startRuntime({
      config: loadConfig({ ...service.config.environment, DATA_DIR: tempDir(), PORT: '0' }),
      logger: testLogger,
      api: false,
      worker: true,
    });
    for (const id of accepted) expect((await waitForExecution(service.api(), id)).status).to.equal('success');
    const again = await waitFor(
      async () => {
        const res: Response = await service.api().post(`/v1/workflows/${workflowId}/trigger`, {});
        return res.status === 202 ? (res.body as { execution_id: string }).execution_id : undefined;
      },
      { what: 'triggers accepted again', intervalMs: 200 },
    );
    expect((await waitForExecution(service.api(), again)).status).to.equal('success');
  });
});
