/** Executions (docs/api.md#executions): lists from Temporal visibility, one execution from its history. */
import { z } from 'zod';
import { workflowIdSchema } from '../../core/definitions/schema';
import { listExecutions } from '../executions/list';
import { readExecution } from '../executions/read';
import { EXECUTION_STATUSES, RUN_STATUSES } from '../executions/views';
import { listStepRuns } from '../executions/runs';
import { cancelExecution } from '../executions/cancel';
import { decideApproval } from '../executions/decide';
import { retryExecution } from '../executions/retry';
import { cursorParam, defineRoute, limitParam, paginated, type AnyRoute } from './route';
import { LIST_CURSOR, RETRY_INPUT } from './semantic-errors';
import {
  acceptedExample,
  acceptedSchema,
  EXAMPLE_INPUT,
  executionExample,
  executionSchema,
  executionSummaryExample,
  executionSummarySchema,
  pageExample,
  stepExample,
  stepRunExample,
  stepRunSchema,
  stepViewSchema,
} from './schemas';

const idParams = z.object({ id: z.string() });

/** The filters of the execution list, which a bulk operation's filter takes too (src/api/bulk-operations.ts). */
export const EXECUTION_FILTERS = {
  workflow: workflowIdSchema.optional().meta({ description: 'Only executions of this workflow.' }),
  status: z.enum(EXECUTION_STATUSES).optional(),
  error_code: z
    .string()
    .regex(/^[a-z][a-z0-9_]{0,63}$/, 'must be an error code such as step_failed')
    .optional()
    .meta({
      description:
        'Only failed executions whose error has this code (`connector_http_error`, `event_timed_out`, …).',
      example: 'step_failed',
    }),
  started_after: z.iso.datetime({ offset: true }).optional().meta({
    description: 'Only executions started at or after this time (RFC 3339).',
    example: '2026-11-20T00:00:00Z',
  }),
  started_before: z.iso.datetime({ offset: true }).optional().meta({
    description: 'Only executions started before this time (RFC 3339).',
    example: '2026-11-21T00:00:00Z',
  }),
};

const stepParams = z.object({ id: z.string(), step_id: z.string() });
const decisionBody = z
  .strictObject({
    comment: z.string().max(2000).optional().meta({ description: 'Kept in the step output.' }),
    run: z.string().max(500).optional().meta({
      description:
        'A step waiting inside a container: which run, by the run keys of its containers joined by "/" ("3", "crm/0"). May be left out when one run of the step waits.',
    }),
  })
  .meta({ example: { comment: 'Contract signed.' } });

function decisionRoute(decision: 'approve' | 'reject'): AnyRoute {
  return defineRoute({
    method: 'post',
    path: `/v1/executions/{id}/steps/{step_id}/${decision}`,
    operationId: `${decision}Step`,
    summary:
      decision === 'approve'
        ? 'Approve a waiting approval step'
        : 'Reject a waiting approval step (the execution fails)',
    description: 'The deciding API key id and the comment land in the step output.',
    tag: 'Executions',
    auth: 'write',
    params: stepParams,
    body: decisionBody,
    responses: {
      200: {
        description: 'The decided step',
        schema: stepViewSchema,
        example:
          decision === 'approve'
            ? stepExample
            : {
                ...stepExample,
                status: 'failed',
                output: { ...stepExample.output, decision: 'rejected', comment: 'No signed contract yet.' },
                error: {
                  code: 'approval_rejected',
                  message: 'Step "review" was rejected by key_3vN8pQ2rT6yW1zX4cB7m: No signed contract yet.',
                },
              },
      },
    },
    errors: [404, 409],
    needsWorker: true,
    handler: async ({ services, auth, params, body }) => ({
      status: 200,
      body: await decideApproval(services, {
        workspaceId: auth.workspaceId,
        executionId: params.id,
        stepId: params.step_id,
        ...(body?.run !== undefined && { run: body.run }),
        decision,
        comment: body?.comment ?? null,
        keyId: auth.keyId,
      }),
    }),
  });
}

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
        ...EXECUTION_FILTERS,
        limit: limitParam,
        cursor: cursorParam,
      }),
      responses: {
        200: {
          description: 'A page of executions',
          schema: paginated(executionSummarySchema, 'ExecutionList'),
          example: pageExample(executionSummaryExample),
        },
      },
      errors: [400],
      semanticErrors: [LIST_CURSOR],
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
        'Steps in order: the trigger step first, then every definition step that has started or was skipped. ' +
        '`stalled` is set while the workflow task of the open execution keeps failing (stuck on a worker build).',
      tag: 'Executions',
      auth: 'read',
      params: idParams,
      responses: {
        200: { description: 'The execution', schema: executionSchema, example: executionExample },
      },
      errors: [404],
      handler: async ({ services, auth, params }) => ({
        status: 200,
        body: await readExecution(services, auth.workspaceId, params.id),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/executions/{id}/steps/{step_id}/runs',
      operationId: 'listStepRuns',
      summary: 'List the runs of a container step',
      description:
        'Every run of a parallel, map, switch or loop step, in order (branches as defined, items by index, ' +
        'iterations by number); the execution shows the first 20 of them. A container inside another ' +
        "container's runs has runs in each of them: all are listed, each with its `path`. " +
        'An unknown step, or a step that holds no steps, is 404 `step_not_found`.',
      tag: 'Executions',
      auth: 'read',
      params: stepParams,
      query: z.strictObject({
        status: z.enum(RUN_STATUSES).optional().meta({ description: 'Only runs with this status.' }),
        limit: limitParam,
        cursor: cursorParam,
      }),
      responses: {
        200: {
          description: 'A page of runs',
          schema: paginated(stepRunSchema, 'StepRunList'),
          example: pageExample(stepRunExample),
        },
      },
      errors: [400, 404],
      semanticErrors: [LIST_CURSOR],
      handler: async ({ services, auth, params, query }) => ({
        status: 200,
        body: await listStepRuns(
          services,
          { workspaceId: auth.workspaceId, executionId: params.id, stepId: params.step_id },
          query,
        ),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/executions/{id}/retry',
      operationId: 'retryExecution',
      summary: 'Retry a failed execution from its failed step',
      description:
        'Same execution_id; steps that succeeded before the failed one are not run again and keep their outputs and timings. ' +
        'An optional `input` corrects the input for the failed step and every later one, checked against the input_schema of ' +
        "the execution's version (404 `workflow_not_found` once that version is deleted). Concurrent retries start one. " +
        "The new run carries the earlier steps' records in its input: past 2 MB of them (a run that failed with " +
        '`history_too_large`, say), the retry answers 413 `payload_too_large`.',
      tag: 'Executions',
      auth: 'write',
      params: idParams,
      body: z
        .strictObject({ input: z.record(z.string(), z.unknown()).optional() })
        .meta({ example: { input: { ...EXAMPLE_INPUT, customer: 'Ada King' } } }),
      responses: {
        202: {
          description: 'Accepted: the execution runs again from the failed step',
          schema: acceptedSchema.extend({ retried_from_step: z.string() }).meta({ id: 'RetryAccepted' }),
          example: { ...acceptedExample, retried_from_step: 'crm' },
        },
      },
      errors: [404, 409, 413],
      semanticErrors: [RETRY_INPUT],
      needsWorker: true,
      handler: async ({ services, auth, params, body }) => {
        const { retriedFromStep } = await retryExecution(services, {
          workspaceId: auth.workspaceId,
          executionId: params.id,
          keyId: auth.keyId,
          ...(body?.input !== undefined ? { input: body.input } : {}),
        });
        return {
          status: 202,
          body: { status: 'accepted', execution_id: params.id, retried_from_step: retriedFromStep },
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/executions/{id}/cancel',
      operationId: 'cancelExecution',
      summary: 'Cancel a queued, running or waiting execution',
      description:
        'The running step is canceled (a queued execution never starts); the execution ends with status canceled.',
      tag: 'Executions',
      auth: 'write',
      params: idParams,
      responses: {
        202: {
          description: 'Accepted: the execution is being canceled',
          schema: acceptedSchema,
          example: acceptedExample,
        },
      },
      errors: [404, 409],
      needsWorker: true,
      handler: async ({ services, auth, params }) => {
        await cancelExecution(services, auth.workspaceId, params.id);
        return { status: 202, body: { status: 'accepted', execution_id: params.id } };
      },
    }),
    decisionRoute('approve'),
    decisionRoute('reject'),
  ];
}
