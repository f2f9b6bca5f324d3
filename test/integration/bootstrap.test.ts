/** BOOTSTRAP_API_KEY (docs/api.md#api-keys) and the first-start seed, on both databases. */
import { expect } from 'chai';
import { bootstrap } from '../../processes/bootstrap';
import { newApiKey } from '../../platform/ids';
import { findApiKeyByKey, listApiKeys } from '../../platform/store/api-keys';
import { openDatabase, type Database } from '../../platform/store/db';
import { migrate } from '../../platform/store/migrate';
import { getWorkflowVersion } from '../../platform/store/workflows';
import { createPostgresDatabase, DB_KINDS, tempDir, testLogger } from '../support/stack';

for (const kind of DB_KINDS) {
  describe(`bootstrap (${kind}) @integration`, () => {
    let db: Database;
    let drop: (() => Promise<void>) | undefined;
    beforeEach(async () => {
      const server = kind === 'postgres' ? await createPostgresDatabase() : undefined;
      drop = server ? () => server.drop() : undefined;
      db = await openDatabase({ url: server?.url, dataDir: tempDir() });
      await migrate(db);
    });
    afterEach(async () => {
      await db.close();
      await drop?.();
    });

    it('registers BOOTSTRAP_API_KEY as an admin key of workspace default', async () => {
      const key = newApiKey();
      await bootstrap(db, { bootstrapApiKey: key, seedDemo: false }, testLogger);
      expect(await findApiKeyByKey(db, key)).to.deep.include({
        workspace_id: 'default',
        scopes: ['admin'],
        revoked_at: null,
      });
    });

    it('registers it once, however often the service starts', async () => {
      const key = newApiKey();
      await bootstrap(db, { bootstrapApiKey: key, seedDemo: false }, testLogger);
      await bootstrap(db, { bootstrapApiKey: key, seedDemo: false }, testLogger);
      expect(await listApiKeys(db, 'default', { limit: 10 })).to.have.length(1);
    });

    it('seeds the demo workflow on the first start only', async () => {
      await bootstrap(db, { bootstrapApiKey: undefined, seedDemo: true }, testLogger);
      await db.query("delete from workflows where id = 'customer-onboarding'");
      await bootstrap(db, { bootstrapApiKey: undefined, seedDemo: true }, testLogger);
      expect(await getWorkflowVersion(db, 'default', 'customer-onboarding')).to.equal(undefined);
    });

    it('applies migrations once: a second run changes nothing', async () => {
      const again = await migrate(db);
      expect(again.from).to.equal(again.to);
    });
  });
}
