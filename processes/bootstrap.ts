/**
 * First-start and every-start setup of the data: the `default` workspace, the BOOTSTRAP_API_KEY
 * (registered as an admin key of `default` when it is not yet registered) and, on the very first
 * start, the demo workflow. Idempotent: every start runs it, and concurrent starts are harmless.
 */
import type { Logger } from '../platform/logger';
import { createApiKey, keyHashExists } from '../platform/store/api-keys';
import type { Database } from '../platform/store/db';
import { createWorkflow } from '../platform/store/workflows';
import { DEFAULT_WORKSPACE_ID, ensureWorkspace } from '../platform/store/workspaces';
import { CUSTOMER_ONBOARDING } from './demo-definition';

export interface BootstrapOptions {
  bootstrapApiKey: string | undefined;
  seedDemo: boolean;
}

export async function bootstrap(db: Database, options: BootstrapOptions, logger: Logger): Promise<void> {
  const firstStart = await ensureWorkspace(db, DEFAULT_WORKSPACE_ID, 'Default workspace');
  if (firstStart) logger.info({ workspace: DEFAULT_WORKSPACE_ID }, 'Created the default workspace');

  if (options.bootstrapApiKey && !(await keyHashExists(db, options.bootstrapApiKey))) {
    try {
      await createApiKey(db, {
        workspaceId: DEFAULT_WORKSPACE_ID,
        name: 'bootstrap',
        scopes: ['admin'],
        key: options.bootstrapApiKey,
      });
      logger.info({ workspace: DEFAULT_WORKSPACE_ID }, 'Registered BOOTSTRAP_API_KEY as an admin key');
    } catch (error) {
      // Another process registered it at the same moment.
      if ((error as { code?: string }).code !== '23505') throw error;
    }
  }

  if (
    firstStart &&
    options.seedDemo &&
    (await createWorkflow(db, DEFAULT_WORKSPACE_ID, CUSTOMER_ONBOARDING, null, async () => undefined))
  ) {
    logger.info({ workflow: CUSTOMER_ONBOARDING.id }, 'Seeded the demo workflow');
  }
}
