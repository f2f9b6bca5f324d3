/**
 * Flow control's metrics (docs/operations.md#metrics) on embedded PGlite with every migration: the queue
 * gauges count what the tables hold per workflow, the busiest first and the rest as `_other`, so that their
 * series stay bounded and add up to the totals; the wait histogram observes each grant once, after its
 * commit, and nothing for a run asking again or a grant rolled back.
 */
import { expect } from 'chai';
import { metrics } from '../../platform/observability/metrics';
import { acquireAdmission, releaseAdmission } from '../../platform/store/admissions';
import { openDatabase, type Database } from '../../platform/store/db';
import { migrate } from '../../platform/store/migrate';
import { queueTotalsByWorkflow } from '../../platform/store/queue-totals';
import { acquireThrottle } from '../../platform/store/throttles';
import { createWorkspace } from '../../platform/store/workspaces';
import { parsePrometheus, sampleOf } from '../support/prometheus';
import { tempDir } from '../support/stack';

describe('flow control: the queue metrics', function () {
  this.timeout(120_000);
  let db: Database;

  before(async () => {
    db = await openDatabase({ url: undefined, dataDir: tempDir('sy-queue-metrics-') });
    await migrate(db);
    await createWorkspace(db, 'ws', 'ws');
    await createWorkspace(db, 'ws2', 'ws2');
  });
  after(async () => db?.close());

  const admit = (workspace: string, workflow: string, id: string) =>
    acquireAdmission(db, {
      workspace_id: workspace,
      workflow_id: workflow,
      key: null,
      execution_id: id,
      limit: 1,
      priority: 0,
    });
  const scrape = async () => parsePrometheus(await metrics.registry.metrics());
  const waits = async (gate: string) =>
    sampleOf(await scrape(), 'switchyard_admission_wait_seconds', { gate });

  it('counts queued and open per workflow from the tables, the busiest first, the rest as _other', async () => {
    // busy: 1 open + 3 queued; mid: 1 open + 1 queued; calm (another workspace): 1 open; slow: 2 throttled.
    for (let n = 0; n < 4; n++) await admit('ws', 'busy', `busy-${n}`);
    for (let n = 0; n < 2; n++) await admit('ws', 'mid', `mid-${n}`);
    await admit('ws2', 'calm', 'calm-0');
    for (let n = 0; n < 3; n++)
      await acquireThrottle(db, {
        workspace_id: 'ws',
        workflow_id: 'slow',
        key: null,
        execution_id: `slow-${n}`,
        limit: 1,
        period_ms: 3_600_000,
        priority: 0,
      });

    const top = await queueTotalsByWorkflow(db, 2);
    const byWorkflow = Object.fromEntries(top.map((row) => [row.workflow_id ?? '_rest', row]));
    expect(byWorkflow['busy']).to.deep.include({ workspace_id: 'ws', queued: 3, open: 1 });
    expect(byWorkflow['mid']).to.deep.include({ workspace_id: 'ws', queued: 1, open: 1 });
    // calm (1 open) and slow (2 queued) together.
    expect(byWorkflow['_rest']).to.deep.include({ workspace_id: null, queued: 2, open: 1 });
    expect(top).to.have.length(3);

    const untrack = metrics.trackQueues((n) => queueTotalsByWorkflow(db, n));
    try {
      const families = await scrape();
      const queued = 'switchyard_flow_control_queued_executions';
      const open = 'switchyard_flow_control_open_executions';
      expect(sampleOf(families, queued, { workspace: 'ws', workflow: 'busy' })).to.equal(3);
      expect(sampleOf(families, open, { workspace: 'ws', workflow: 'busy' })).to.equal(1);
      expect(sampleOf(families, queued, { workspace: 'ws', workflow: 'slow' })).to.equal(2);
      expect(sampleOf(families, open, { workspace: 'ws2', workflow: 'calm' })).to.equal(1);
      expect(sampleOf(families, queued)).to.equal(6);
      // The next scrape reads again, however soon: no earlier read is served.
      await admit('ws', 'busy', 'busy-4');
      expect(sampleOf(await scrape(), queued, { workspace: 'ws', workflow: 'busy' })).to.equal(4);
    } finally {
      untrack();
    }
    expect(sampleOf(await scrape(), 'switchyard_flow_control_queued_executions'), 'no source').to.equal(0);
  });

  it('observes each admission once: at once, after a wait, and not for a run asking again', async () => {
    const concurrency = await waits('concurrency');
    await admit('ws', 'observed', 'observed-0');
    await admit('ws', 'observed', 'observed-1');
    expect(await waits('concurrency'), 'the first run, admitted at once').to.equal(concurrency + 1);
    await admit('ws', 'observed', 'observed-1');
    expect(await waits('concurrency'), 'asking again grants nothing').to.equal(concurrency + 1);
    expect(await releaseAdmission(db, 'observed-0')).to.deep.equal(['observed-1']);
    expect(await waits('concurrency'), 'the queued run, admitted by the release').to.equal(concurrency + 2);
    expect(await releaseAdmission(db, 'observed-1')).to.deep.equal([]);
    expect(await waits('concurrency')).to.equal(concurrency + 2);
  });

  it('observes nothing for a grant whose transaction rolled back', async () => {
    const throttle = await waits('throttle');
    const failing: Database = {
      ...db,
      // The grant runs, then the transaction fails before its commit.
      transaction: (fn) =>
        db.transaction(async (tx) => {
          await fn(tx);
          throw new Error('commit failed');
        }),
    };
    const wait = {
      workspace_id: 'ws',
      workflow_id: 'rolled-back',
      key: null,
      execution_id: 'rolled-back-0',
      limit: 5,
      period_ms: 60_000,
      priority: 0,
    };
    await acquireThrottle(failing, wait).then(
      () => expect.fail('the transaction should fail'),
      (error: Error) => expect(error.message).to.equal('commit failed'),
    );
    expect(await waits('throttle')).to.equal(throttle);
    await acquireThrottle(db, wait);
    expect(await waits('throttle')).to.equal(throttle + 1);
  });
});
