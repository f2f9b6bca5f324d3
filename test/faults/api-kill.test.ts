/**
 * Fault: the API process is killed (SIGKILL) under load and started again. Clients retry every trigger
 * with its Idempotency-Key until they get an answer: a trigger either answered 202 and ran, or answered
 * an error and did not run, and none ran twice with one key.
 */
import { expect } from 'chai';
import { rulesStep } from '../support/fixtures';
import { waitFor } from '../support/wait';
import { receivedEvents, reportScenario, ResponseLog, retryDelayMs, waitAllFinal } from './harness';
import { EVENTS_PATH, startScenario, type Scenario } from './scenario';

const KEYS = 120;

describe('fault: API killed under load @integration @faults', function () {
  this.timeout(300_000);
  let scenario: Scenario;
  const log = new ResponseLog();
  const executionByKey = new Map<string, string>();

  before(async () => {
    scenario = await startScenario(() => [rulesStep('only', [{ when: 'true', output: 1 }])]);
    const keys = Array.from({ length: KEYS }, (_, i) => `order-${i}`);
    let next = 0;
    const client = async () => {
      while (next < keys.length) {
        const key = keys[next++]!;
        // Retry this key until the API answers (a dead API gives no answer at all).
        for (;;) {
          try {
            const res = await scenario.deployment
              .client()
              .post(`/v1/workflows/${scenario.workflowId}/trigger`, { n: key })
              .set('Idempotency-Key', key)
              .timeout(10_000);
            log.record(res, [202, 503]);
            if (res.status === 202) {
              const previous = executionByKey.get(key);
              if (previous && previous !== res.body.execution_id)
                throw new Error(`key ${key} answered two execution ids`);
              executionByKey.set(key, res.body.execution_id as string);
              break;
            }
            await new Promise((resolve) => setTimeout(resolve, retryDelayMs(res, 200)));
            continue;
          } catch (error) {
            if ((error as Error).message.includes('two execution ids')) throw error;
            log.networkErrors += 1;
          }
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      }
    };
    const load = Promise.all(Array.from({ length: 6 }, client));
    // Kill once a quarter of the keys are in, never on a clock: on a fast machine a fixed delay can
    // come after the last trigger, and then nothing was under load when the API died.
    await waitFor(async () => executionByKey.size >= KEYS / 4 || undefined, {
      intervalMs: 20,
      what: 'a quarter of the keys accepted before the kill',
    });
    await scenario.deployment.api.kill('SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 2000));
    await scenario.deployment.startApi();
    await load;
  });
  after(async () => {
    if (scenario) {
      const events = receivedEvents(scenario.receiver, EVENTS_PATH);
      const ids = [...executionByKey.values()];
      reportScenario('api-kill', {
        keys: KEYS,
        accepted: ids.length,
        events_expected: ids.length * 2,
        events_delivered: ids.reduce((n, id) => n + (events.get(id)?.size ?? 0), 0),
        responses: log.summary(),
        no_answer: log.networkErrors,
      });
    }
    await scenario?.stop();
  });

  it('lost the API for a while (requests got no answer) and answered only contract responses otherwise', () => {
    expect(log.networkErrors, 'the kill interrupted requests').to.be.greaterThan(0);
    log.expectOnlyContractResponses();
  });

  it('accepted every key once it was back', () => {
    expect(executionByKey.size).to.equal(KEYS);
  });

  it('ran exactly one execution per key', async () => {
    const client = scenario.deployment.client();
    const expected = new Set(executionByKey.values());
    const listAll = async () => {
      const listed = new Set<string>();
      let cursor: string | null = null;
      do {
        const res = await client
          .get(`/v1/executions?workflow=${scenario.workflowId}&limit=100${cursor ? `&cursor=${cursor}` : ''}`)
          .expect(200);
        for (const item of res.body.data as { execution_id: string }[]) listed.add(item.execution_id);
        cursor = res.body.next_cursor as string | null;
      } while (cursor);
      return listed;
    };
    // Visibility is eventually consistent: wait until it shows every answered id, then nothing else may be there.
    const listed = await waitFor(
      async () => {
        const all = await listAll();
        return [...expected].every((id) => all.has(id)) ? all : undefined;
      },
      { what: 'every accepted execution in the list' },
    );
    expect([...listed].sort()).to.deep.equal([...expected].sort());
  });

  it('brings every accepted execution to success', async () => {
    const statuses = await waitAllFinal(scenario.deployment.client(), [...executionByKey.values()]);
    expect([...statuses.values()].every((s) => s === 'success')).to.equal(true);
  });

  it('delivered every event at least once, each under one webhook-id', async () => {
    await scenario.expectEventsDelivered([...executionByKey.values()]);
  });
});
