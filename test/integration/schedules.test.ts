/**
 * The schedule trigger (docs/definitions.md#schedule-trigger): the Temporal Schedule follows the workflow's
 * saves and delete.
 */
import { expect } from 'chai';
import { ScheduleNotFoundError, type ScheduleDescription } from '@temporalio/client';
import { EXECUTION_ID_PATTERN } from '../../platform/ids';
import { reconcileSchedules, scheduleIdOf } from '../../src/definitions/schedule-sync';
import type { ExecutionInput } from '../../core/execution-types';
import {
  createWorkflow,
  definition,
  expectError,
  uniqueId,
  waitForExecution,
  type ExecutionBody,
} from '../support/fixtures';
import {
  DB_KINDS,
  sharedTemporal,
  startTestService,
  type ApiClient,
  type TestService,
} from '../support/stack';
import { TcpProxy } from '../support/tcp-proxy';
import { echo, scheduleSuite, weekdayMornings } from '../support/schedules';
import { waitFor } from '../support/wait';

const inputSchema = {
  type: 'object',
  required: ['customer'],
  properties: { customer: { type: 'string' }, plan: { type: 'string', default: 'starter' } },
  additionalProperties: false,
};

for (const db of DB_KINDS) {
  describe(`schedules (${db}) @integration`, function () {
    let service: TestService;
    let api: ApiClient;
    let workspaceId: string;

    const client = () => service.runtime.services.temporal.client;
    const describeSchedule = (workflowId: string): Promise<ScheduleDescription> =>
      client().schedule.getHandle(scheduleIdOf(workspaceId, workflowId)).describe();
    const expectNoSchedule = async (workflowId: string) => {
      const error = await describeSchedule(workflowId).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, `the schedule of ${workflowId} should be gone`).to.be.instanceOf(ScheduleNotFoundError);
    };
    const scheduledWorkflow = async (trigger: Record<string, unknown> = weekdayMornings()) =>
      createWorkflow(api, definition(echo(), { input_schema: inputSchema, trigger }));

    scheduleSuite({ db }, (suite) => ({ service, api, workspaceId } = suite));

    it('creates a Temporal Schedule: cron with its time zone, SKIP overlap, a short catch-up window', async () => {
      const id = await scheduledWorkflow();
      const schedule = await describeSchedule(id);
      expect(schedule.spec.timezone).to.equal('Europe/Paris');
      expect(schedule.spec.calendars).to.have.length(1);
      expect(schedule.policies).to.include({ overlap: 'SKIP', catchupWindow: 60_000 });
      expect(schedule.action).to.include({
        workflowType: 'execution',
        taskQueue: service.config.temporal.taskQueue,
      });
      expect(schedule.action.workflowId).to.match(/^ex_[A-Za-z0-9]{20}$/);
      const input = schedule.action.args![0] as ExecutionInput;
      expect(input.trigger).to.deep.equal({ type: 'schedule', body: { customer: 'Ada' } });
      expect(input.input).to.deep.equal({ customer: 'Ada', plan: 'starter' });
      expect(input.workflow).to.include({ id, version: 1 });
    });

    it('runs an `every` schedule: its runs are listed with trigger schedule and the schedule input', async function () {
      this.timeout(30_000);
      const id = await scheduledWorkflow({ type: 'schedule', every: '1m', input: { customer: 'Grace' } });
      // A run now, as the schedule's next one would be (intervals are at least a minute).
      await client().schedule.getHandle(scheduleIdOf(workspaceId, id)).trigger();
      const listed = await waitFor(
        async () => {
          const res = await api.get(`/v1/executions?workflow=${id}`).expect(200);
          return (res.body.data as ExecutionBody[]).find((e) => e.status === 'success');
        },
        { timeoutMs: 15_000, intervalMs: 250, what: 'a scheduled run to finish' },
      );
      expect(listed.trigger).to.deep.equal({ type: 'schedule' });
      expect(listed.execution_id).to.match(/^ex_[A-Za-z0-9]{20}-\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      expect(listed.execution_id).to.match(EXECUTION_ID_PATTERN);

      const execution = await waitForExecution(api, listed.execution_id);
      expect(execution).to.include({ workflow: id, workflow_version: 1, status: 'success' });
      expect(execution.trigger).to.deep.equal({ type: 'schedule' });
      expect(execution.steps[0]).to.include({ id: 'trigger', kind: 'trigger' });
      expect(execution.steps[0]!.input).to.deep.equal({ customer: 'Grace' });
      expect(execution.steps[0]!.output).to.deep.equal({ customer: 'Grace', plan: 'starter' });
      expect(execution.steps[1]!.output).to.deep.equal({ customer: 'Grace', plan: 'starter' });
      await api.delete(`/v1/workflows/${id}`).expect(204);
    });

    it('updates the schedule when a new version is saved', async () => {
      const id = await scheduledWorkflow();
      await api
        .put(`/v1/workflows/${id}`, {
          steps: echo(),
          input_schema: inputSchema,
          trigger: { type: 'schedule', every: '1h', input: { customer: 'Lin' } },
        })
        .expect(200);
      const schedule = await describeSchedule(id);
      expect(schedule.spec.intervals?.map((i) => i.every)).to.deep.equal([3_600_000]);
      const input = schedule.action.args![0] as ExecutionInput;
      expect(input.workflow.version).to.equal(2);
      expect(input.input).to.deep.equal({ customer: 'Lin', plan: 'starter' });
    });

    it("keeps an operator's pause when a new version is saved", async () => {
      const id = await scheduledWorkflow();
      await client().schedule.getHandle(scheduleIdOf(workspaceId, id)).pause('paused by an operator');
      await api
        .put(`/v1/workflows/${id}`, { steps: echo(), input_schema: inputSchema, trigger: weekdayMornings() })
        .expect(200);
      const schedule = await describeSchedule(id);
      expect(schedule.state).to.include({ paused: true, note: 'paused by an operator' });
      expect((schedule.action.args![0] as ExecutionInput).workflow.version).to.equal(2);
    });

    it('removes the schedule when a version without a schedule trigger is saved', async () => {
      const id = await scheduledWorkflow();
      await api.put(`/v1/workflows/${id}`, { steps: echo(), trigger: { type: 'api' } }).expect(200);
      await expectNoSchedule(id);
    });

    it('removes the schedule when the workflow is deleted', async () => {
      const id = await scheduledWorkflow();
      await describeSchedule(id);
      await api.delete(`/v1/workflows/${id}`).expect(204);
      await expectNoSchedule(id);
    });

    it('answers 400 invalid_definition at /trigger/cron for a cron expression Temporal rejects, and saves nothing', async () => {
      const body = definition(echo(), { trigger: { type: 'schedule', cron: '61 * * * *' } });
      const res = await api.post('/v1/workflows', body);
      expectError(res, 400, 'invalid_definition');
      expect(res.body.error.details).to.have.length(1);
      expect(res.body.error.details[0].path).to.equal('/trigger/cron');
      expect(res.body.error.details[0].message).to.include('Minute is not in range');
      expectError(await api.get(`/v1/workflows/${body['id'] as string}`), 404, 'workflow_not_found');
    });

    it('keeps the previous version and its schedule when a new version has a cron Temporal rejects', async () => {
      const id = await scheduledWorkflow();
      const res = await api.put(`/v1/workflows/${id}`, {
        steps: echo(),
        input_schema: inputSchema,
        trigger: weekdayMornings({ cron: 'every morning' }),
      });
      expectError(res, 400, 'invalid_definition');
      expect(res.body.error.details[0].path).to.equal('/trigger/cron');
      expect((await api.get(`/v1/workflows/${id}`).expect(200)).body.version).to.equal(1);
      expect(((await describeSchedule(id)).action.args![0] as ExecutionInput).workflow.version).to.equal(1);
    });

    it('answers 400 invalid_definition at /trigger/timezone for an unknown or misspelt time zone', async () => {
      for (const timezone of ['Mars/Olympus_Mons', 'europe/paris', '+02:00']) {
        const body = definition(echo(), {
          input_schema: inputSchema,
          trigger: weekdayMornings({ timezone }),
        });
        const res = await api.post('/v1/workflows', body);
        expectError(res, 400, 'invalid_definition');
        expect(res.body.error.details.map((d: { path: string }) => d.path)).to.deep.equal([
          '/trigger/timezone',
        ]);
      }
    });

    it('answers 400 invalid_definition when the schedule input does not satisfy the input_schema', async () => {
      const body = definition(echo(), {
        input_schema: inputSchema,
        trigger: weekdayMornings({ input: { plan: 7 } }),
      });
      const res = await api.post('/v1/workflows', body);
      expectError(res, 400, 'invalid_definition');
      const paths = res.body.error.details.map((d: { path: string }) => d.path);
      expect(paths).to.have.members(['/trigger/input/customer', '/trigger/input/plan']);
    });

    it('answers 400 invalid_definition for an interval under a minute', async () => {
      for (const every of ['59s', '500ms', '59999ms']) {
        const body = definition(echo(), { trigger: { type: 'schedule', every } });
        const res = await api.post('/v1/workflows', body);
        expectError(res, 400, 'invalid_definition');
        expect(res.body.error.details[0].path, every).to.equal('/trigger/every');
      }
    });

    it('answers 400 invalid_definition for a cron that fires more than once a minute', async () => {
      for (const cron of ['* * * * * * *', '*/5 * * * * * *', '@every 10s']) {
        const body = definition(echo(), { trigger: { type: 'schedule', cron } });
        const res = await api.post('/v1/workflows', body);
        expectError(res, 400, 'invalid_definition');
        expect(res.body.error.details[0].path, cron).to.equal('/trigger/cron');
      }
    });

    describe('reconcileSchedules', () => {
      it('recreates a schedule deleted behind its back', async () => {
        const id = await scheduledWorkflow();
        await client().schedule.getHandle(scheduleIdOf(workspaceId, id)).delete();
        const report = await reconcileSchedules(service.runtime.services);
        expect(report.created).to.include(scheduleIdOf(workspaceId, id));
        expect(report.failed).to.deep.equal([]);
        expect(((await describeSchedule(id)).action.args![0] as ExecutionInput).workflow.id).to.equal(id);
      });

      it('brings a stale schedule up to date and leaves current ones alone', async () => {
        const stale = await scheduledWorkflow();
        const current = await scheduledWorkflow();
        await client()
          .schedule.getHandle(scheduleIdOf(workspaceId, stale))
          .update((previous) => ({ ...previous, spec: { intervals: [{ every: '5h' }] } }));
        const report = await reconcileSchedules(service.runtime.services);
        expect(report.updated).to.include(scheduleIdOf(workspaceId, stale));
        expect(report.updated).not.to.include(scheduleIdOf(workspaceId, current));
        const schedule = await describeSchedule(stale);
        expect(schedule.spec.intervals).to.deep.equal([]);
        expect(schedule.spec.timezone).to.equal('Europe/Paris');
      });

      it('deletes an orphan of ours and leaves schedules of another task queue alone', async () => {
        const orphan = scheduleIdOf(workspaceId, uniqueId('gone'));
        const foreign = scheduleIdOf(workspaceId, uniqueId('elsewhere'));
        const schedule = (scheduleId: string, taskQueue: string) =>
          client().schedule.create({
            scheduleId,
            spec: { intervals: [{ every: '1h' }] },
            action: { type: 'startWorkflow', workflowType: 'execution', taskQueue, args: [] },
            state: { paused: true },
          });
        await schedule(orphan, service.config.temporal.taskQueue);
        await schedule(foreign, `${service.config.temporal.taskQueue}-other`);
        try {
          // The list is eventually consistent: wait until it shows the new schedules.
          const report = await waitFor(
            async () => {
              const r = await reconcileSchedules(service.runtime.services, { orphanGraceMs: 0 });
              return r.deleted.includes(orphan) ? r : undefined;
            },
            { timeoutMs: 10_000, intervalMs: 500, what: 'the orphan to be reconciled' },
          );
          expect(report.deleted).not.to.include(foreign);
          const error = await client()
            .schedule.getHandle(orphan)
            .describe()
            .catch((e: unknown) => e);
          expect(error).to.be.instanceOf(ScheduleNotFoundError);
          await client().schedule.getHandle(foreign).describe();
        } finally {
          await client()
            .schedule.getHandle(foreign)
            .delete()
            .catch(() => undefined);
        }
      });

      it('leaves a just-written orphan for the next start (a save may be in flight)', async () => {
        const orphan = scheduleIdOf(workspaceId, uniqueId('young'));
        await client().schedule.create({
          scheduleId: orphan,
          spec: { intervals: [{ every: '1h' }] },
          action: {
            type: 'startWorkflow',
            workflowType: 'execution',
            taskQueue: service.config.temporal.taskQueue,
            args: [],
          },
          state: { paused: true },
        });
        try {
          const report = await reconcileSchedules(service.runtime.services);
          expect(report.deleted).not.to.include(orphan);
          await client().schedule.getHandle(orphan).describe();
        } finally {
          await client().schedule.getHandle(orphan).delete();
        }
      });
    });
  });
}

describe('schedules with Temporal down @integration', function () {
  let proxy: TcpProxy;
  let service: TestService;
  let scheduled: string;

  before(async function () {
    this.timeout(120_000);
    const [host, port] = (await sharedTemporal()).address.split(':');
    proxy = await TcpProxy.start({ host: host!, port: Number(port) });
    service = await startTestService({ env: { TEMPORAL_ADDRESS: `127.0.0.1:${proxy.port}` } });
    scheduled = await createWorkflow(
      service.api(),
      definition(echo(), { input_schema: inputSchema, trigger: weekdayMornings() }),
    );
    await proxy.cut();
  });
  after(async function () {
    this.timeout(60_000);
    await proxy?.restore();
    if (scheduled) await service?.api().delete(`/v1/workflows/${scheduled}`);
    await service?.stop();
  });

  it('answers 503 temporal_unavailable to a save with a schedule trigger, and saves nothing', async function () {
    this.timeout(20_000);
    const body = definition(echo(), { input_schema: inputSchema, trigger: weekdayMornings() });
    expectError(await service.api().post('/v1/workflows', body), 503, 'temporal_unavailable');
    expectError(await service.api().get(`/v1/workflows/${body['id'] as string}`), 404, 'workflow_not_found');
  });

  it('answers 503 temporal_unavailable to deleting a scheduled workflow, and keeps it', async function () {
    this.timeout(20_000);
    expectError(await service.api().delete(`/v1/workflows/${scheduled}`), 503, 'temporal_unavailable');
    await service.api().get(`/v1/workflows/${scheduled}`).expect(200);
  });
});
