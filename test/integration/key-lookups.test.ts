/**
 * API key lookups of the requests read in one turn of the event loop, in one statement
 * (src/http/key-lookups.ts): each request gets its own key's record, nothing cached.
 */
import { expect } from 'chai';
import { newApiKey } from '../../platform/ids';
import { createApiKey, revokeApiKey } from '../../platform/store/api-keys';
import type { Database } from '../../platform/store/db';
import { createWorkspace } from '../../platform/store/workspaces';
import { KeyLookups } from '../../src/http/key-lookups';
import { countingStatements, openTestDatabase } from '../support/database';
import { DB_KINDS } from '../support/stack';

for (const kind of DB_KINDS) {
  describe(`API key lookups (${kind}) @integration`, function () {
    this.timeout(60_000);
    let db: Database;
    let close: () => Promise<void>;

    beforeEach(async () => {
      ({ db, close } = await openTestDatabase(kind));
      for (const id of ['ws-a', 'ws-b']) await createWorkspace(db, id, id);
    });
    afterEach(() => close());

    it('looks up the keys presented together in one statement, each request getting its own', async () => {
      const a = await createApiKey(db, { workspaceId: 'ws-a', name: 'a', scopes: ['read'] });
      const b = await createApiKey(db, { workspaceId: 'ws-b', name: 'b', scopes: ['write'] });
      const counting = countingStatements(db);
      const lookups = new KeyLookups(counting.db);
      const found = await Promise.all([a.key, b.key, newApiKey(), a.key].map((key) => lookups.find(key)));
      expect(found.map((record) => record?.workspace_id)).to.deep.equal(['ws-a', 'ws-b', undefined, 'ws-a']);
      expect(counting.statements).to.have.length(1);
    });

    it('reads a key again for each later request: a revoked key is seen revoked at once', async () => {
      const a = await createApiKey(db, { workspaceId: 'ws-a', name: 'a', scopes: ['read'] });
      const lookups = new KeyLookups(db);
      expect((await lookups.find(a.key))?.revoked_at).to.equal(null);
      await revokeApiKey(db, 'ws-a', a.record.id);
      expect((await lookups.find(a.key))?.revoked_at).to.be.instanceOf(Date);
    });
  });
}
