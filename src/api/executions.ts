/** Executions (CONTRACT §5): lists from Temporal visibility, one execution from its history. */
import { z } from 'zod';
import { workflowIdSchema } from '../definitions/schema';
import { listExecutions } from '../executions/list';
import { readExecution } from '../executions/read';
import { EXECUTION_STATUSES } from '../executions/views';
import { cursorParam, defineRoute, limitParam, paginated, type AnyRoute } from './route';
import { executionSchema, executionSummarySchema } from './schemas';

const idParams = z.object({ id: z.string() });

export function executionRoutes(): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/executions',
      operationId: 'listExecutions',
      summary: 'List executions',
      description:
        'Open executions first, then the most recently finished. Eventually consistent: a run appears within about a second of its start.',
      tag: 'Executions',
      auth: 'read',
      query: z.strictObject({
        workflow: workflowIdSchema.optional().meta({ description: 'Only executions of this workflow.' }),
        status: z.enum(EXECUTION_STATUSES).optional(),
        limit: limitParam,
        cursor: cursorParam,
      }),
      responses: {
        200: {
          description: 'A page of executions',
          schema: paginated(executionSummarySchema, 'ExecutionList'),
        },
      },
      errors: [400],
      handler: async ({ services, auth, query }) => ({
        status: 200,
        body: await listExecutions(services, auth.workspaceId, query),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/executions/{id}',
      operationId: 'getExecution',
      summary: 'Read an execution with its steps',
      description:
        'Steps in order: the trigger step first, then every definition step that has started or was skipped.',
      tag: 'Executions',
      auth: 'read',
      params: idParams,
      responses: { 200: { description: 'The execution', schema: executionSchema } },
      errors: [404],
      handler: async ({ services, auth, params }) => ({
        status: 200,
        body: await readExecution(services, auth.workspaceId, params.id),
      }),
    }),
  ];
}
