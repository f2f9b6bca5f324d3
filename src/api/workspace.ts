/**
 * The caller's workspace (docs/api.md#workspace): its limits and what it uses of them. Operators change the
 * limits with `npm run admin -- set-limits` (docs/operations.md#workspace-limits).
 */
import { z } from 'zod';
import { notFound } from '../../platform/errors';
import { effectiveLimits } from '../../platform/store/workspace-limits';
import { getWorkspace } from '../../platform/store/workspaces';
import { workspaceUsage } from '../workspaces/usage';
import { defineRoute, type AnyRoute } from './route';

const maximum = (description: string) =>
  z
    .number()
    .int()
    .min(0)
    .nullable()
    .meta({ description: `${description} null: unlimited.` });
const count = (description: string) => z.number().int().min(0).meta({ description });

const workspaceSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    limits: z
      .object({
        workflows: maximum('Workflows the workspace keeps at most.'),
        secrets: maximum('Secrets at most.'),
        webhook_endpoints: maximum('Webhook endpoints at most.'),
        api_keys: maximum('Active (not revoked) API keys at most.'),
        open_executions: maximum(
          'Executions running or waiting at once; past it, new executions are queued (nothing is refused) and start as open ones end. Child executions take no place.',
        ),
        steps_per_definition: maximum(
          'The most steps one definition may hold; more is 400 invalid_definition.',
        ),
        ai_tokens_per_day: maximum(
          "AI tokens the workspace's ai steps may use per UTC day; at it, ai steps fail with ai_budget_exceeded.",
        ),
      })
      .meta({
        description: 'Creating one more object than a count allows is 409 limit_exceeded, naming the limit.',
      }),
    usage: z.object({
      workflows: count('Workflows now.'),
      secrets: count('Secrets now.'),
      webhook_endpoints: count('Webhook endpoints now.'),
      api_keys: count('Active API keys now.'),
      open_executions: count(
        'Executions running or waiting now, not queued: under a limit, the places it holds (exact); without one, from Temporal visibility (eventually consistent).',
      ),
      ai_tokens_today: count('AI tokens used since 00:00 UTC.'),
    }),
  })
  .meta({ id: 'Workspace' });

const workspaceExample = {
  id: 'acme',
  name: 'Acme Corp',
  limits: {
    workflows: 1000,
    secrets: 500,
    webhook_endpoints: 50,
    api_keys: 100,
    open_executions: 1000,
    steps_per_definition: 200,
    ai_tokens_per_day: null,
  },
  usage: {
    workflows: 12,
    secrets: 4,
    webhook_endpoints: 2,
    api_keys: 3,
    open_executions: 7,
    ai_tokens_today: 18_240,
  },
};

export function workspaceRoutes(): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/workspace',
      operationId: 'getWorkspace',
      summary: "The caller's workspace: its limits and what it uses of them",
      description:
        'Limits come from the service defaults unless an operator changed them for this workspace ' +
        '(npm run admin -- set-limits). null is unlimited.',
      tag: 'Workspace',
      auth: 'read',
      responses: {
        200: { description: 'The workspace', schema: workspaceSchema, example: workspaceExample },
      },
      errors: [],
      handler: async ({ services, auth }) => {
        const workspace = await getWorkspace(services.db, auth.workspaceId);
        // A key outlives nothing: deleting a workspace deletes its keys. Only a race with that gets here.
        if (!workspace) throw notFound('not_found', `No workspace '${auth.workspaceId}'.`);
        const [limits, usage] = await Promise.all([
          effectiveLimits(services.db, auth.workspaceId, services.config.workspaceLimits),
          workspaceUsage(services, auth.workspaceId),
        ]);
        return { status: 200, body: { id: workspace.id, name: workspace.name, limits, usage } };
      },
    }),
  ];
}
