/**
 * Workspace secrets (docs/api.md#secrets): write-only values, encrypted at rest, usable as {{ secrets.NAME
 * }}.
 */
import { z } from 'zod';
import { notFound } from '../../platform/errors';
import { deleteSecret, listSecrets, putSecret, SECRET_NAME_PATTERN } from '../../platform/store/secrets';
import { createWithinLimit } from '../../platform/store/workspace-limits';
import { countLimit } from '../workspaces/limits';
import { isString } from '../http/cursor';
import { defineListRoute } from './list-route';
import { defineRoute, type AnyRoute } from './route';
import { NUL_TEXT } from './semantic-errors';
import { timestamp, limitExceededExample } from './schemas';

const nameParams = z.object({ name: z.string() });
const secretSchema = z
  .object({ name: z.string(), created_at: timestamp, updated_at: timestamp })
  .meta({ id: 'Secret' });

const secretNotFound = (name: string) => notFound('not_found', `No secret '${name}' in this workspace.`);

export function secretRoutes(): AnyRoute[] {
  return [
    defineRoute({
      method: 'put',
      path: '/v1/secrets/{name}',
      operationId: 'putSecret',
      summary: 'Create or replace a secret',
      description:
        'Names: letters, digits and "_", not starting with a digit. The value is never returned by the API. ' +
        "A new name past the workspace's `secrets` limit is 409 limit_exceeded (GET /v1/workspace); replacing " +
        'the value of an existing secret is always allowed.',
      tag: 'Secrets',
      auth: 'write',
      params: nameParams,
      body: z
        .strictObject({
          value: z.string().min(3, 'must be at least 3 characters').max(65_536),
        })
        .meta({ example: { value: 'crm_live_9f3b7c1e5a2d4068' } }),
      bodyRequired: true,
      responses: { 204: { description: 'Stored' } },
      // An invalid name answers 404 not_found (like an unknown one), as the handler says.
      errors: [404, 409],
      semanticErrors: [NUL_TEXT],
      errorExamples: { 409: limitExceededExample('secrets', 500) },
      handler: async ({ services, auth, params, body }) => {
        if (!SECRET_NAME_PATTERN.test(params.name)) {
          throw notFound(
            'not_found',
            `'${params.name}' is not a valid secret name (letters, digits and "_", not starting with a digit).`,
          );
        }
        // Replacing a secret is always allowed; only a new name counts against the workspace's limit.
        await createWithinLimit(
          services.db,
          await countLimit(services, auth.workspaceId, 'secrets'),
          (tx) => putSecret(tx, services.cipher, auth.workspaceId, params.name, body.value),
          (outcome) => outcome === 'created',
        );
        return { status: 204 };
      },
    }),
    defineListRoute({
      path: '/v1/secrets',
      operationId: 'listSecrets',
      summary: 'List secret names (never values)',
      tag: 'Secrets',
      auth: 'read',
      page: {
        description: 'A page of secrets, by name',
        item: secretSchema,
        id: 'SecretList',
        example: {
          name: 'CRM_TOKEN',
          created_at: '2026-11-02T14:04:02.310Z',
          updated_at: '2026-11-18T11:27:45.884Z',
        },
      },
      scope: ({ auth }) => ['secrets', auth.workspaceId],
      isPosition: isString,
      fetch: ({ services, auth }, page) => listSecrets(services.db, auth.workspaceId, page),
      positionOf: (row) => row.name,
      toView: (row) => ({
        name: row.name,
        created_at: row.created_at.toISOString(),
        updated_at: row.updated_at.toISOString(),
      }),
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/secrets/{name}',
      operationId: 'deleteSecret',
      summary: 'Delete a secret',
      tag: 'Secrets',
      auth: 'write',
      params: nameParams,
      responses: { 204: { description: 'Deleted' } },
      errors: [404],
      handler: async ({ services, auth, params }) => {
        if (!(await deleteSecret(services.db, auth.workspaceId, params.name)))
          throw secretNotFound(params.name);
        return { status: 204 };
      },
    }),
  ];
}
