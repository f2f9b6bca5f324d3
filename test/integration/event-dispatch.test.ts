/**
 * The event dispatcher over a claim of several events (src/events/dispatcher.ts), with actions of the
 * test's own over a database alone: each action reads the claim once, every event whose actions succeeded
 * is marked dispatched, and an event whose action failed is deferred alone (its lease set a delay ahead)
 * and tried again after it, without the others being acted on again.
 */
import { expect } from 'chai';
import type { Database } from '../../platform/store/db';
import { storeEvents, type ClaimedEvent } from '../../platform/store/events';
import { createWorkspace } from '../../platform/store/workspaces';
import { EventDispatcher, type EventAction } from '../../src/events/dispatcher';
import type { Services } from '../../src/services';
import { openTestDatabase } from '../support/database';
import { DB_KINDS, testLogger } from '../support/stack';
import { waitFor } from '../support/wait';

const WORKSPACE = 'dispatch-test';

for (const kind of DB_KINDS) {
  describe(`event dispatch of a claim (${kind}) @integration`, function () {
    this.timeout(60_000);
    let db: Database;
    let close: () => Promise<void>;
    let dispatcher: EventDispatcher | undefined;

    beforeEach(async () => {
      ({ db, close } = await openTestDatabase(kind));
      await createWorkspace(db, WORKSPACE, 'Dispatch test');
    });
    afterEach(async () => {
      await dispatcher?.stop();
      await close();
    });

    const services = () => ({ db, logger: testLogger }) as unknown as Services;

    const rows = () =>
      db.query<{ id: string; dispatched: boolean; attempts: number; deferred_ms: number | null }>(
        `select id, dispatched_at is not null as dispatched, attempts,
                (extract(epoch from lease_until - now()) * 1000)::float8 as deferred_ms
           from events where workspace_id = $1 order by id`,
        [WORKSPACE],
      );

    /** An action that records each claim it read and each event it acted on, failing on `fails` once. */
    const recording = (fails: Set<string>) => {
      const claims: string[][] = [];
      const acted: string[] = [];
      const action: EventAction = (_services, events) => {
        claims.push(events.map((event) => event.id));
        return Promise.resolve((event: ClaimedEvent) => {
          acted.push(event.id);
          if (fails.delete(event.id)) return Promise.reject(new Error(`${event.id} failed`));
          return Promise.resolve();
        });
      };
      return { action, claims, acted };
    };

    it('reads a claim once and marks every event dispatched in it', async () => {
      await storeEvents(db, [
        {
          workspaceId: WORKSPACE,
          events: ['a', 'b', 'c'].map((id) => ({ id, name: 'order.paid', data: {} })),
        },
      ]);
      const { action, claims, acted } = recording(new Set());
      dispatcher = new EventDispatcher(services(), [action], { sweepMs: 60_000 });
      dispatcher.start();
      await waitFor(async () => (await rows()).every((row) => row.dispatched), {
        what: 'every event to be dispatched',
      });
      expect(claims, 'one claim, read once').to.deep.equal([['a', 'b', 'c']]);
      expect([...acted].sort()).to.deep.equal(['a', 'b', 'c']);
    });

    it('defers only the event whose action failed, and tries it again later without the others', async () => {
      await storeEvents(db, [
        {
          workspaceId: WORKSPACE,
          events: ['a', 'b', 'c'].map((id) => ({ id, name: 'order.paid', data: {} })),
        },
      ]);
      const { action, acted } = recording(new Set(['b']));
      dispatcher = new EventDispatcher(services(), [action], { sweepMs: 60_000 });
      dispatcher.start();
      await waitFor(async () => (await rows()).filter((row) => row.dispatched).length === 2, {
        what: 'the events that did not fail to be dispatched',
      });
      const [a, b, c] = await rows();
      expect([a!.dispatched, b!.dispatched, c!.dispatched]).to.deep.equal([true, false, true]);
      expect(b!.attempts).to.equal(1);
      expect(b!.deferred_ms, 'the failed event deferred by its first delay (1 s)').to.be.within(0, 1000);
      // As when its delay has run out: the next pass takes it again.
      await db.query('update events set lease_until = now() where workspace_id = $1 and id = $2', [
        WORKSPACE,
        'b',
      ]);
      dispatcher.kick();
      await waitFor(async () => (await rows()).every((row) => row.dispatched), {
        what: 'the deferred event to be dispatched',
      });
      expect([...acted].sort(), 'a and c acted on once, b twice').to.deep.equal(['a', 'b', 'b', 'c']);
    });
  });
}
