/**
 * The workspace's cap on open executions (docs/flow-control.md#workspace-cap): with a cap of 3 set for a
 * workspace the way an operator does (`set-limits`), ten runs of a slow workflow never have more than 3 calls
 * in flight, the rest are `queued` (listed as such, not counted as open), all complete once each; another
 * workspace's runs start meanwhile; a queued run can be canceled; a child run of a full workspace is not
 * held back. Against the dev server, on embedded PGlite and on the PostgreSQL server (TEST_DATABASE_URL).
 */
import { expect } from 'chai';
import type { StepBatchResult } from '../../core/execution-types';
import { setLimitOverrides } from '../../platform/store/workspace-limits';
import {
  createWorkflow,
  definition,
  httpStep,
  rulesStep,
  trigger,
  uniqueId,
  waitForExecution,
  type ExecutionBody,
} from '../support/fixtures';
import { localActivityMarkers } from '../support/markers';
import { Receiver, type ReceivedRequest } from '../support/receiver';
import { DB_KINDS, startTestService, type ApiClient, type TestService } from '../support/stack';
import { waitFor } from '../support/wait';

const NO_RETRY = { max_attempts: 1 };

for (const db of DB_KINDS) {
  describe(`workspace cap on open executions (${db}) @integration`, function () {
    this.timeout(300_000);
    let service: TestService;
    let receiver: Receiver;
    before(async function () {
      service = await startTestService({ db });
      receiver = await Receiver.start();
    });
    after(async () => {
      await receiver?.stop();
      await service?.stop();
    });

    /** A new workspace whose cap an operator set to `cap`, and a client of it. */
    async function cappedWorkspace(cap: number): Promise<{ workspaceId: string; api: ApiClient }> {
      const { workspaceId, key } = await service.newWorkspace(['admin']);
      await setLimitOverrides(service.runtime.services.db, workspaceId, new Map([['open_executions', cap]]));
      return { workspaceId, api: service.api(key) };
    }

    /** A workflow of one connector step that calls `<receiver>/<prefix>/<input.n>`. */
    const callingWorkflow = (api: ApiClient, prefix: string) =>
      createWorkflow(
        api,
        definition([
          httpStep(
            'call',
            { method: 'POST', url: `${receiver.url}/${prefix}/{{ input.n }}` },
            { retry: NO_RETRY },
          ),
        ]),
      );

    const callsTo = (prefix: string): ReceivedRequest[] =>
      receiver.requests.filter((r) => r.path.startsWith(`/${prefix}/`));

    const listed = async (api: ApiClient, workflowId: string, status: string) =>
      (
        (await api.get(`/v1/executions?workflow=${workflowId}&status=${status}&limit=100`).expect(200)).body
          .data as { execution_id: string }[]
      ).map((e) => e.execution_id);

    it('keeps at most 3 of 10 runs open, the rest queued; another workspace runs meanwhile; all end once', async () => {
      const prefix = uniqueId('cap');
      let inFlight = 0;
      let most = 0;
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      receiver.replyAlways(async (request) => {
        if (!request.path.startsWith(`/${prefix}/`)) return { status: 200, body: { ok: true } };
        inFlight += 1;
        most = Math.max(most, inFlight);
        await held;
        // Each call takes a little while, so queued runs overlap the open ones.
        await new Promise((resolve) => setTimeout(resolve, 50));
        inFlight -= 1;
        return { status: 200, body: { ok: true } };
      });
      try {
        const { api } = await cappedWorkspace(3);
        const workflowId = await callingWorkflow(api, prefix);
        const ids: string[] = [];
        for (let n = 0; n < 10; n++) ids.push(await trigger(api, workflowId, { n }));
        await waitFor(async () => callsTo(prefix).length === 3, { what: 'three runs to call the receiver' });
        await waitFor(async () => (await listed(api, workflowId, 'queued')).length === 7, {
          what: 'the other seven listed as queued',
          timeoutMs: 30_000,
        });
        const queued = await listed(api, workflowId, 'queued');
        const view = (await api.get(`/v1/executions/${queued[0]}`).expect(200)).body as ExecutionBody;
        expect(view.status).to.equal('queued');
        expect(
          view.steps.map((step) => step.id),
          'a queued run shows no step',
        ).to.deep.equal(['trigger']);
        const workspace = (await api.get('/v1/workspace').expect(200)).body;
        expect(workspace.limits.open_executions).to.equal(3);
        expect(workspace.usage.open_executions, 'queued runs are not open').to.equal(3);
        expect(callsTo(prefix), 'no call past the cap').to.have.length(3);

        // Another workspace (the default one, without a cap of 3) starts at once.
        const otherPrefix = uniqueId('other');
        const other = await trigger(service.api(), await callingWorkflow(service.api(), otherPrefix), {
          n: 0,
        });
        const otherDone = await waitForExecution(service.api(), other, undefined, 30_000);
        expect(otherDone.status, 'another workspace runs while this one is full').to.equal('success');

        // A queued run canceled: it ends canceled, calls nothing, and frees no place of the open ones.
        const canceled = queued[queued.length - 1]!;
        await api.post(`/v1/executions/${canceled}/cancel`).expect(202);
        const canceledRun = await waitForExecution(api, canceled, undefined, 30_000);
        expect(canceledRun.status).to.equal('canceled');
        expect(callsTo(prefix), 'still only the three open runs called').to.have.length(3);

        release();
        for (const id of ids.filter((id) => id !== canceled)) {
          const done = await waitForExecution(api, id, undefined, 60_000);
          expect(done.status, `${id}: ${JSON.stringify(done.error)}`).to.equal('success');
        }
        const called = callsTo(prefix).map((r) => r.path);
        expect(called, 'one call per run that was not canceled').to.have.length(9);
        expect(new Set(called).size, 'none twice').to.equal(9);
        expect(most, 'calls in flight at once').to.be.at.most(3);
        await waitFor(
          async () => (await api.get('/v1/workspace').expect(200)).body.usage.open_executions === 0,
          {
            what: 'no open execution left',
          },
        );
      } finally {
        release();
        receiver.replyAlways({ status: 200, body: { ok: true } });
      }
    });

    it('lets the child run of a full workspace start: a child is part of its parent', async () => {
      const { api } = await cappedWorkspace(1);
      const child = await createWorkflow(api, definition([rulesStep('bill', [], { default: 'billed' })]));
      const parent = await createWorkflow(
        api,
        definition([
          { id: 'call', kind: 'workflow', workflow: child, input: {} },
          {
            id: 'each',
            kind: 'map',
            items: '[1, 2]',
            as: 'item',
            steps: [{ id: 'sub', kind: 'workflow', workflow: child, input: {} }],
          },
        ]),
      );
      const id = await trigger(api, parent, {});
      const done = await waitForExecution(api, id, undefined, 60_000);
      expect(done.status, JSON.stringify(done.error)).to.equal('success');
      const workspace = (await api.get('/v1/workspace').expect(200)).body;
      expect(workspace.usage.open_executions).to.equal(0);
    });

    it('starts a queued run within seconds of the cap being raised', async () => {
      const prefix = uniqueId('raise');
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      receiver.replyOnceTo(`/${prefix}/0`, { status: 200, body: { held: true }, until: held });
      try {
        const { workspaceId, api } = await cappedWorkspace(1);
        const workflowId = await callingWorkflow(api, prefix);
        const first = await trigger(api, workflowId, { n: 0 });
        await waitFor(async () => callsTo(prefix).length === 1, { what: 'the first run to call' });
        const second = await trigger(api, workflowId, { n: 1 });
        await waitForExecution(api, second, (e) => e.status === 'queued', 30_000);
        await setLimitOverrides(service.runtime.services.db, workspaceId, new Map([['open_executions', 2]]));
        const done = await waitForExecution(api, second, undefined, 30_000);
        expect(done.status).to.equal('success');
        release();
        expect((await waitForExecution(api, first)).status).to.equal('success');
      } finally {
        release();
      }
    });

    /** The results of a run's `run_steps` local activities, in order, from its markers. */
    const batchResults = async (id: string): Promise<StepBatchResult[]> =>
      (await localActivityMarkers<StepBatchResult>(service.runtime.services.temporal.client, id))
        .filter((marker) => marker.type === 'run_steps')
        .map((marker) => marker.result);

    it('spares the runs of a workspace set unlimited: no place asked for, none held', async () => {
      const prefix = uniqueId('unlimited');
      const { workspaceId, key } = await service.newWorkspace(['admin']);
      await setLimitOverrides(service.runtime.services.db, workspaceId, new Map([['open_executions', null]]));
      const api = service.api(key);
      const workflowId = await callingWorkflow(api, prefix);
      const id = await trigger(api, workflowId, { n: 1 });
      expect((await waitForExecution(api, id)).status).to.equal('success');
      const [batch, ...more] = await batchResults(id);
      expect(more, 'one batch').to.have.length(0);
      // The trigger saw no cap: the run's input does not ask (no statement for the place at all).
      expect(batch!.admission, 'no place asked for').to.equal(undefined);
      expect(batch!.released, 'nothing to give back').to.equal(undefined);
      const rows = await service.runtime.services.db.query(
        'select 1 from workspace_admissions where workspace_id = $1',
        [workspaceId],
      );
      expect(rows).to.have.length(0);
    });

    it('keeps the place of a run that waits past its first batch: the next run queues until it ends', async () => {
      const prefix = uniqueId('napping');
      const { workspaceId, api } = await cappedWorkspace(1);
      const napping = await createWorkflow(
        api,
        definition([
          { id: 'nap', kind: 'sleep', duration: '3s' },
          httpStep(
            'call',
            { method: 'POST', url: `${receiver.url}/${prefix}/{{ input.n }}` },
            { retry: NO_RETRY },
          ),
        ]),
      );
      const first = await trigger(api, napping, { n: 0 });
      await waitForExecution(api, first, (e) => e.status === 'waiting', 30_000);
      // The place outlives the batch that took it: the database holds it (on PGlite too), so it survives a crash.
      const rows = await service.runtime.services.db.query<{ state: string }>(
        'select state from workspace_admissions where workspace_id = $1',
        [workspaceId],
      );
      expect(rows, 'the sleeping run holds its place as a row').to.deep.equal([{ state: 'open' }]);
      const second = await trigger(api, napping, { n: 1 });
      await waitForExecution(api, second, (e) => e.status === 'queued', 30_000);
      expect((await waitForExecution(api, first, undefined, 30_000)).status).to.equal('success');
      expect((await waitForExecution(api, second, undefined, 30_000)).status).to.equal('success');
    });

    it("gives a failed run's place back in the batch that failed: the next run starts at once", async () => {
      const prefix = uniqueId('failing');
      receiver.replyOnceTo(`/${prefix}/0`, { status: 500, body: { error: 'down' } });
      const { workspaceId, api } = await cappedWorkspace(1);
      const workflowId = await callingWorkflow(api, prefix);
      const failed = await trigger(api, workflowId, { n: 0 });
      expect((await waitForExecution(api, failed)).status).to.equal('failed');
      const [batch, ...more] = await batchResults(failed);
      expect(more, 'one batch: no release activity after it').to.have.length(0);
      expect(batch!.admission).to.deep.equal({ workspace: { state: 'open' } });
      expect(batch!.released, 'the place given back by the failing batch').to.equal(true);
      const rows = await service.runtime.services.db.query(
        'select 1 from workspace_admissions where workspace_id = $1',
        [workspaceId],
      );
      expect(rows, 'no row left').to.have.length(0);
      // The sweeper would free a lost place only after its grace: the next run needs none of it.
      const next = await trigger(api, workflowId, { n: 1 });
      const done = await waitForExecution(api, next, undefined, 10_000);
      expect(done.status).to.equal('success');
      expect(done.queued_at, 'never queued').to.equal(null);
    });
  });
}
