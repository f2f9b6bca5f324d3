/** Response schemas shared by several endpoints (documented in the OpenAPI document). */
import { z } from 'zod';
import { EVENT_KINDS, type EventPayload } from '../../core/event-types';
import { ERROR_CODES, limitExceeded } from '../../platform/errors';
import {
  EXECUTION_STATUSES,
  RUN_STATUSES,
  RUNS_SHOWN,
  STALLED_REASONS,
  STEP_STATUSES,
} from '../executions/views';
import { LIMIT_UNITS, type CountedLimit } from '../../core/workspace-limits';
import type { ErrorExample } from './route';

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
        z.object({
          path: z.string().meta({ description: 'JSON pointer' }),
          message: z.string(),
          limit: z.string().optional().meta({
            description:
              'On a 409 limit_exceeded: the workspace limit reached (`workflows`, `secrets`, ...).',
          }),
          max: z.number().int().optional().meta({ description: 'On a 409 limit_exceeded: its maximum.' }),
          build_id: z.string().optional().meta({
            description: 'On a 503 worker_unavailable: the worker build the request needs.',
          }),
        }),
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

/** Example values the document's examples share, so that they tell one consistent story. */
export const EXAMPLE_EXECUTION_ID = 'ex_7kQ2mX9vLp4RtY8wZc3NbF6d';
export const EXAMPLE_NEXT_CURSOR = 'eyJwIjoid2YtMDEyMyIsInEiOiJ4WWs5LTF6S2RfQmMifQ';
export const EXAMPLE_INPUT = { customer: 'Ada Lovelace', plan: 'enterprise' };

export const acceptedSchema = z
  .object({ status: z.literal('accepted'), execution_id: z.string().meta({ example: EXAMPLE_EXECUTION_ID }) })
  .meta({ id: 'Accepted' });

export const acceptedExample = { status: 'accepted', execution_id: EXAMPLE_EXECUTION_ID };

/** A page of one item, with the cursor of the next page. */
export const pageExample = (item: unknown) => ({ data: [item], next_cursor: EXAMPLE_NEXT_CURSOR });

const errorViewSchema = z
  .object({
    step: z.string().nullable(),
    path: z.array(z.string()).optional().meta({
      description:
        'Where the failed step is: the containers around it, each followed by its run key (a branch id, an item index, a case id, an iteration), then the step id; `[step]` for a top-level step. Absent when no step failed.',
    }),
    code: z.string(),
    message: z.string(),
    details: z.array(z.unknown()).optional().meta({
      description: "child_failed: the child execution's error ({execution_id, step, path, code, message}).",
    }),
  })
  .meta({ id: 'ExecutionError' });

export const executionSummarySchema = z
  .object({
    execution_id: z.string(),
    workflow: z.string(),
    workflow_version: z.number().int(),
    status: z.enum(EXECUTION_STATUSES),
    trigger: z.object({
      type: z.enum(['api', 'webhook', 'schedule', 'event', 'workflow']).meta({
        description:
          '`workflow`: a child execution, started by a workflow step of its parent; `event`: started by an event (its trigger step names it).',
      }),
    }),
    parent: z.object({ execution_id: z.string(), step: z.string() }).nullable().meta({
      description: 'A child execution: the execution and the workflow step that started it; null otherwise.',
    }),
    started_at: timestamp,
    finished_at: timestamp.nullable(),
    duration_ms: z.number().int().meta({ description: 'Counts to now while the execution runs.' }),
    error: errorViewSchema.nullable(),
  })
  .meta({ id: 'ExecutionSummary' });

const waitingForSchema = z
  .object({
    type: z.enum(['timer', 'event']).meta({
      description:
        '`timer`: a sleep step, sleeping until `until`; `event`: a wait_for_event step, waiting for an event named `event` until `until` (its timeout).',
    }),
    event: z.string().optional().meta({ description: 'type `event`: the name of the event it waits for.' }),
    until: timestamp.meta({
      description: 'When the wait ends (RFC 3339, UTC): the wake time, or the timeout.',
    }),
  })
  .meta({
    id: 'WaitingFor',
    description: 'What a waiting step other than an approval waits for; present only while it waits.',
  });

export const stepViewSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    kind: z.enum([
      'trigger',
      'rules',
      'connector',
      'ai',
      'approval',
      'sleep',
      'wait_for_event',
      'parallel',
      'map',
      'switch',
      'loop',
      'workflow',
    ]),
    status: z.enum(STEP_STATUSES),
    started_at: timestamp.nullable(),
    finished_at: timestamp.nullable(),
    duration_ms: z.number().int().nullable(),
    attempts: z.number().int(),
    input: z.unknown().meta({ description: "The step's resolved configuration (secrets masked)." }),
    output: z.unknown(),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    event: z.object({ id: z.string(), name: z.string() }).optional().meta({
      description:
        'The trigger step of an execution an event trigger started: the event (GET /v1/events/{id} reads it).',
    }),
    coalesced: z.number().int().optional().meta({
      description:
        "The trigger step of a debounced execution, once its wait ended: how many triggers it took in (it ran with the last one's input; docs/flow-control.md#debounce).",
    }),
    next_attempt_at: timestamp.optional().meta({ description: 'When a failed attempt will be tried again.' }),
    waiting_for: waitingForSchema.optional(),
    runs_total: z.number().int().optional().meta({
      description:
        'A container step (parallel, map, switch, loop): how many runs it has (a map: one per item).',
    }),
    get runs(): z.ZodOptional<z.ZodArray<typeof stepRunSchema>> {
      return z
        .array(stepRunSchema)
        .optional()
        .meta({
          description: `A container step: its first ${RUNS_SHOWN} runs in order; GET /v1/executions/{id}/steps/{step_id}/runs pages through all of them.`,
        });
    },
  })
  .meta({ id: 'Step' });

export const stepRunSchema = z
  .object({
    key: z.string().meta({
      description:
        'The branch id, the item index ("3"), the case id ("default" for the default steps), or the iteration ("0").',
    }),
    path: z.array(z.string()).meta({
      description:
        'The containers around the run, each followed by its run key, ending with this container and `key`.',
    }),
    status: z.enum(RUN_STATUSES).meta({
      description:
        '`pending`: a map item not started yet (`concurrency` run at once); `canceled` once its map ended without starting it.',
    }),
    started_at: timestamp.nullable(),
    finished_at: timestamp.nullable(),
    get steps(): z.ZodArray<typeof stepViewSchema> {
      return z.array(stepViewSchema).meta({
        description:
          "The run's steps that have started or were skipped, in order (none before the run starts).",
      });
    },
  })
  .meta({ id: 'StepRun' });

export const stalledSchema = z
  .object({
    reason: z.enum(STALLED_REASONS).meta({
      description:
        '`nondeterminism`: the build cannot replay the run (it was moved to code it was not written for); ' +
        '`workflow_code_error`: the workflow code throws; `workflow_task_timed_out`: the worker does not ' +
        'answer in time; `workflow_task_failed`: Temporal refused the task (the message names the cause). ' +
        'New reasons may be added.',
    }),
    message: z.string().meta({
      description: "The workflow task failure's message only (no stack trace), at most 500 characters.",
      example: '[TMPRL1100] Nondeterminism error: Missing associated machine for LocalActivity(1)',
    }),
    attempts: z
      .number()
      .int()
      .meta({ description: 'The attempt of the workflow task now pending (2 or more).', example: 7 }),
    build_id: z.string().nullable().meta({
      description: "The worker build the run's workflow tasks go to; null for runs of unversioned workers.",
      example: '4f2a9c1e7b3d',
    }),
    since: timestamp.meta({ description: 'When the first failure of the streak happened (RFC 3339, UTC).' }),
  })
  .meta({
    id: 'Stalled',
    description:
      "The execution is stuck: its workflow task keeps failing and Temporal retries it, so no step moves while its status stays running or waiting. Nothing of the API resumes it: an operator does (docs/operations.md, 'Runs stuck on a build').",
  });

export const executionSchema = executionSummarySchema
  .extend({
    rerun_of: z.string().nullable().meta({
      description:
        'A rerun started by a bulk operation (`action: rerun`): the execution whose input it ran again; null otherwise. Not in lists.',
    }),
    queued_at: timestamp.nullable().meta({
      description:
        'Flow control (`concurrency`, `throttle`): when the execution was queued, waiting for its place or its start; null for an execution that never queued. Not in lists.',
    }),
    admitted_at: timestamp.nullable().meta({
      description:
        'When flow control admitted a queued execution (its first step could start then); null while it is queued, when it ended queued (canceled), or when it never queued. Not in lists.',
    }),
    queued_ms: z.number().int().min(0).nullable().meta({
      description:
        'How long the execution was queued: from `queued_at` to `admitted_at` (to its end, or to now, while it has none); null for an execution that never queued. Not in lists.',
      example: 1240,
    }),
    stalled: stalledSchema.nullable().meta({
      description:
        'Set while the workflow task of an open execution keeps failing (see Stalled); null otherwise. Not in lists.',
    }),
    output: z.unknown().meta({
      description:
        "When the execution succeeded: the definition's `output`, or the output of the last step that ran; null otherwise.",
    }),
    steps: z.array(stepViewSchema),
  })
  .meta({ id: 'Execution' });

const approvalStepExample = {
  id: 'review',
  name: 'review',
  kind: 'approval',
  status: 'success',
  started_at: '2026-11-21T09:30:01.412Z',
  finished_at: '2026-11-21T10:02:44.108Z',
  duration_ms: 1962696,
  attempts: 1,
  input: { message: 'Approve the enterprise plan for Ada Lovelace?', timeout: '72h' },
  output: {
    decision: 'approved',
    decided_by: 'key_3vN8pQ2rT6yW1zX4cB7m',
    comment: 'Contract signed.',
    decided_at: '2026-11-21T10:02:44.108Z',
  },
  error: null,
};
export { approvalStepExample as stepExample };

/** One item of a map step (docs/api.md#steps-that-hold-steps). */
export const stepRunExample = {
  key: '3',
  path: ['notify_all', '3'],
  status: 'success',
  started_at: '2026-11-21T09:30:02.118Z',
  finished_at: '2026-11-21T09:30:02.391Z',
  steps: [
    {
      id: 'send',
      name: 'send',
      kind: 'connector',
      status: 'success',
      started_at: '2026-11-21T09:30:02.118Z',
      finished_at: '2026-11-21T09:30:02.391Z',
      duration_ms: 273,
      attempts: 1,
      input: { method: 'POST', url: 'https://mail.example/send', body: { to: 'grace@example.com', n: 3 } },
      output: { status: 202, headers: { 'content-type': 'application/json' }, body: { queued: true } },
      error: null,
    },
  ],
};

export const executionSummaryExample = {
  execution_id: EXAMPLE_EXECUTION_ID,
  workflow: 'customer-onboarding',
  workflow_version: 3,
  status: 'success',
  trigger: { type: 'api' },
  parent: null,
  started_at: '2026-11-21T09:30:00.118Z',
  finished_at: '2026-11-21T10:02:44.530Z',
  duration_ms: 1964412,
  error: null,
};

export const executionExample = {
  ...executionSummaryExample,
  rerun_of: null,
  queued_at: null,
  admitted_at: null,
  queued_ms: null,
  stalled: null,
  output: {
    decision: 'approved',
    decided_by: 'key_3vN8pQ2rT6yW1zX4cB7m',
    comment: 'Contract signed.',
    decided_at: '2026-11-21T10:02:44.108Z',
  },
  steps: [
    {
      id: 'trigger',
      name: 'trigger',
      kind: 'trigger',
      status: 'success',
      started_at: '2026-11-21T09:30:00.118Z',
      finished_at: '2026-11-21T09:30:00.118Z',
      duration_ms: 0,
      attempts: 1,
      input: EXAMPLE_INPUT,
      output: EXAMPLE_INPUT,
      error: null,
    },
    {
      id: 'route',
      name: 'route',
      kind: 'rules',
      status: 'success',
      started_at: '2026-11-21T09:30:00.204Z',
      finished_at: '2026-11-21T09:30:00.219Z',
      duration_ms: 15,
      attempts: 1,
      input: null,
      output: { tier: 'high' },
      error: null,
    },
    {
      id: 'crm',
      name: 'crm',
      kind: 'connector',
      status: 'success',
      started_at: '2026-11-21T09:30:00.251Z',
      finished_at: '2026-11-21T09:30:01.377Z',
      duration_ms: 1126,
      attempts: 2,
      input: {
        method: 'POST',
        url: 'https://crm.example/api/customers',
        headers: { Authorization: 'Bearer ***' },
        body: { name: 'Ada Lovelace', tier: 'high' },
      },
      output: { status: 201, headers: { 'content-type': 'application/json' }, body: { id: 'cus_1042' } },
      error: null,
    },
    approvalStepExample,
  ],
};

/**
 * The body of every outbound event (docs/webhooks.md#events-and-payload), as receivers get it. Typed against
 * EventPayload, so that the document and what the delivery workflows send cannot drift apart.
 */
export const eventPayloadSchema: z.ZodType<EventPayload> = z
  .object({
    id: z.string().meta({ description: 'The event id: also the webhook-id header of every attempt.' }),
    event: z.enum(EVENT_KINDS),
    created_at: timestamp,
    execution_id: z.string(),
    workflow: z.string().meta({ description: 'The workflow id.' }),
    workflow_version: z.number().int(),
    status: z
      .enum(EXECUTION_STATUSES)
      .meta({ description: 'The execution status when the event was emitted.' }),
    error: errorViewSchema.nullable(),
    output: z.unknown().optional().meta({ description: "execution.completed only: the execution's output." }),
  })
  .meta({ id: 'EventPayload' });

const EVENT_STATUS: Record<(typeof EVENT_KINDS)[number], (typeof EXECUTION_STATUSES)[number]> = {
  'execution.started': 'running',
  'execution.waiting': 'waiting',
  'execution.completed': 'success',
  'execution.failed': 'failed',
  'execution.canceled': 'canceled',
};

export function eventPayloadExample(event: (typeof EVENT_KINDS)[number]): EventPayload {
  return {
    id: 'evt_5b0c2f6e9d8a4c71b3e2a94f07d6c158',
    event,
    created_at: '2026-11-21T10:02:44.530Z',
    execution_id: EXAMPLE_EXECUTION_ID,
    workflow: 'customer-onboarding',
    workflow_version: 3,
    status: EVENT_STATUS[event],
    error:
      event === 'execution.failed'
        ? {
            step: 'crm',
            path: ['crm'],
            code: 'http_error',
            message: 'POST https://crm.example/api/customers answered 422.',
          }
        : null,
    ...(event === 'execution.completed' && {
      output: { decision: 'approved', decided_by: 'key_3vN8pQ2rT6yW1zX4cB7m' },
    }),
  };
}

/** The example of a 409 limit_exceeded, for an endpoint that creates what `limit` counts (at its default). */
export function limitExceededExample(limit: CountedLimit, max: number): ErrorExample {
  const error = limitExceeded(limit, max, LIMIT_UNITS[limit]);
  return { code: error.code, message: error.message, details: error.details };
}
