/** Response schemas shared by several endpoints (documented in the OpenAPI document). */
import { z } from 'zod';
import { ERROR_CODES } from '../errors';
import { EXECUTION_STATUSES, STEP_STATUSES } from '../executions/views';

export const errorBodySchema = z
  .object({
    error: z.object({
      code: z.enum(ERROR_CODES).meta({
        description:
          'Machine-readable code; new codes may be added, so treat unknown ones like their HTTP status.',
        example: 'workflow_not_found',
      }),
      message: z.string().meta({ description: 'For people; may change, never parse it.' }),
      request_id: z
        .string()
        .meta({ description: 'The X-Request-Id of the response.', example: 'req_8Jq2mZ0cXv4LwT1aBn7R' }),
      details: z.array(
        z.object({ path: z.string().meta({ description: 'JSON pointer' }), message: z.string() }),
      ),
    }),
  })
  .meta({ id: 'Error' });

export const timestamp = z.string().meta({ format: 'date-time', description: 'RFC 3339, UTC' });

/** From a 202 that names an execution to what can be done with it. */
export const EXECUTION_LINKS = {
  getExecution: { operationId: 'getExecution', parameters: { id: '$response.body#/execution_id' } },
  cancelExecution: { operationId: 'cancelExecution', parameters: { id: '$response.body#/execution_id' } },
  retryExecution: { operationId: 'retryExecution', parameters: { id: '$response.body#/execution_id' } },
};

export const acceptedSchema = z
  .object({ status: z.literal('accepted'), execution_id: z.string().meta({ example: 'ex_4fQ8...' }) })
  .meta({ id: 'Accepted' });

const errorViewSchema = z
  .object({ step: z.string().nullable(), code: z.string(), message: z.string() })
  .meta({ id: 'ExecutionError' });

export const executionSummarySchema = z
  .object({
    execution_id: z.string(),
    workflow: z.string(),
    workflow_version: z.number().int(),
    status: z.enum(EXECUTION_STATUSES),
    trigger: z.object({ type: z.enum(['api', 'webhook', 'schedule']) }),
    started_at: timestamp,
    finished_at: timestamp.nullable(),
    duration_ms: z.number().int().meta({ description: 'Counts to now while the execution runs.' }),
    error: errorViewSchema.nullable(),
  })
  .meta({ id: 'ExecutionSummary' });

export const stepViewSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    kind: z.enum(['trigger', 'rules', 'connector', 'ai', 'approval']),
    status: z.enum(STEP_STATUSES),
    started_at: timestamp.nullable(),
    finished_at: timestamp.nullable(),
    duration_ms: z.number().int().nullable(),
    attempts: z.number().int(),
    input: z.unknown().meta({ description: "The step's resolved configuration (secrets masked)." }),
    output: z.unknown(),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    next_attempt_at: timestamp.optional().meta({ description: 'When a failed attempt will be tried again.' }),
  })
  .meta({ id: 'Step' });

export const executionSchema = executionSummarySchema
  .extend({ steps: z.array(stepViewSchema) })
  .meta({ id: 'Execution' });
