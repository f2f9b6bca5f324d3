/**
 * Schedule controls (docs/definitions.md#schedules): read a workflow's schedule, pause and resume it, run it
 * now, backfill a past window, and the trigger's `overlap`, against the real Temporal dev server.
 */
import { expect } from 'chai';
import type { ScheduleDescription } from '@temporalio/client';
import { scheduleIdOf } from '../../src/definitions/schedule-sync';
import { createWorkflow, definition, expectError, waitForExecution } from '../support/fixtures';
import type { ApiClient, TestService } from '../support/stack';
import { echo, scheduleSuite, weekdayMornings } from '../support/schedules';
import { waitFor } from '../support/wait';

interface ScheduleBody {
  spec: { cron?: string; every?: string };
  timezone: string;
  overlap: string;
  paused: boolean;
  note: string | null;
  next_runs: string[];
  recent_runs: { execution_id: string; scheduled_at: string }[];
}

const MINUTE = 60_000;

describe('schedule controls @integration', function () {
  let service: TestService;
  let api: ApiClient;
  let workspaceId: string;

  const describeSchedule = (workflowId: string): Promise<ScheduleDescription> =>
    service.runtime.services.temporal.client.schedule
      .getHandle(scheduleIdOf(workspaceId, workflowId))
      .describe();
  const scheduled = (trigger: Record<string, unknown> = weekdayMornings()) =>
    createWorkflow(api, definition(echo(), { trigger }));
  const schedule = async (id: string): Promise<ScheduleBody> =>
    (await api.get(`/v1/workflows/${id}/schedule`).expect(200)).body as ScheduleBody;

  scheduleSuite({}, (suite) => ({ service, api, workspaceId } = suite));

  describe('GET /v1/workflows/{id}/schedule', () => {
    it('shows the spec as the trigger states it, the state, and the next five times', async () => {
      const id = await scheduled();
      const body = await schedule(id);
      expect(body).to.include({ timezone: 'Europe/Paris', overlap: 'skip', paused: false, note: null });
      expect(body.spec).to.deep.equal({ cron: '0 9 * * 1-5' });
      expect(body.recent_runs).to.deep.equal([]);
      expect(body.next_runs).to.have.length(5);
      const times = body.next_runs.map((t) => new Date(t));
      for (const [i, time] of times.entries()) {
        expect(body.next_runs[i], 'RFC 3339 in UTC').to.equal(time.toISOString());
        expect(time.getTime(), 'in the future').to.be.greaterThan(Date.now());
        if (i > 0) expect(time.getTime(), 'in order').to.be.greaterThan(times[i - 1]!.getTime());
        const paris = new Intl.DateTimeFormat('en-GB', {
          timeZone: 'Europe/Paris',
          weekday: 'short',
          hour: '2-digit',
          minute: '2-digit',
        }).format(time);
        expect(paris, body.next_runs[i]).to.match(/^(Mon|Tue|Wed|Thu|Fri) 09:00$/);
      }
    });

    it('shows an `every` spec in UTC', async () => {
      const id = await scheduled({ type: 'schedule', every: '15m' });
      const body = await schedule(id);
      expect(body.spec).to.deep.equal({ every: '15m' });
      expect(body.timezone).to.equal('UTC');
      const gaps = body.next_runs.slice(1).map((t, i) => Date.parse(t) - Date.parse(body.next_runs[i]!));
      expect(gaps).to.deep.equal([15 * MINUTE, 15 * MINUTE, 15 * MINUTE, 15 * MINUTE]);
    });

    it('answers 404 workflow_not_found for an unknown workflow and for one of another workspace', async () => {
      expectError(await api.get('/v1/workflows/wf-nowhere/schedule'), 404, 'workflow_not_found');
      const id = await scheduled();
      const other = await service.newWorkspace();
      expectError(
        await service.api(other.key).get(`/v1/workflows/${id}/schedule`),
        404,
        'workflow_not_found',
      );
    });

    it('answers 404 schedule_not_found to every schedule endpoint of a workflow without a schedule trigger', async () => {
      const id = await createWorkflow(api, definition(echo()));
      const window = { start: '2026-01-01T00:00:00Z', end: '2026-01-01T01:00:00Z' };
      expectError(await api.get(`/v1/workflows/${id}/schedule`), 404, 'schedule_not_found');
      expectError(await api.post(`/v1/workflows/${id}/schedule/pause`, {}), 404, 'schedule_not_found');
      expectError(await api.post(`/v1/workflows/${id}/schedule/resume`), 404, 'schedule_not_found');
      expectError(await api.post(`/v1/workflows/${id}/schedule/run`), 404, 'schedule_not_found');
      expectError(await api.post(`/v1/workflows/${id}/schedule/backfill`, window), 404, 'schedule_not_found');
    });
  });

  describe('pause and resume', () => {
    it('pauses with a note (no next runs while paused) and resumes', async () => {
      const id = await scheduled();
      const paused = (
        await api.post(`/v1/workflows/${id}/schedule/pause`, { note: 'CRM maintenance' }).expect(200)
      ).body as ScheduleBody;
      expect(paused).to.include({ paused: true, note: 'CRM maintenance' });
      expect(paused.next_runs).to.deep.equal([]);
      expect((await describeSchedule(id)).state).to.include({ paused: true, note: 'CRM maintenance' });
      expect(await schedule(id)).to.include({ paused: true, note: 'CRM maintenance' });

      const resumed = (await api.post(`/v1/workflows/${id}/schedule/resume`).expect(200))
        .body as ScheduleBody;
      expect(resumed).to.include({ paused: false, note: null });
      expect(resumed.next_runs).to.have.length(5);
      expect((await describeSchedule(id)).state.paused).to.equal(false);
    });

    it('pauses without a note: the note is null', async () => {
      const id = await scheduled();
      const paused = (await api.post(`/v1/workflows/${id}/schedule/pause`).expect(200)).body as ScheduleBody;
      expect(paused).to.include({ paused: true, note: null });
    });

    it('stays paused, with its note, when a new version is saved', async () => {
      const id = await scheduled();
      await api.post(`/v1/workflows/${id}/schedule/pause`, { note: 'until the audit' }).expect(200);
      await api
        .put(`/v1/workflows/${id}`, { steps: echo(), trigger: weekdayMornings({ cron: '0 10 * * *' }) })
        .expect(200);
      const body = await schedule(id);
      expect(body).to.include({ paused: true, note: 'until the audit' });
      expect(body.spec).to.deep.equal({ cron: '0 10 * * *' });
    });

    it('answers 400 invalid_request to a note longer than 500 characters, and does not pause', async () => {
      const id = await scheduled();
      const res = await api.post(`/v1/workflows/${id}/schedule/pause`, { note: 'x'.repeat(501) });
      expectError(res, 400, 'invalid_request');
      expect(res.body.error.details[0].path).to.equal('/note');
      expect((await schedule(id)).paused).to.equal(false);
    });
  });

  describe('run now', () => {
    it('starts an execution with the schedule input that GET /v1/executions/{id} reads and recent_runs lists', async function () {
      this.timeout(30_000);
      const id = await scheduled();
      const res = await api.post(`/v1/workflows/${id}/schedule/run`).expect(202);
      expect(res.body.status).to.equal('accepted');
      const executionId = res.body.execution_id as string;
      const execution = await waitForExecution(api, executionId);
      expect(execution).to.include({ execution_id: executionId, workflow: id, status: 'success' });
      expect(execution.trigger).to.deep.equal({ type: 'schedule' });
      expect(execution.steps[0]).to.include({ id: 'trigger', kind: 'trigger' });
      expect(execution.steps[0]!.output).to.deep.equal({ customer: 'Ada' });
      const listed = await waitFor(
        async () => (await schedule(id)).recent_runs.find((r) => r.execution_id === executionId),
        { timeoutMs: 15_000, intervalMs: 250, what: 'the run in recent_runs' },
      );
      expect(Date.parse(listed.scheduled_at)).to.be.closeTo(Date.now(), 30_000);
    });

    it('runs while the schedule is paused', async () => {
      const id = await scheduled();
      await api.post(`/v1/workflows/${id}/schedule/pause`).expect(200);
      const res = await api.post(`/v1/workflows/${id}/schedule/run`).expect(202);
      await api.get(`/v1/executions/${res.body.execution_id as string}`).expect(200);
    });
  });

  describe('backfill', () => {
    it('starts exactly the runs of a past window: every minute over [T, T+5m) is 5 runs', async function () {
      this.timeout(60_000);
      const id = await scheduled({ type: 'schedule', every: '1m', input: { customer: 'Grace' } });
      // Paused: the schedule's own runs stay out of the way; a backfill runs anyway.
      await api.post(`/v1/workflows/${id}/schedule/pause`).expect(200);
      const start = Math.floor(Date.now() / MINUTE) * MINUTE - 10 * MINUTE;
      const window = {
        start: new Date(start).toISOString(),
        end: new Date(start + 5 * MINUTE).toISOString(),
      };
      const res = await api.post(`/v1/workflows/${id}/schedule/backfill`, window).expect(202);
      expect(res.body).to.deep.equal({ status: 'accepted', count: 5 });

      // A backfilled run has the id a scheduled run at its time has: the schedule's prefix and the time.
      const prefix = (await describeSchedule(id)).action.workflowId;
      const idAt = (ms: number) => `${prefix}-${new Date(ms).toISOString().replace('.000Z', 'Z')}`;
      for (let i = 0; i < 5; i++) {
        const execution = await waitForExecution(api, idAt(start + i * MINUTE), undefined, 30_000);
        expect(execution).to.include({ status: 'success', workflow: id });
        expect(execution.steps[0]!.output).to.deep.equal({ customer: 'Grace' });
      }
      // The end is not in the window.
      expectError(await api.get(`/v1/executions/${idAt(start + 5 * MINUTE)}`), 404, 'execution_not_found');
      const listed = await waitFor(
        async () => {
          const runs = (await schedule(id)).recent_runs;
          return runs.length === 5 ? runs : undefined;
        },
        { timeoutMs: 15_000, intervalMs: 250, what: 'the 5 backfilled runs in recent_runs' },
      );
      expect(listed.map((r) => r.scheduled_at)).to.deep.equal(
        [4, 3, 2, 1, 0].map((i) => new Date(start + i * MINUTE).toISOString()),
      );
    });

    it('answers 202 with count 0 for a window with no run of the schedule', async () => {
      const id = await scheduled();
      // A Saturday: the weekday schedule has no run.
      const res = await api
        .post(`/v1/workflows/${id}/schedule/backfill`, {
          start: '2026-01-03T00:00:00Z',
          end: '2026-01-04T00:00:00Z',
        })
        .expect(202);
      expect(res.body).to.deep.equal({ status: 'accepted', count: 0 });
    });

    it('refuses windows it cannot run with 400 invalid_request naming the field', async () => {
      const id = await scheduled({ type: 'schedule', every: '1m' });
      const now = Date.now();
      const iso = (ms: number) => new Date(ms).toISOString();
      const cases: [string, Record<string, unknown>, string, RegExp][] = [
        ['not a time', { start: 'yesterday', end: iso(now) }, '/start', /./],
        ['no offset', { start: '2026-01-01T00:00:00', end: iso(now) }, '/start', /./],
        ['no end', { start: iso(now - MINUTE) }, '/end', /./],
        [
          'end before start',
          { start: iso(now - MINUTE), end: iso(now - 2 * MINUTE) },
          '/end',
          /later than start/,
        ],
        ['empty window', { start: iso(now - MINUTE), end: iso(now - MINUTE) }, '/end', /later than start/],
        ['end in the future', { start: iso(now - MINUTE), end: iso(now + 10 * MINUTE) }, '/end', /future/],
        ['before 1970', { start: '1969-12-31T23:59:00Z', end: iso(now) }, '/start', /1970/],
        [
          'over 1,000 runs',
          { start: iso(now - 2000 * MINUTE), end: iso(now) },
          '/end',
          /more than 1000 runs/,
        ],
      ];
      for (const [what, body, path, message] of cases) {
        const res = await api.post(`/v1/workflows/${id}/schedule/backfill`, body);
        expectError(res, 400, 'invalid_request');
        expect(res.body.error.details[0].path, what).to.equal(path);
        expect(res.body.error.details[0].message, what).to.match(message);
      }
    });

    it('accepts a window of exactly 1,000 runs', async () => {
      const id = await scheduled({ type: 'schedule', every: '1m' });
      await api.post(`/v1/workflows/${id}/schedule/pause`).expect(200);
      const start = Math.floor(Date.now() / MINUTE) * MINUTE - 2000 * MINUTE;
      // Counted only: the runs themselves are not awaited, and deleting the workflow stops the rest.
      const res = await api
        .post(`/v1/workflows/${id}/schedule/backfill`, {
          start: new Date(start).toISOString(),
          end: new Date(start + 1000 * MINUTE).toISOString(),
        })
        .expect(202);
      expect(res.body.count).to.equal(1000);
      await api.delete(`/v1/workflows/${id}`).expect(204);
    });
  });

  describe('overlap', () => {
    const policies: Record<string, string> = {
      skip: 'SKIP',
      buffer_one: 'BUFFER_ONE',
      buffer_all: 'BUFFER_ALL',
      cancel_other: 'CANCEL_OTHER',
      allow_all: 'ALLOW_ALL',
    };

    for (const [overlap, policy] of Object.entries(policies)) {
      it(`maps overlap ${overlap} to Temporal's ${policy}`, async () => {
        const id = await scheduled(weekdayMornings({ overlap }));
        expect((await describeSchedule(id)).policies.overlap).to.equal(policy);
        expect((await schedule(id)).overlap).to.equal(overlap);
      });
    }

    it('follows a new version that changes overlap', async () => {
      const id = await scheduled();
      await api
        .put(`/v1/workflows/${id}`, { steps: echo(), trigger: weekdayMornings({ overlap: 'buffer_all' }) })
        .expect(200);
      expect((await describeSchedule(id)).policies.overlap).to.equal('BUFFER_ALL');
    });

    it('answers 400 invalid_definition at /trigger/overlap for an unknown value', async () => {
      const res = await api.post(
        '/v1/workflows',
        definition(echo(), { trigger: weekdayMornings({ overlap: 'queue' }) }),
      );
      expectError(res, 400, 'invalid_definition');
      expect(res.body.error.details.map((d: { path: string }) => d.path)).to.deep.equal(['/trigger/overlap']);
    });
  });
});
