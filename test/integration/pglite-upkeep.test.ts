/**
 * The embedded database's upkeep in a running service (docs/operations.md#the-embedded-databases-upkeep):
 * the process that opened PGlite vacuums the tables where rows were deleted, every PGLITE_UPKEEP_SECONDS,
 * as a PostgreSQL server's autovacuum would.
 */
import { expect } from 'chai';
import { startTestService, type TestService } from '../support/stack';
import { waitFor } from '../support/wait';

describe('the embedded database upkeep of a running service (PGlite) @integration', function () {
  this.timeout(120_000);
  let service: TestService;

  before(async () => {
    service = await startTestService({ db: 'pglite', env: { PGLITE_UPKEEP_SECONDS: '1' } });
  });
  after(async () => {
    await service?.stop();
  });

  it('vacuums a table whose rows were deleted, by itself', async () => {
    const { db } = service.runtime.services;
    const { workspaceId } = await service.newWorkspace();
    for (let i = 0; i < 200; i += 1)
      await db.query(
        `insert into idempotency_keys (workspace_id, workflow_id, key, execution_id) values ($1, 'wf', $2, $3)`,
        [workspaceId, `key-${i}`, `ex_${i}`],
      );
    await db.query('delete from idempotency_keys where workspace_id = $1', [workspaceId]);

    const stats = await waitFor(
      async () => {
        const [row] = await db.query<{ dead: number; vacuums: number }>(
          `select n_dead_tup::int as dead, vacuum_count::int as vacuums
           from pg_stat_user_tables where relname = 'idempotency_keys'`,
        );
        return row && row.vacuums > 0 && row.dead === 0 && row;
      },
      { timeoutMs: 30_000, intervalMs: 250, what: 'idempotency_keys to be vacuumed' },
    );
    expect(stats.dead).to.equal(0);
  });
});
