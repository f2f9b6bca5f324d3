/**
 * Housekeeping (docs/operations.md#data-retention): a Temporal Schedule per task queue runs a job that
 * deletes trigger idempotency keys past their 24 hours (docs/api.md#idempotency), finished webhook deliveries past
 * DELIVERY_LOG_RETENTION_DAYS, with their attempts, and events past EVENT_RETENTION_DAYS (docs/events.md#retention).
 * Rows are aged by writing their timestamps directly.
 */
import { expect } from 'chai';
import { ScheduleOverlapPolicy } from '@temporalio/client';
import { housekeepingScheduleId } from '../../workers/housekeeping-schedule';
import type { PurgeResult } from '../../workers/activities/housekeeping';
import { DB_KINDS, startTestService, type TestService } from '../support/stack';
import { waitFor } from '../support/wait';

for (const db of DB_KINDS) {
  describe(`housekeeping (${db}) @integration`, function () {
    let service: TestService;
    let workspaceId: string;
    let workspaceKey: string;
    let endpointId: string;

    const query = <T = Record<string, unknown>>(sql: string, params: unknown[] = []) =>
      service.runtime.services.db.query<T>(sql, params);
    const schedule = () =>
      service.runtime.services.temporal.client.schedule.getHandle(
        housekeepingScheduleId(service.config.temporal.taskQueue),
      );

    /** Triggers the schedule now and waits for that run's result. */
    async function runHousekeeping(): Promise<PurgeResult> {
      const before = (await schedule().describe()).info.numActionsTaken;
      await schedule().trigger(ScheduleOverlapPolicy.ALLOW_ALL);
      const action = await waitFor(
        async () => {
          const info = (await schedule().describe()).info;
          return info.numActionsTaken > before && info.recentActions.at(-1);
        },
        { what: 'the triggered housekeeping run to start' },
      );
      const { workflowId, firstExecutionRunId } = action.action.workflow;
      return service.runtime.services.temporal.client.workflow
        .getHandle<() => Promise<PurgeResult>>(workflowId, firstExecutionRunId)
        .result();
    }

    async function addIdempotencyKey(key: string, ageHours: number): Promise<void> {
      await query(
        `insert into idempotency_keys (workspace_id, workflow_id, key, execution_id, created_at)
         values ($1, 'wf', $2, $3, now() - make_interval(hours => $4))`,
        [workspaceId, key, `ex_${key}`, ageHours],
      );
    }

    async function addDelivery(id: string, status: string, ageDays: number): Promise<void> {
      await query(
        `insert into webhook_deliveries (id, workspace_id, endpoint_id, event_id, event, execution_id, payload, status, created_at)
         values ($1, $2, $3, $4, 'execution.completed', 'ex_1', '{}', $5, now() - make_interval(days => $6))`,
        [id, workspaceId, endpointId, `evt_${id}`, status, ageDays],
      );
      await query(
        `insert into webhook_delivery_attempts (delivery_id, at, status_code, duration_ms) values ($1, now(), 200, 5)`,
        [id],
      );
    }

    async function addRetry(baseRunId: string, ageDays: number): Promise<void> {
      await query(
        `insert into execution_retries (workspace_id, execution_id, base_run_id, retried_from_step, created_at)
         values ($1, 'ex_1', $2, 'step', now() - make_interval(days => $3))`,
        [workspaceId, baseRunId, ageDays],
      );
    }

    const exists = async (table: string, column: string, value: string) =>
      (await query(`select 1 from ${table} where ${column} = $1`, [value])).length > 0;

    before(async function () {
      this.timeout(120_000);
      service = await startTestService({
        db,
        env: { DELIVERY_LOG_RETENTION_DAYS: '7', TEMPORAL_RETENTION_DAYS: '30', EVENT_RETENTION_DAYS: '3' },
      });
      const workspace = await service.newWorkspace();
      workspaceId = workspace.workspaceId;
      workspaceKey = workspace.key;
      const res = await service
        .api(workspace.key)
        .post('/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['execution.completed'] })
        .expect(201);
      endpointId = res.body.id as string;
    });
    after(async function () {
      this.timeout(30_000);
      await service?.stop();
    });

    it('keeps a schedule of its own per task queue: hourly, never two runs at once', async () => {
      const description = await schedule().describe();
      expect(description.spec.intervals?.map((interval) => interval.every)).to.deep.equal([3_600_000]);
      expect(description.policies.overlap).to.equal('SKIP');
      expect(description.action).to.include({
        workflowType: 'housekeeping',
        taskQueue: service.config.temporal.taskQueue,
      });
    });

    it('deletes idempotency keys older than 24 hours and keeps younger ones', async function () {
      this.timeout(60_000);
      await addIdempotencyKey('expired', 25);
      await addIdempotencyKey('recent', 23);
      const result = await runHousekeeping();
      expect(result.idempotency_keys, 'keys deleted').to.be.at.least(1);
      expect(await exists('idempotency_keys', 'key', 'expired'), 'the 25-hour-old key').to.equal(false);
      expect(await exists('idempotency_keys', 'key', 'recent'), 'the 23-hour-old key').to.equal(true);
    });

    it('deletes finished deliveries past the retention with their attempts; keeps pending and younger ones', async function () {
      this.timeout(60_000);
      await addDelivery('dlv_old_succeeded', 'succeeded', 8);
      await addDelivery('dlv_old_failed', 'failed', 8);
      await addDelivery('dlv_old_pending', 'pending', 8);
      await addDelivery('dlv_young', 'succeeded', 6);
      const result = await runHousekeeping();
      expect(result.deliveries, 'deliveries deleted').to.equal(2);
      for (const id of ['dlv_old_succeeded', 'dlv_old_failed']) {
        expect(await exists('webhook_deliveries', 'id', id), id).to.equal(false);
        expect(await exists('webhook_delivery_attempts', 'delivery_id', id), `${id}'s attempts`).to.equal(
          false,
        );
      }
      for (const id of ['dlv_old_pending', 'dlv_young']) {
        expect(await exists('webhook_deliveries', 'id', id), id).to.equal(true);
        expect(await exists('webhook_delivery_attempts', 'delivery_id', id), `${id}'s attempts`).to.equal(
          true,
        );
      }
    });

    it("deletes records of retried runs older than Temporal's retention, whose runs are gone", async function () {
      this.timeout(60_000);
      await addRetry('run_old', 31);
      await addRetry('run_recent', 29);
      const result = await runHousekeeping();
      expect(result.retries, 'retries deleted').to.equal(1);
      expect(await exists('execution_retries', 'base_run_id', 'run_old'), 'the 31-day-old retry').to.equal(
        false,
      );
      expect(await exists('execution_retries', 'base_run_id', 'run_recent'), 'the 29-day-old retry').to.equal(
        true,
      );
    });

    it('deletes events older than EVENT_RETENTION_DAYS with what was recorded of them; keeps younger ones', async function () {
      this.timeout(60_000);
      const api = service.api(workspaceKey);
      await api
        .post('/v1/events', [
          { id: 'old-event', name: 'housekeeping.test' },
          { id: 'young-event', name: 'housekeeping.test' },
        ])
        .expect(202);
      await query(
        `insert into event_triggers (workspace_id, event_id, workflow_id, error_code, error_message)
         values ($1, 'old-event', 'wf', 'invalid_input', 'refused')`,
        [workspaceId],
      );
      await query(`update events set received_at = now() - interval '3 days 1 hour' where id = 'old-event'`);
      await query(
        `update events set received_at = now() - interval '2 days 23 hours' where id = 'young-event'`,
      );
      const result = await runHousekeeping();
      expect(result.events, 'events deleted').to.equal(1);
      await api.get('/v1/events/old-event').expect(404);
      await api.get('/v1/events/young-event').expect(200);
      expect(
        await exists('event_triggers', 'event_id', 'old-event'),
        "the old event's trigger record",
      ).to.equal(false);
    });
  });
}
