/**
 * Load (bounded in count and time, loopback only): thousands of triggers at high concurrency across
 * several workflows and workspaces, against the production shape (API and worker processes, PostgreSQL,
 * a Temporal server). Afterwards every execution is accounted for, every event was delivered, and the
 * API never answered a 5xx.
 */
import { Client, Connection } from '@temporalio/client';
import { expect } from 'chai';
import { housekeepingScheduleId } from '../../workers/housekeeping-schedule';
import { waitFor } from '../support/wait';
import { Deployment } from '../support/deployment';
import { definition, httpStep, rulesStep } from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { apiClient } from '../support/stack';
import {
  expectEventsDelivered,
  receivedEvents,
  reportScenario,
  ResponseLog,
  retryDelayMs,
  waitAllFinalListed,
} from '../faults/harness';

const TRIGGERS = Number(process.env['LOAD_TRIGGERS'] ?? 2000);
const CONCURRENCY = Number(process.env['LOAD_CONCURRENCY'] ?? 48);
const WORKSPACES = 3;

interface Target {
  workspace: string;
  key: string;
  workflowId: string;
  eventsPath: string;
}

describe('load: thousands of triggers across workflows and workspaces @integration @load', function () {
  this.timeout(900_000);
  const deployment = new Deployment();
  let receiver: Receiver;
  const targets: Target[] = [];
  const log = new ResponseLog();
  const accepted = new Map<string, Target>();
  let triggerSeconds = 0;
  let settleSeconds = 0;

  before(async () => {
    receiver = await Receiver.start();
    receiver.replyAlways({ status: 204 });
    await deployment.start();
    for (let w = 0; w < WORKSPACES; w++) {
      const { workspaceId, key } = await deployment.newWorkspace();
      const api = apiClient(deployment.url, key);
      const eventsPath = `/events/${workspaceId}`;
      await api
        .post('/v1/webhooks', {
          url: `${receiver.url}${eventsPath}`,
          events: ['execution.started', 'execution.completed'],
        })
        .expect(201);
      for (const steps of [
        [
          rulesStep('route', [{ when: 'input.n % 2 = 0', output: 'even' }], { default: 'odd' }),
          rulesStep('echo', [{ when: 'true', output: '{{ steps.route.output }}' }]),
        ],
        [
          rulesStep('prepare', [{ when: 'true', output: { n: '{{ input.n }}' } }]),
          httpStep('call', { method: 'POST', url: `${receiver.url}/work`, body: { n: '{{ input.n }}' } }),
        ],
      ]) {
        const body = definition(steps);
        await api.post('/v1/workflows', body).expect(201);
        targets.push({ workspace: workspaceId, key, workflowId: body['id'] as string, eventsPath });
      }
    }
    const started = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < TRIGGERS) {
          const n = next++;
          const target = targets[n % targets.length]!;
          // A 429 (the workers are behind: backpressure) is retried after its Retry-After, as callers should.
          for (;;) {
            const res = await apiClient(deployment.url, target.key)
              .post(`/v1/workflows/${target.workflowId}/trigger`, { n })
              .set('Idempotency-Key', `load-${n}`)
              .timeout(30_000);
            log.record(res, [202]);
            if (res.status === 202) accepted.set(res.body.execution_id as string, target);
            if (res.status !== 429) break;
            await new Promise((resolve) => setTimeout(resolve, retryDelayMs(res, 1000)));
          }
        }
      }),
    );
    triggerSeconds = (Date.now() - started) / 1000;
  });
  after(async () => {
    let delivered = 0;
    for (const target of new Set(targets.map((t) => t.eventsPath))) {
      const events = receivedEvents(receiver, target);
      for (const kinds of events.values()) delivered += kinds.size;
    }
    reportScenario('load', {
      triggers: TRIGGERS,
      concurrency: CONCURRENCY,
      workflows: targets.length,
      workspaces: WORKSPACES,
      accepted: accepted.size,
      trigger_seconds: triggerSeconds,
      settle_seconds: settleSeconds,
      events_expected: accepted.size * 2,
      events_delivered: delivered,
      responses: log.summary(),
    });
    await deployment.stop();
    await receiver?.stop();
  });

  it('accepted every trigger (after Retry-After when told to slow down), answering no 5xx', () => {
    log.expectOnlyContractResponses();
    expect(accepted.size).to.equal(TRIGGERS);
  });

  it('brings every execution to success', async () => {
    const started = Date.now();
    for (const target of targets) {
      const ids = [...accepted].filter(([, t]) => t === target).map(([id]) => id);
      const statuses = await waitAllFinalListed(
        apiClient(deployment.url, target.key),
        target.workflowId,
        ids,
      );
      expect([...statuses.values()].filter((s) => s !== 'success')).to.deep.equal([]);
    }
    settleSeconds = (Date.now() - started) / 1000;
  });

  it('delivered every event of every workspace, each under one webhook-id, and no other workspace', async () => {
    for (const eventsPath of new Set(targets.map((t) => t.eventsPath))) {
      const ids = [...accepted].filter(([, t]) => t.eventsPath === eventsPath).map(([id]) => id);
      await expectEventsDelivered(
        receiver,
        eventsPath,
        ids,
        ['execution.started', 'execution.completed'],
        600_000,
      );
      const foreign = [...receivedEvents(receiver, eventsPath).keys()].filter(
        (id) => accepted.get(id)?.eventsPath !== eventsPath,
      );
      expect(foreign, `events of other workspaces at ${eventsPath}`).to.deep.equal([]);
    }
  });

  it('leaves nothing the housekeeping job cannot purge: its tables stay bounded', async () => {
    const counts = () =>
      deployment.withDatabase(async (db) => {
        const [row] = await db.query<Record<string, string>>(
          `select (select count(*) from idempotency_keys) as idempotency_keys,
                  (select count(*) from webhook_deliveries) as deliveries,
                  (select count(*) from webhook_delivery_attempts) as attempts`,
        );
        return Object.fromEntries(Object.entries(row!).map(([table, n]) => [table, Number(n)]));
      });
    const left = await counts();
    expect(left['idempotency_keys']).to.equal(TRIGGERS);
    expect(left['deliveries']).to.equal(TRIGGERS * 2);
    // As if a day (the contract's idempotency window) and the log's retention had passed.
    await deployment.withDatabase(async (db) => {
      await db.query(`update idempotency_keys set created_at = now() - interval '25 hours'`);
      await db.query(`update webhook_deliveries set created_at = now() - interval '31 days'`);
    });
    const temporal = await Connection.connect({ address: deployment.temporalAddress });
    try {
      await new Client({ connection: temporal }).schedule
        .getHandle(housekeepingScheduleId(deployment.taskQueue))
        .trigger();
    } finally {
      await temporal.close();
    }
    let last = left;
    await waitFor(
      async () => {
        last = await counts();
        return Object.values(last).every((n) => n === 0);
      },
      {
        timeoutMs: 120_000,
        intervalMs: 1000,
        what: `the housekeeping job to purge (left: ${JSON.stringify(last)})`,
      },
    );
    reportScenario('load-housekeeping', { before: left, after: last });
  });
});
