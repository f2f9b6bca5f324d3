/**
 * Replicas: two API processes and two worker processes against one Temporal server and one PostgreSQL
 * server. Load spread over both APIs; one worker SIGKILLed mid-load; then a rolling upgrade to a new
 * worker build (WORKER_ROLLOUT=rolling) while runs wait on approvals: they are decided and complete on
 * the build that started them, new runs take the new build, the old build's workers then stop. Nothing
 * is lost, every event arrives once, and a key's rate limit holds once across both APIs.
 */
import { Client, Connection } from '@temporalio/client';
import { expect } from 'chai';
import request from 'supertest';
import { definition, httpStep, rulesStep } from '../support/fixtures';
import type { Managed } from '../support/deployment';
import { apiClient, type ApiClient } from '../support/stack';
import { waitFor } from '../support/wait';
import { WAITING_ATTRIBUTE } from '../../core/search-attributes';
import { reportScenario, ResponseLog, triggerUnderFault } from './harness';
import { startScenario, type Scenario } from './scenario';

const RATE_PER_SECOND = 20;
const RATE_BURST = 300;
const OLD_BUILD = 'build-1';
const NEW_BUILD = 'build-2';
const APPROVAL_STEPS = [
  rulesStep('prepare', [{ when: 'true', output: 1 }]),
  { id: 'review', kind: 'approval', name: 'Review' },
  rulesStep('after', [{ when: 'true', output: '{{ steps.review.output.decision }}' }]),
];

describe('replicas: two APIs, two workers, a worker killed, a rolling upgrade @integration @faults', function () {
  this.timeout(300_000);
  let scenario: Scenario;
  let connection: Connection;
  let temporal: Client;
  const urls: string[] = [];
  const log = new ResponseLog();
  const accepted: string[] = [];
  const waiting: string[] = [];
  const afterUpgrade: string[] = [];
  let secondWorker: Managed;
  const newBuildWorkers: Managed[] = [];
  let limited = { allowed: 0, sent: 0, seconds: 0 };

  /** Each call, the next API in turn. */
  let turn = 0;
  const nextApi = (): ApiClient => apiClient(urls[turn++ % urls.length]!, scenario.deployment.adminKey);

  const buildOf = async (id: string): Promise<string | undefined> =>
    (await temporal.workflow.getHandle(id).describe()).raw.workflowExecutionInfo?.versioningInfo
      ?.deploymentVersion?.buildId ?? undefined;

  /** Waits through Temporal (polling the API would spend the key's rate limit); returns ids not completed. */
  async function waitAllClosed(ids: string[]): Promise<string[]> {
    const statuses = new Map<string, string>();
    await waitFor(
      async () => {
        for (const id of ids) {
          if (statuses.has(id)) continue;
          const status = (await temporal.workflow.getHandle(id).describe()).status.name;
          if (status !== 'RUNNING') statuses.set(id, status);
        }
        return statuses.size === ids.length;
      },
      { timeoutMs: 120_000, intervalMs: 500, what: `${ids.length} runs to close (${statuses.size} closed)` },
    );
    return ids.filter((id) => statuses.get(id) !== 'COMPLETED');
  }

  before(async () => {
    const workerEnv = { WORKER_BUILD_ID: OLD_BUILD, WORKER_ROLLOUT: 'rolling' };
    scenario = await startScenario(
      (url) => [
        httpStep('call', { url: `${url}/slow` }, { retry: { max_attempts: 5, initial_interval: '500ms' } }),
        rulesStep('finish', [{ when: 'true', output: 2 }]),
      ],
      {
        env: {
          ...workerEnv,
          RATE_LIMIT_PER_SECOND: String(RATE_PER_SECOND),
          RATE_LIMIT_BURST: String(RATE_BURST),
        },
      },
    );
    scenario.receiver.replyAlways((req) =>
      req.path === '/slow' ? { status: 200, body: { ok: true }, delayMs: 1000 } : { status: 204 },
    );
    urls.push(scenario.deployment.url, (await scenario.deployment.startExtraApi()).url);
    secondWorker = await scenario.deployment.startExtraWorker('worker 2', workerEnv);
    connection = await Connection.connect({ address: scenario.deployment.temporalAddress });
    temporal = new Client({ connection });

    // Load over both APIs; one worker killed while connector steps are in flight, then started again.
    const load = triggerUnderFault(nextApi, scenario.workflowId, {
      concurrency: 4,
      count: 24,
      log,
      allowed: [202],
    });
    await waitFor(async () => scenario.receiver.requestsTo('/slow').length >= 6, {
      what: 'connector steps in flight',
    });
    await scenario.deployment.worker.kill('SIGKILL');
    accepted.push(...(await load));
    await scenario.deployment.startWorker();

    // Runs that wait on an approval under the old build.
    const approvals = definition(APPROVAL_STEPS);
    await nextApi().post('/v1/workflows', approvals).expect(201);
    for (let i = 0; i < 4; i++) {
      const res = await nextApi()
        .post(`/v1/workflows/${approvals['id'] as string}/trigger`, {})
        .expect(202);
      waiting.push(res.body.execution_id as string);
    }
    await waitFor(
      async () => {
        const described = await Promise.all(waiting.map((id) => temporal.workflow.getHandle(id).describe()));
        return described.every((d) => d.typedSearchAttributes.get(WAITING_ATTRIBUTE) === true);
      },
      { what: 'the approval runs to wait' },
    );

    // Rolling upgrade: the new build's workers start (and make it current) next to the old ones.
    const newEnv = { WORKER_BUILD_ID: NEW_BUILD, WORKER_ROLLOUT: 'rolling' };
    newBuildWorkers.push(await scenario.deployment.startExtraWorker('worker 3 (new build)', newEnv));
    newBuildWorkers.push(await scenario.deployment.startExtraWorker('worker 4 (new build)', newEnv));
    for (const id of waiting)
      await nextApi().post(`/v1/executions/${id}/steps/review/approve`, { comment: 'ok' }).expect(200);
    for (let i = 0; i < 4; i++) {
      const res = await nextApi().post(`/v1/workflows/${scenario.workflowId}/trigger`, {}).expect(202);
      afterUpgrade.push(res.body.execution_id as string);
    }
    // The old build is drained once its runs are done (the approvals, and the runs of the load, which a
    // loaded machine may still be retrying): its workers stop.
    await waitAllClosed([...accepted, ...waiting]);
    await scenario.deployment.worker.kill('SIGTERM');
    await secondWorker.kill('SIGTERM');

    // A fresh key, its burst spent across both APIs as fast as they answer.
    const { key } = await scenario.deployment.newWorkspace();
    const started = performance.now();
    const sent = RATE_BURST * 2;
    const answers = await Promise.all(
      Array.from({ length: 10 }, async (_, caller) => {
        const statuses: number[] = [];
        for (let i = caller; i < sent; i += 10)
          statuses.push(
            (
              await request(urls[i % 2]!)
                .get('/v1/workflows')
                .set('Authorization', `Bearer ${key}`)
            ).status,
          );
        return statuses;
      }),
    );
    limited = {
      allowed: answers.flat().filter((s) => s === 200).length,
      sent,
      seconds: (performance.now() - started) / 1000,
    };
  });

  after(async () => {
    reportScenario('replicas', {
      accepted: accepted.length,
      approvals: waiting.length,
      after_upgrade: afterUpgrade.length,
      responses: log.summary(),
      rate_limit: limited,
    });
    await connection?.close();
    await scenario?.stop();
  });

  it('accepted every trigger on both APIs, with a worker killed mid-load', () => {
    expect(accepted).to.have.length(24);
    log.expectOnlyContractResponses();
  });

  it('completes every run: those of the killed worker, the approvals and the runs after the upgrade', async () => {
    expect(await waitAllClosed([...accepted, ...waiting, ...afterUpgrade])).to.deep.equal([]);
  });

  it('finished the approvals that waited under the old build on the old build', async () => {
    for (const id of waiting) expect(await buildOf(id), id).to.equal(OLD_BUILD);
  });

  it('ran the runs started after the upgrade on the new build', async () => {
    for (const id of afterUpgrade) expect(await buildOf(id), id).to.equal(NEW_BUILD);
  });

  it('delivered every event once: none lost, none twice', async () => {
    await scenario.expectEventsDelivered([...accepted, ...afterUpgrade]);
  });

  it('held the key to its rate limit once across both APIs', () => {
    // A token bucket shared by both: the burst plus what refilled meanwhile. Per process it would be twice that.
    const ceiling = RATE_BURST + Math.ceil(RATE_PER_SECOND * limited.seconds) + 5;
    expect(limited.allowed, JSON.stringify(limited)).to.be.within(RATE_BURST, ceiling);
    expect(limited.allowed).to.be.below(RATE_BURST * 2);
  });
});
