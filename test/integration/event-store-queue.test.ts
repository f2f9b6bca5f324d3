/**
 * Storing the events of requests that arrive together in one statement (src/events/store-queue.ts): each
 * request is answered once its own events are committed, and one request's refusal is its own.
 */
import { expect } from 'chai';
import type { Database } from '../../platform/store/db';
import { createWorkspace } from '../../platform/store/workspaces';
import { EventStoreQueue } from '../../src/events/store-queue';
import { countingStatements, openTestDatabase } from '../support/database';
import { DB_KINDS } from '../support/stack';

const WORKSPACE = 'store-queue-test';

for (const kind of DB_KINDS) {
  describe(`events stored together (${kind}) @integration`, function () {
    this.timeout(60_000);
    let db: Database;
    let close: () => Promise<void>;

    beforeEach(async () => {
      ({ db, close } = await openTestDatabase(kind));
      await createWorkspace(db, WORKSPACE, 'Store queue test');
    });
    afterEach(() => close());

    const request = (id: string, data: Record<string, unknown> = {}) => ({
      workspaceId: WORKSPACE,
      events: [{ id, name: 'order.paid', data }],
    });
    const storedIds = async () =>
      (
        await db.query<{ id: string }>('select id from events where workspace_id = $1 order by seq', [
          WORKSPACE,
        ])
      ).map((row) => row.id);

    it('stores the requests that arrive together in one statement', async () => {
      const counting = countingStatements(db);
      const queue = new EventStoreQueue(counting.db);
      await Promise.all(['a', 'b', 'c'].map((id) => queue.store(request(id))));
      expect(counting.statements, counting.statements.join('\n---\n')).to.have.length(1);
      expect(await storedIds()).to.deep.equal(['a', 'b', 'c']);
    });

    it('fails only the request whose data the database refuses, and stores the others of its group', async () => {
      const queue = new EventStoreQueue(db);
      const outcomes = await Promise.allSettled([
        queue.store(request('a')),
        queue.store(request('b', { text: 'nul \u0000 inside' })),
        queue.store(request('c')),
      ]);
      expect(outcomes.map((outcome) => outcome.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
      expect(await storedIds()).to.deep.equal(['a', 'c']);
    });
  });
}
