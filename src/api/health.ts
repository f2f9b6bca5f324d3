/**
 * Liveness, readiness and the OpenAPI document (docs/api.md#health-and-the-openapi-document): no
 * authentication.
 */
import { z } from 'zod';
import { AppError } from '../../platform/errors';
import { callTemporal } from '../../platform/temporal/errors';
import { defineRoute, type AnyRoute } from './route';

const READY_TIMEOUT_MS = 2000;

export function healthRoutes(openApiDocument: () => Record<string, unknown>): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/healthz',
      operationId: 'healthz',
      summary: 'The process is alive',
      tag: 'Health',
      auth: 'none',
      responses: {
        200: {
          description: 'Alive',
          schema: z.object({ status: z.literal('ok') }),
          example: { status: 'ok' },
        },
      },
      errors: [],
      handler: async () => ({ status: 200, body: { status: 'ok' } }),
    }),
    defineRoute({
      method: 'get',
      path: '/readyz',
      operationId: 'readyz',
      summary: 'The database and Temporal are reachable',
      tag: 'Health',
      auth: 'none',
      responses: {
        200: {
          description: 'Ready',
          schema: z.object({
            status: z.literal('ready'),
            checks: z.object({ database: z.literal('ok'), temporal: z.literal('ok') }),
          }),
          example: { status: 'ready', checks: { database: 'ok', temporal: 'ok' } },
        },
      },
      errors: [503],
      handler: async ({ services }) => {
        const timeout = new Promise<never>((_, reject) =>
          setTimeout(
            () => reject(new AppError(503, 'database_unavailable', 'The database did not answer in time.')),
            READY_TIMEOUT_MS,
          ).unref(),
        );
        try {
          await Promise.race([services.db.ping(), timeout]);
        } catch (error) {
          throw error instanceof AppError
            ? error
            : new AppError(503, 'database_unavailable', 'The database is unavailable.', { cause: error });
        }
        const { connection } = services.temporal;
        await callTemporal(connection, () => connection.workflowService.getSystemInfo({}), READY_TIMEOUT_MS);
        return { status: 200, body: { status: 'ready', checks: { database: 'ok', temporal: 'ok' } } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/openapi.json',
      operationId: 'getOpenApiDocument',
      summary: 'This OpenAPI 3.1 document',
      tag: 'Health',
      auth: 'none',
      responses: {
        200: {
          description: 'The document',
          schema: z.record(z.string(), z.unknown()),
          example: {
            openapi: '3.1.0',
            info: { title: 'Switchyard API', version: '0.1.0' },
            paths: { '/healthz': { get: { operationId: 'healthz', summary: 'The process is alive' } } },
          },
        },
      },
      errors: [],
      handler: async () => ({ status: 200, body: openApiDocument() }),
    }),
  ];
}
