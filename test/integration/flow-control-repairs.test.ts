/**
 * Flow control's repairs (src/flow-control/admission-sweeper.ts): what a crash or an operator leaves in the
 * admission table is put right by the API's sweeper, so that queued runs start. Each test holds one run of a
 * key of limit 1 at the receiver, queues a second one behind it, then leaves the table as a fault would:
 * a grant committed but never signaled, a release that never ran, a run terminated from Temporal. The
 * sweeper runs every 200 ms here and checks rows against their runs every 500 ms (ADMISSION_SWEEP_MS,
 * ADMISSION_CHECK_MS). The debounce sweeper (src/flow-control/debounce-sweeper.ts) starts the run of a
 * debounced trigger whose process died before starting it, and forgets the row of a run terminated while it
 * waited.
 */
import { expect } from 'chai';
import {
  createWorkflow,
  definition,
  httpStep,
  trigger,
  uniqueId,
  waitForExecution,
} from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { startTestService, type TestService } from '../support/stack';
import { waitFor } from '../support/wait';
import { newExecutionId } from '../../platform/ids';
import { debounceTrigger } from '../../platform/store/debounces';
import type { Definition } from '../../core/definitions/schema';
import type { ExecutionInput } from '../../core/execution-types';

describe('flow control: the sweeper repairs places @integration', function () {
  this.timeout(300_000);
  let service: TestService;
  let receiver: Receiver;
  /** Calls held at the receiver, let go after each test. */
  const held: (() => void)[] = [];

  before(async function () {
    service = await startTestService({ env: { ADMISSION_SWEEP_MS: '200', ADMISSION_CHECK_MS: '500' } });
    receiver = await Receiver.start();
  });
  afterEach(() => {
    for (const release of held.splice(0)) release();
  });
  after(async () => {
    await receiver?.stop();
    await service?.stop();
  });

  const db = () => service.runtime.services.db;

  interface Queue {
    prefix: string;
    workflowId: string;
    /** The run holding the key's one place, its call held at the receiver. */
    holder: string;
    /** The run queued behind it. */
    queued: string;
  }

  /** A workflow of limit 1, its one place held by a run whose call the receiver holds, and a run queued. */
  async function queueBehindHolder(): Promise<Queue> {
    const prefix = uniqueId('repair');
    const workflowId = await createWorkflow(
      service.api(),
      definition(
        [
          httpStep(
            'call',
            { method: 'POST', url: `${receiver.url}/${prefix}/{{ input.name }}` },
            { retry: { max_attempts: 1 } },
          ),
        ],
        { concurrency: { limit: 1 } },
      ),
    );
    let release!: () => void;
    const until = new Promise<void>((resolve) => (release = resolve));
    held.push(release);
    receiver.replyOnceTo(`/${prefix}/holder`, { status: 200, body: { held: true }, until });
    const holder = await trigger(service.api(), workflowId, { name: 'holder' });
    await waitFor(async () => receiver.requestsTo(`/${prefix}/holder`).length === 1, {
      what: 'the holder to call the receiver',
    });
    const queued = await trigger(service.api(), workflowId, { name: 'queued' });
    await waitForExecution(service.api(), queued, (e) => e.status === 'queued', 60_000);
    return { prefix, workflowId, holder, queued };
  }

  /** The queued run calls the receiver and succeeds while the holder's call is still held. */
  async function expectQueuedRunsPastHolder(queue: Queue): Promise<void> {
    const done = await waitForExecution(service.api(), queue.queued, undefined, 60_000);
    expect(done.status, `the queued run: ${JSON.stringify(done.error)}`).to.equal('success');
    expect(receiver.requestsTo(`/${queue.prefix}/queued`), 'calls of the queued run').to.have.length(1);
  }

  const stateOf = async (executionId: string) =>
    (
      await db().query<{ state: string; signaled: boolean }>(
        'select state, signaled_at is not null as signaled from admissions where execution_id = $1',
        [executionId],
      )
    )[0];

  it('signals a run granted a place whose signal was never sent, and the run starts', async () => {
    const queue = await queueBehindHolder();
    // What a release leaves when it dies between its commit and its signal: its row gone, the next run's
    // row open and not signaled.
    await db().transaction(async (tx) => {
      await tx.query('delete from admissions where execution_id = $1', [queue.holder]);
      await tx.query(
        `update admissions set state = 'open', admitted_at = now() - interval '1 minute', signaled_at = null
         where execution_id = $1`,
        [queue.queued],
      );
    });
    await expectQueuedRunsPastHolder(queue);
  });

  it('grants a free place to a queued run when the release of the place never ran', async () => {
    const queue = await queueBehindHolder();
    // The holder's release never ran (its row deleted by hand: nothing granted, nothing signaled).
    await db().query('delete from admissions where execution_id = $1', [queue.holder]);
    await expectQueuedRunsPastHolder(queue);
  });

  it('releases the place of a run terminated from Temporal, and the queued run starts', async () => {
    const queue = await queueBehindHolder();
    expect(await stateOf(queue.holder), 'the holder before the termination').to.include({ state: 'open' });
    await service.runtime.services.temporal.client.workflow
      .getHandle(queue.holder)
      .terminate('flow control repairs test');
    await expectQueuedRunsPastHolder(queue);
    expect(await stateOf(queue.holder), 'the row of the terminated run').to.equal(undefined);
    expect((await waitForExecution(service.api(), queue.holder)).status).to.equal('terminated');
  });

  describe('debounce', () => {
    /** A debounced workflow of one call to `<receiver>/<prefix>/<input.sensor>` with `{n}`. */
    async function debouncedWorkflow(prefix: string): Promise<{ id: string; definition: Definition }> {
      const body = definition(
        [
          httpStep(
            'call',
            {
              method: 'POST',
              url: `${receiver.url}/${prefix}/{{ input.sensor }}`,
              body: { n: '{{ input.n }}' },
            },
            { retry: { max_attempts: 1 } },
          ),
        ],
        { debounce: { period: '1s', key: 'input.sensor' } },
      );
      return { id: await createWorkflow(service.api(), body), definition: body as unknown as Definition };
    }

    it("starts the run of a debounced trigger whose process died before starting it, with the key's last input", async () => {
      const prefix = uniqueId('unstarted');
      const workflow = await debouncedWorkflow(prefix);
      // The trigger's transaction committed, then its process died: a row, no run in Temporal.
      const start: ExecutionInput = {
        workspaceId: 'default',
        workflow: { id: workflow.id, version: 1, definition: { ...workflow.definition, id: workflow.id } },
        trigger: { type: 'api' },
        input: { sensor: 's', n: 1 },
        debounce: true,
      };
      const { execution_id: orphan } = await debounceTrigger(db(), {
        workspace_id: 'default',
        workflow_id: workflow.id,
        key: 's',
        candidate_id: newExecutionId(),
        input: start.input,
        period_ms: 1000,
        start,
      });
      // A later trigger of the key joins it: accepted, so it must run.
      expect(await trigger(service.api(), workflow.id, { sensor: 's', n: 2 })).to.equal(orphan);
      const done = await waitForExecution(service.api(), orphan, undefined, 60_000);
      expect(done.status).to.equal('success');
      expect((done.steps[0] as unknown as { coalesced: number }).coalesced).to.equal(2);
      expect(receiver.requests.filter((r) => r.path === `/${prefix}/s`).map((r) => r.json)).to.deep.equal([
        { n: 2 },
      ]);
    });

    it('forgets the waiting row of a debounced run terminated from Temporal: the next trigger makes a new execution', async () => {
      const prefix = uniqueId('terminated');
      const workflow = await debouncedWorkflow(prefix);
      const terminated = await trigger(service.api(), workflow.id, { sensor: 't', n: 1 });
      await service.runtime.services.temporal.client.workflow
        .getHandle(terminated)
        .terminate('debounce repairs test');
      await waitFor(
        async () =>
          (await db().query('select 1 from debounces where execution_id = $1', [terminated])).length === 0,
        { timeoutMs: 30_000, what: "the sweeper to forget the terminated run's row" },
      );
      const next = await trigger(service.api(), workflow.id, { sensor: 't', n: 2 });
      expect(next).to.not.equal(terminated);
      expect((await waitForExecution(service.api(), next, undefined, 60_000)).status).to.equal('success');
    });
  });
});
