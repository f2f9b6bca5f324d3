/**
 * Activities of the worker, built from their dependencies (createActivities(deps)), so tests and
 * processes wire the same code to different databases and settings. Keys are Temporal activity types.
 */
import type { Client } from '@temporalio/client';
import type { Database } from '../../src/store/db';
import type { SecretCipher } from '../../src/secrets/cipher';
import { readSecretValues } from '../../src/store/secrets';
import { createAiActivity, type AiProviderConfig } from './ai';
import { approval } from './approval';
import { createEventActivities } from './events';
import { createHttpConnector } from './http-connector';
import { limitOutput } from './output-limit';
import { rules } from './rules';
import { createSecretResolver } from './secrets';

export interface ActivityDeps {
  db: Database;
  cipher: SecretCipher;
  allowPrivateDestinations: boolean;
  /** Cap on a connector (or AI provider) response body. */
  maxResponseBytes?: number;
  ai: AiProviderConfig;
  /** Starts delivery workflows and waits on executions (events). */
  client: Client;
  /** Webhook retry delays in ms after the first attempt. */
  webhookRetryScheduleMs: number[];
}

export const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;

export function createActivities(deps: ActivityDeps) {
  const resolveSecrets = createSecretResolver((workspaceId, names) =>
    readSecretValues(deps.db, deps.cipher, workspaceId, names),
  );
  const maxResponseBytes = deps.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  return {
    // Step activities: their outputs must fit in a Temporal payload (see output-limit.ts).
    rules: limitOutput(rules),
    connector_http: limitOutput(
      createHttpConnector({
        policy: { allowPrivate: deps.allowPrivateDestinations },
        maxResponseBytes,
        resolveSecrets,
      }),
    ),
    ai: limitOutput(createAiActivity({ provider: deps.ai, resolveSecrets, maxResponseBytes })),
    approval,
    ...createEventActivities({
      db: deps.db,
      cipher: deps.cipher,
      client: deps.client,
      policy: { allowPrivate: deps.allowPrivateDestinations },
      retryScheduleMs: deps.webhookRetryScheduleMs,
    }),
  };
}

export type Activities = ReturnType<typeof createActivities>;
