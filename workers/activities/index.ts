/**
 * Activities of the worker, built from their dependencies (createActivities(deps)), so tests and
 * processes wire the same code to different databases and settings. Keys are Temporal activity types.
 */
import type { Database } from '../../src/store/db';
import type { SecretCipher } from '../../src/secrets/cipher';
import { readSecretValues } from '../../src/store/secrets';
import { createHttpConnector } from './http-connector';
import { rules } from './rules';
import { createSecretResolver } from './secrets';

export interface ActivityDeps {
  db: Database;
  cipher: SecretCipher;
  allowPrivateDestinations: boolean;
  /** Cap on a connector response body. */
  maxResponseBytes?: number;
}

export const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;

export function createActivities(deps: ActivityDeps) {
  const resolveSecrets = createSecretResolver((workspaceId, names) =>
    readSecretValues(deps.db, deps.cipher, workspaceId, names),
  );
  return {
    rules,
    connector_http: createHttpConnector({
      policy: { allowPrivate: deps.allowPrivateDestinations },
      maxResponseBytes: deps.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
      resolveSecrets,
    }),
  };
}

export type Activities = ReturnType<typeof createActivities>;
