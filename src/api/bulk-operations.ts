/**
 * Bulk operations (docs/operations.md#bulk-operations): cancel, retry or rerun the executions a filter
 * matches. Creating one chooses its executions (src/bulk/select.ts) and stores them with it; the bulk runner
 * of an API process acts on them (src/bulk/runner.ts). A dry run only counts them.
 */
import { z } from 'zod';
import { limitExceeded, notFound } from '../../platform/errors';
import { newBulkOperationId, EXECUTION_ID_PATTERN } from '../../platform/ids';
import {
  createOperation,
  ERRORS_SHOWN,
  finishOperation,
  getOperation,
  listOperations,
  MAX_RUNNING_OPERATIONS,
  runningOperations,
  type BulkOperationRecord,
} from '../../platform/store/bulk-operations';
import { matchingExecutions, MAX_BULK_EXECUTIONS, MAX_FILTER_IDS, type BulkFilter } from '../bulk/select';
import { EXECUTION_FILTERS } from './executions';
import { defineListRoute } from './list-route';
import { defineRoute, type AnyRoute } from './route';
import { EXAMPLE_EXECUTION_ID, timestamp } from './schemas';

const idParams = z.object({ id: z.string() });
/** Executions a dry run names as a sample. */
const SAMPLE_SIZE = 10;

const filterSchema = z
  .strictObject({
    ...EXECUTION_FILTERS,
    execution_ids: z
      .array(z.string().regex(EXECUTION_ID_PATTERN, 'must be an execution id'))
      .min(1)
      .max(MAX_FILTER_IDS)
      .optional()
      .meta({ description: `Only these executions (at most ${MAX_FILTER_IDS}).` }),
  })
  .refine((filter) => Object.values(filter).some((value) => value !== undefined), {
    message:
      'needs at least one of workflow, status, error_code, started_after, started_before, execution_ids',
  })
  .meta({
    id: 'BulkFilter',
    description:
      'Which executions: those that match every field given (at least one). The fields of GET /v1/executions, and a list of ids.',
    // JSON Schema cannot see the refinement above: say it, so that tools generate what is accepted.
    override: ({ jsonSchema }: { jsonSchema: Record<string, unknown> }) => {
      jsonSchema['minProperties'] = 1;
    },
  });

const common = {
  filter: filterSchema,
  dry_run: z.boolean().optional().meta({ description: 'true: count the matches (200) and change nothing.' }),
};

/** One shape per action, each with its own options: a cancel takes none, a retry `input`, a rerun `version`. */
const createSchema = z
  .discriminatedUnion('action', [
    z
      .strictObject({
        action: z
          .literal('cancel')
          .meta({ description: 'Open (queued, running or waiting) executions are canceled.' }),
        ...common,
      })
      .meta({ id: 'BulkCancel' }),
    z
      .strictObject({
        action: z
          .literal('retry')
          .meta({ description: 'Failed executions run again from their failed step.' }),
        ...common,
        input: z.record(z.string(), z.unknown()).optional().meta({
          description: 'A corrected input for the failed step and every later one, as a retry takes.',
        }),
      })
      .meta({ id: 'BulkRetry' }),
    z
      .strictObject({
        action: z.literal('rerun').meta({
          description: 'A new execution with the same input, whose read names `rerun_of`.',
        }),
        ...common,
        version: z.enum(['same', 'latest']).optional().meta({
          description: "The version each execution ran (same, default) or the workflow's latest.",
        }),
      })
      .meta({ id: 'BulkRerun' }),
  ])
  .meta({
    id: 'BulkOperationRequest',
    description: 'Executions that do not qualify for the action (not open, not failed) are skipped.',
    example: { action: 'retry', filter: { workflow: 'customer-onboarding', status: 'failed' } },
  });

const operationSchema = z
  .object({
    id: z.string(),
    action: z.enum(['cancel', 'retry', 'rerun']),
    filter: z.record(z.string(), z.unknown()),
    status: z.enum(['running', 'completed', 'canceled']),
    matched: z.number().int().meta({ description: 'Executions the filter matched when it was created.' }),
    succeeded: z
      .number()
      .int()
      .meta({ description: 'Executions it acted on: cancel asked, retry or rerun started.' }),
    failed: z.number().int().meta({ description: 'Executions whose action failed (see errors).' }),
    skipped: z
      .number()
      .int()
      .meta({ description: 'Executions that did not qualify (not open, not failed).' }),
    errors: z
      .array(z.object({ execution_id: z.string(), code: z.string(), message: z.string() }))
      .meta({ description: `The first ${ERRORS_SHOWN} failures.` }),
    created_at: timestamp,
    finished_at: timestamp.nullable(),
  })
  .meta({ id: 'BulkOperation' });

const operationExample = {
  id: 'op_4fT9kQ2mX7vLp8RtY3wZc6Nb',
  action: 'retry',
  filter: { workflow: 'customer-onboarding', status: 'failed' },
  status: 'completed',
  matched: 3,
  succeeded: 2,
  failed: 0,
  skipped: 1,
  errors: [],
  created_at: '2026-11-21T10:02:44.560Z',
  finished_at: '2026-11-21T10:02:45.012Z',
};

function toView(record: BulkOperationRecord) {
  return {
    id: record.id,
    action: record.action,
    filter: record.filter,
    status: record.status,
    matched: record.matched,
    succeeded: record.succeeded,
    failed: record.failed,
    skipped: record.skipped,
    errors: record.errors,
    created_at: new Date(record.created_at).toISOString(),
    finished_at: record.finished_at ? new Date(record.finished_at).toISOString() : null,
  };
}

const notFoundError = (id: string) =>
  notFound('bulk_operation_not_found', `No bulk operation '${id}' in this workspace.`);
const isSeq = (value: unknown): value is string => typeof value === 'string' && /^\d{1,19}$/.test(value);

/** What the routes of one operation answer: the operation, or 404 bulk_operation_not_found. */
const ONE_OPERATION = {
  responses: {
    200: { description: 'The operation', schema: operationSchema, example: operationExample },
  },
  errors: [404],
  errorExamples: {
    404: {
      code: 'bulk_operation_not_found' as const,
      message: `No bulk operation '${operationExample.id}' in this workspace.`,
    },
  },
};

export function bulkOperationRoutes(): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/bulk-operations',
      operationId: 'createBulkOperation',
      summary: 'Cancel, retry or rerun the executions a filter matches',
      description:
        `Chooses the executions now (at most ${MAX_BULK_EXECUTIONS}; a filter that matches more is a 400, to be narrowed) ` +
        'and acts on them in the background at a bounded rate, each at most once, across restarts. ' +
        '`dry_run: true` answers 200 with the count and a sample, and changes nothing. ' +
        `A workspace runs at most ${MAX_RUNNING_OPERATIONS} operations at once; one more is a 409 limit_exceeded.`,
      tag: 'Bulk operations',
      auth: 'write',
      body: createSchema,
      bodyRequired: true,
      responses: {
        200: {
          description: 'A dry run: what the filter matches now',
          schema: z
            .object({
              matched: z.number().int(),
              sample: z.array(z.string()).meta({ description: `Up to ${SAMPLE_SIZE} of the execution ids.` }),
            })
            .meta({ id: 'BulkOperationDryRun' }),
          example: { matched: 3, sample: [EXAMPLE_EXECUTION_ID] },
        },
        202: {
          description: 'Accepted: the operation runs',
          schema: z
            .object({ id: z.string(), status: z.literal('running'), matched: z.number().int() })
            .meta({ id: 'BulkOperationAccepted' }),
          example: { id: operationExample.id, status: 'running', matched: 3 },
        },
      },
      errors: [409],
      handler: async ({ services, auth, body }) => {
        const filter: BulkFilter = body.filter;
        if (
          !body.dry_run &&
          (await runningOperations(services.db, auth.workspaceId)) >= MAX_RUNNING_OPERATIONS
        )
          throw limitExceeded('bulk_operations_running', MAX_RUNNING_OPERATIONS, 'running bulk operations');
        const ids = await matchingExecutions(services, auth.workspaceId, filter);
        if (body.dry_run)
          return { status: 200, body: { matched: ids.length, sample: ids.slice(0, SAMPLE_SIZE) } };
        const id = newBulkOperationId();
        const options = {
          ...(body.action === 'retry' && body.input !== undefined && { input: body.input }),
          ...(body.action === 'rerun' && body.version !== undefined && { version: body.version }),
        };
        await createOperation(services.db, auth.workspaceId, {
          id,
          action: body.action,
          filter: filter as Record<string, unknown>,
          options,
          createdBy: auth.keyId,
          executionIds: ids,
        });
        services.bulkRunner?.kick();
        return { status: 202, body: { id, status: 'running' as const, matched: ids.length } };
      },
    }),
    defineListRoute({
      path: '/v1/bulk-operations',
      operationId: 'listBulkOperations',
      summary: 'List bulk operations, newest first',
      tag: 'Bulk operations',
      auth: 'read',
      page: {
        description: 'A page of bulk operations, newest first',
        item: operationSchema,
        id: 'BulkOperationList',
        example: operationExample,
      },
      scope: ({ auth }) => ['bulk-operations', auth.workspaceId],
      isPosition: isSeq,
      fetch: ({ services, auth }, page) => listOperations(services.db, auth.workspaceId, page),
      positionOf: (row) => row.seq,
      toView,
    }),
    defineRoute({
      method: 'get',
      path: '/v1/bulk-operations/{id}',
      operationId: 'getBulkOperation',
      summary: 'Read a bulk operation: its progress and errors',
      tag: 'Bulk operations',
      auth: 'read',
      params: idParams,
      ...ONE_OPERATION,
      handler: async ({ services, auth, params }) => {
        const record = await getOperation(services.db, auth.workspaceId, params.id);
        if (!record) throw notFoundError(params.id);
        return { status: 200, body: toView(record) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/bulk-operations/{id}/cancel',
      operationId: 'cancelBulkOperation',
      summary: 'Stop a running bulk operation',
      description:
        'The executions it has not acted on yet are left alone; what it did stays done. A finished operation is answered as it is.',
      tag: 'Bulk operations',
      auth: 'write',
      params: idParams,
      ...ONE_OPERATION,
      handler: async ({ services, auth, params }) => {
        if (!(await getOperation(services.db, auth.workspaceId, params.id))) throw notFoundError(params.id);
        await finishOperation(services.db, auth.workspaceId, params.id, 'canceled');
        const record = await getOperation(services.db, auth.workspaceId, params.id);
        return { status: 200, body: toView(record!) };
      },
    }),
  ];
}
