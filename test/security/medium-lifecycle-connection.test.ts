/**
 * Saving a workflow with a schedule trigger calls Temporal (its Schedule), and no
 * database connection may wait on that call: a slow Temporal would otherwise hold the pool's
 * connections (and the workflow row's lock) inside open transactions, for every workspace. Temporal's
 * createSchedule is held back here while the save is in flight, and PostgreSQL is asked whether any
 * connection of the service's database sits in an open transaction meanwhile.
 */
import { expect } from 'chai';
import pg from 'pg';
import { definition, rulesStep, uniqueId } from '../support/fixtures';
import { startTestService, type TestService } from '../support/stack';
import { waitFor } from '../support/wait';

describe('security (medium): no database connection held across a Temporal call @integration', function () {
  let service: TestService;
  before(async function () {
    this.timeout(120_000);
    service = await startTestService({ db: 'postgres', worker: false });
  });
  after(async () => service?.stop());

  it('saves a scheduled workflow without an open transaction while Temporal creates its schedule', async function () {
    this.timeout(60_000);
    const workflowService = service.runtime.services.temporal.connection.workflowService;
    const original = workflowService.createSchedule;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let calls = 0;
    workflowService.createSchedule = (async (request: Parameters<typeof original>[0]) => {
      calls++;
      await gate;
      return original.call(workflowService, request);
    }) as typeof original;
    const observer = new pg.Client({ connectionString: service.config.databaseUrl });
    await observer.connect();
    try {
      const id = uniqueId();
      const saving = service
        .api()
        .post('/v1/workflows', {
          ...definition([rulesStep('a', [{ when: 'true', output: 1 }])]),
          id,
          trigger: { type: 'schedule', every: '1h' },
        })
        .then((res) => res);
      await waitFor(async () => calls > 0 || undefined, { what: 'the createSchedule call' });
      const { rows } = await observer.query<{ count: string }>(
        `select count(*) from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid()
            and state in ('idle in transaction', 'idle in transaction (aborted)')`,
      );
      release();
      expect(Number(rows[0]!.count), 'connections in an open transaction while Temporal answers').to.equal(0);
      const res = await saving;
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
    } finally {
      release();
      workflowService.createSchedule = original;
      await observer.end();
    }
  });
});
