/** API keys of the caller's workspace (docs/api.md#api-keys): admin scope; the key itself is shown once. */
import { z } from 'zod';
import { notFound } from '../../platform/errors';
import {
  createApiKey,
  listApiKeys,
  revokeApiKey,
  SCOPES,
  type ApiKeyRecord,
} from '../../platform/store/api-keys';
import { createWithinLimit } from '../../platform/store/workspace-limits';
import { countLimit } from '../workspaces/limits';
import { isString } from '../http/cursor';
import { defineListRoute } from './list-route';
import { defineRoute, type AnyRoute } from './route';
import { NUL_TEXT } from './semantic-errors';
import { timestamp, limitExceededExample } from './schemas';

const apiKeyExample = {
  id: 'key_3vN8pQ2rT6yW1zX4cB7m',
  name: 'ci-deploys',
  scopes: ['write'],
  prefix: 'sk_Tq84Zw',
  created_at: '2026-11-02T14:03:10.551Z',
  last_used_at: '2026-11-21T09:30:00.101Z',
  revoked_at: null,
};

const apiKeySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    scopes: z.array(z.enum(SCOPES)),
    prefix: z.string().meta({ description: 'The first characters of the key, to tell keys apart.' }),
    created_at: timestamp,
    last_used_at: timestamp.nullable(),
    revoked_at: timestamp.nullable(),
  })
  .meta({ id: 'ApiKey' });

const createdApiKeySchema = apiKeySchema
  .extend({ key: z.string().meta({ description: 'The key: shown only in this response.' }) })
  .meta({ id: 'CreatedApiKey' });

/**
 * A character that String.prototype.trim keeps (anything but ECMAScript white space and line terminators,
 * spelt out so that every regex engine reads the class alike): a name must hold one.
 */
const NOT_BLANK = /[^\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]/;

const createBody = z
  .strictObject({
    // At most 200 characters as sent; stored without leading and trailing white space, never blank.
    name: z.string().max(200).trim().min(1, 'must not be blank').meta({
      pattern: NOT_BLANK.source,
      description: 'Not blank; stored without leading and trailing white space.',
    }),
    scopes: z
      .array(z.enum(SCOPES))
      .min(1)
      .max(3)
      .meta({ description: 'read: every GET; write: read + changes; admin: write + API keys.' }),
  })
  .meta({ example: { name: 'ci-deploys', scopes: ['write'] } });

export function toApiKeyView(record: ApiKeyRecord) {
  return {
    id: record.id,
    name: record.name,
    scopes: record.scopes,
    prefix: record.prefix,
    created_at: record.created_at.toISOString(),
    last_used_at: record.last_used_at?.toISOString() ?? null,
    revoked_at: record.revoked_at?.toISOString() ?? null,
  };
}

export function apiKeyRoutes(): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/api-keys',
      operationId: 'createApiKey',
      summary: 'Create an API key (shown once)',
      description:
        "A key past the workspace's `api_keys` limit (active keys: revoked ones do not count) is 409 " +
        'limit_exceeded (GET /v1/workspace).',
      tag: 'API keys',
      auth: 'admin',
      body: createBody,
      bodyRequired: true,
      responses: {
        201: {
          description: 'Created; `key` is shown only here',
          schema: createdApiKeySchema,
          example: {
            ...apiKeyExample,
            created_at: '2026-11-21T09:12:44.020Z',
            last_used_at: null,
            key: 'sk_Tq84ZwR1mC7vK2pN9xB4dF6hJ3sL8gY5aE0uW2iO',
          },
          links: { revokeApiKey: { operationId: 'revokeApiKey', parameters: { id: '$response.body#/id' } } },
        },
      },
      errors: [409],
      semanticErrors: [NUL_TEXT],
      errorExamples: { 409: limitExceededExample('api_keys', 100) },
      handler: async ({ services, auth, body }) => {
        const { record, key } = await createWithinLimit(
          services.db,
          await countLimit(services, auth.workspaceId, 'api_keys'),
          (tx) =>
            createApiKey(tx, {
              workspaceId: auth.workspaceId,
              name: body.name,
              scopes: [...new Set(body.scopes)],
            }),
        );
        return { status: 201, body: { ...toApiKeyView(record), key } };
      },
    }),
    defineListRoute({
      path: '/v1/api-keys',
      operationId: 'listApiKeys',
      summary: "List the workspace's API keys (never the keys themselves)",
      tag: 'API keys',
      auth: 'admin',
      page: { description: 'A page of keys', item: apiKeySchema, id: 'ApiKeyList', example: apiKeyExample },
      scope: ({ auth }) => ['api-keys', auth.workspaceId],
      isPosition: isString,
      fetch: ({ services, auth }, page) => listApiKeys(services.db, auth.workspaceId, page),
      positionOf: (row) => row.id,
      toView: toApiKeyView,
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/api-keys/{id}',
      operationId: 'revokeApiKey',
      summary: 'Revoke an API key (it answers 401 at once)',
      tag: 'API keys',
      auth: 'admin',
      params: z.object({ id: z.string() }),
      responses: { 204: { description: 'Revoked' } },
      errors: [404],
      handler: async ({ services, auth, params }) => {
        if (!(await revokeApiKey(services.db, auth.workspaceId, params.id))) {
          throw notFound('api_key_not_found', `No API key '${params.id}' in this workspace.`);
        }
        return { status: 204 };
      },
    }),
  ];
}
