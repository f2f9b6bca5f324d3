/**
 * The workflow definition schema (docs/definitions.md). The same zod schema validates definitions on save,
 * documents them in the OpenAPI document, and gives the worker its TypeScript types (type-only imports).
 * Objects are strict: a misspelt key is an error, not silently ignored.
 */
import { z } from 'zod';
import { durationAtMostPattern } from './durations';
import { EVENT_NAME_PATTERN, EVENT_NAME_RULE } from '../events';
import { MAX_DEBOUNCE_MS, MAX_THROTTLE_LIMIT, MAX_THROTTLE_PERIOD_MS } from '../flow-control';

export const WORKFLOW_ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;
export const STEP_ID_PATTERN = /^[a-z][a-z0-9_]{0,62}$/;
/** "500ms", "30s", "15m", "72h", "7d". */
export const DURATION_PATTERN = /^[1-9][0-9]{0,8}(ms|s|m|h|d)$/;

export const workflowIdSchema = z
  .string()
  .regex(
    WORKFLOW_ID_PATTERN,
    'must be a slug: lowercase letters, digits and "-", starting with a letter or digit, at most 63 characters',
  );

const stepIdSchema = z
  .string()
  .regex(
    STEP_ID_PATTERN,
    'must start with a lowercase letter and contain only lowercase letters, digits and "_" (at most 63 characters)',
  )
  // Refused on save (src/definitions/validate.ts): the trigger step of every execution has that id.
  .meta({ not: { const: 'trigger' }, description: 'Unique in the definition; "trigger" is reserved.' });

const durationSchema = z
  .string()
  .regex(DURATION_PATTERN, 'must be a duration such as "500ms", "30s", "15m", "72h" or "7d"');

/** Longest a step's attempt may take, and the longest retry interval: 24 h. */
export const MAX_STEP_TIMEOUT_MS = 24 * 3_600_000;
/** Longest an approval may wait for its decision: 365 days. */
export const MAX_WAIT_TIMEOUT_MS = 365 * 86_400_000;

/** A duration of at most `maxMs`: the bound is in the pattern, so the OpenAPI document states it too. */
function durationAtMost(maxMs: number, most: string) {
  return z
    .string()
    .regex(
      durationAtMostPattern(maxMs),
      `must be a duration of at most ${most}, such as "500ms", "30s", "15m" or "1h"`,
    );
}

const stepTimeoutSchema = durationAtMost(MAX_STEP_TIMEOUT_MS, '24h');

/**
 * A schedule's cron: 5 fields (minute hour day-of-month month day-of-week), optionally a 6th (year), or 7
 * with a fixed second first, or a descriptor. Nothing that fires more than once a minute: `@every`
 * (use `every`) and a seconds field other than one number are not cron here.
 */
export const SCHEDULE_CRON_PATTERN =
  /^\s*(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|[^\s@]\S*(\s+\S+){4,5}|[0-5]?[0-9](\s+\S+){6})\s*$/;

/** A schedule's interval: a duration of at least one minute (60s, 60000ms). */
export const SCHEDULE_EVERY_PATTERN =
  /^([1-9][0-9]{0,8}(m|h|d)|([6-9][0-9]|[1-9][0-9]{2,8})s|([6-9][0-9]{4}|[1-9][0-9]{5,8})ms)$/;

/** What a schedule does with a run that is due while its previous run is still open (`overlap`). */
export const SCHEDULE_OVERLAP_POLICIES = [
  'skip',
  'buffer_one',
  'buffer_all',
  'cancel_other',
  'allow_all',
] as const;
export type ScheduleOverlap = (typeof SCHEDULE_OVERLAP_POLICIES)[number];

/**
 * Checked on save beyond its type: the text must parse as JSONata (a syntax error is 400
 * invalid_definition naming the field), which no JSON Schema can say; hence the description.
 */
const expressionSchema = z.string().min(1, 'must be a JSONata expression').max(10_000).meta({
  description:
    'A JSONata expression over {input, steps, execution}. Validated on save beyond this schema: text that is not valid JSONata syntax is refused with 400 invalid_definition.',
});

const retrySchema = z
  .strictObject({
    max_attempts: z
      .number()
      .int()
      .min(1)
      .max(100)
      .optional()
      .meta({ description: 'Attempts in all, the first included.' }),
    initial_interval: stepTimeoutSchema.optional(),
    backoff: z
      .number()
      .min(1)
      .max(10)
      .optional()
      .meta({ description: 'Multiplier applied to the interval after each attempt.' }),
    max_interval: stepTimeoutSchema.optional(),
  })
  .meta({ id: 'StepRetry', description: 'Retry policy of the step activity.' });

const stepCommon = {
  id: stepIdSchema,
  name: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .meta({ description: 'Shown in the API and in Temporal UI; defaults to the id.' }),
  description: z.string().max(2000).optional(),
  if: expressionSchema.optional().meta({
    description:
      'JSONata; the step runs only when it is truthy, otherwise it is skipped. Checked on save: invalid JSONata syntax is 400 invalid_definition.',
  }),
  retry: retrySchema.optional(),
  timeout: stepTimeoutSchema.optional().meta({ description: 'Time limit of one attempt: at most 24h.' }),
};

const ruleSchema = z.strictObject({
  when: expressionSchema,
  output: z
    .unknown()
    .optional()
    .meta({ description: 'The step output when this rule matches; strings may hold {{ }} templates.' }),
  action: z.enum(['continue', 'fail', 'stop']).optional().meta({
    description:
      '`continue` (default) goes on; `fail` fails the execution with `message`; `stop` ends it with success.',
  }),
  message: z.string().max(2000).optional(),
});

export const rulesStepSchema = z
  .strictObject({
    ...stepCommon,
    kind: z.literal('rules'),
    rules: z.array(ruleSchema).max(200).meta({
      description:
        'Tried in order; the first whose `when` is truthy gives the output. May be empty only when `default` is given (a constant step).',
    }),
    default: z.unknown().optional().meta({ description: 'The output when no rule matches.' }),
  })
  // A rules step with nothing to choose from still needs something to output.
  .refine((step) => step.rules.length > 0 || step.default !== undefined, {
    path: ['rules'],
    message: 'must hold at least one rule unless a default is given',
  })
  .meta({
    id: 'RulesStep',
    // JSON Schema cannot see the refinement above: say it, so that tools generate what is accepted.
    override: ({ jsonSchema }: { jsonSchema: Record<string, unknown> }) => {
      jsonSchema['anyOf'] = [{ properties: { rules: { minItems: 1 } } }, { required: ['default'] }];
    },
  });

const httpMethodSchema = z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);

export const connectorStepSchema = z
  .strictObject({
    ...stepCommon,
    kind: z.literal('connector'),
    connector: z.literal('http'),
    request: z.strictObject({
      method: httpMethodSchema.optional().meta({ description: 'Defaults to GET.' }),
      url: z.string().min(1).max(8192),
      headers: z.record(z.string(), z.string()).optional(),
      query: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
      body: z.unknown().optional(),
      follow_redirects: z.boolean().optional().meta({ description: 'Follow redirects (default false).' }),
    }),
  })
  .meta({ id: 'ConnectorStep' });

export const aiStepSchema = z
  .strictObject({
    ...stepCommon,
    kind: z.literal('ai'),
    prompt: z.string().min(1).max(100_000),
    system: z.string().max(100_000).optional(),
    model: z.string().min(1).max(200).optional(),
    temperature: z.number().min(0).max(2).optional(),
    max_tokens: z.number().int().min(1).max(1_000_000).optional(),
    output_schema: z.record(z.string(), z.unknown()).optional().meta({
      description: 'A JSON Schema; the model is asked for JSON and its answer is validated against it.',
    }),
  })
  .meta({ id: 'AiStep' });

export const approvalStepSchema = z
  .strictObject({
    ...stepCommon,
    kind: z.literal('approval'),
    message: z.string().max(2000).optional().meta({ description: 'What the approver is asked.' }),
    timeout: durationAtMost(MAX_WAIT_TIMEOUT_MS, '365d').optional().meta({
      description: 'How long the approval waits for a decision: at most 365d. Without one, it waits.',
    }),
  })
  .meta({ id: 'ApprovalStep' });

/**
 * A sleep's `until`: one template giving the time (`"{{ input.send_at }}"`) or a time written out. Either
 * way it must be an RFC 3339 time when the step runs; one written out is checked on save too.
 */
const sleepUntilSchema = z.string().min(1).max(2000).meta({
  description:
    'An RFC 3339 time ("2026-12-01T09:00:00Z"), usually a template giving one ("{{ input.send_at }}"). A time in the past continues at once; one more than 365 days ahead, or a value that is not a time, fails the step (sleep_too_long, invalid_time).',
});

export const sleepStepSchema = z
  .strictObject({
    id: stepCommon.id,
    name: stepCommon.name,
    description: stepCommon.description,
    if: stepCommon.if,
    kind: z.literal('sleep'),
    duration: durationAtMost(MAX_WAIT_TIMEOUT_MS, '365d').optional().meta({
      description: 'How long to sleep, from when the step starts: at most 365d.',
    }),
    until: sleepUntilSchema.optional(),
  })
  // Exactly one of the two says when to wake.
  .refine((step) => (step.duration === undefined) !== (step.until === undefined), {
    message: 'needs exactly one of "duration" or "until"',
  })
  .meta({
    id: 'SleepStep',
    // JSON Schema cannot see the refinement above: say it, so that tools generate what is accepted.
    override: ({ jsonSchema }: { jsonSchema: Record<string, unknown> }) => {
      jsonSchema['oneOf'] = [{ required: ['duration'] }, { required: ['until'] }];
    },
  });

/** How long a wait_for_event waits when its definition says nothing (docs/events.md#waiting-for-an-event). */
export const DEFAULT_EVENT_WAIT_TIMEOUT = '30d';

export const waitForEventStepSchema = z
  .strictObject({
    id: stepCommon.id,
    name: stepCommon.name,
    description: stepCommon.description,
    if: stepCommon.if,
    kind: z.literal('wait_for_event'),
    event: z.string().regex(EVENT_NAME_PATTERN, EVENT_NAME_RULE).meta({
      description: 'The name of the event to wait for (`payment.succeeded`).',
    }),
    match: expressionSchema.optional().meta({
      description:
        "JSONata over the step's context plus `event` ({id, name, data, received_at}): the first event of the name received after the step began waiting for which it holds wakes the step. Omitted: any event of the name. An equality such as `event.data.order_id = input.order_id` is looked up by index.",
    }),
    timeout: durationAtMost(MAX_WAIT_TIMEOUT_MS, '365d').optional().meta({
      description: 'How long to wait: at most 365d (default 30d).',
    }),
    on_timeout: z.enum(['fail', 'continue']).optional().meta({
      description:
        'fail (default): the execution fails with event_timed_out; continue: the step succeeds with output null.',
    }),
  })
  .meta({ id: 'WaitForEventStep' });

/** Steps one definition holds at most, nested ones included, whatever its workspace's steps_per_definition. */
export const MAX_DEFINITION_STEPS = 500;
/** Containers nest up to this many levels: top-level steps are level 1 (docs/definitions.md#composition). */
export const MAX_NESTING = 5;
/** Items a map runs at most (MAP_MAX_ITEMS may lower it). */
export const MAX_MAP_ITEMS = 10_000;
/** Iterations a loop may ask for at most. */
export const MAX_LOOP_ITERATIONS = 10_000;
/** Branches of one parallel step, cases of one switch. */
export const MAX_BRANCHES = 50;
/** Names a map's `as` may not take: the context's own roots and the names containers add. */
export const RESERVED_CONTEXT_NAMES = [
  'input',
  'steps',
  'execution',
  'secrets',
  'index',
  'iteration',
] as const;

const containerCommon = {
  id: stepIdSchema,
  name: stepCommon.name,
  description: stepCommon.description,
  if: stepCommon.if,
};

/**
 * A list of steps inside a container. A getter refers to it, so the schemas can nest (zod evaluates it
 * lazily); depth and ids across the whole definition are checked on save (src/definitions/validate.ts).
 */
const branchSchema = z
  .strictObject({
    id: stepIdSchema.meta({
      description: 'Unique among the branches of the step; the run key of the branch.',
    }),
    get steps(): z.ZodType<Step[]> {
      return stepListSchema;
    },
    on_error: z.enum(['fail', 'continue']).optional().meta({
      description:
        '`fail` (default): a failing branch fails the step and cancels the others; `continue`: its entry in the output is null.',
    }),
  })
  .meta({ id: 'ParallelBranch' });

export const parallelStepSchema = z
  .strictObject({
    ...containerCommon,
    kind: z.literal('parallel'),
    branches: z.array(branchSchema).min(1).max(MAX_BRANCHES).meta({
      description: 'Every branch runs at once. Output: {<branch id>: <output of its last step that ran>}.',
    }),
  })
  .meta({ id: 'ParallelStep' });

/** `tolerated_failures`: a count of items, or a percentage of them ("5%"). */
export const TOLERATED_PERCENT_PATTERN = /^(100|[1-9]?[0-9](\.[0-9]{1,2})?)%$/;

export const mapStepSchema = z
  .strictObject({
    ...containerCommon,
    kind: z.literal('map'),
    items: expressionSchema.meta({
      description:
        'An expression giving the array to map over ("input.contacts"), or one template ("{{ input.contacts }}"). Not an array: the step fails with invalid_items.',
    }),
    as: stepIdSchema.optional().meta({
      description: 'The name of the current item in the context (default "item"); `index` is its position.',
      // Refused on save (src/definitions/validate.ts): the context has these names already.
      not: { enum: [...RESERVED_CONTEXT_NAMES] },
    }),
    concurrency: z
      .number()
      .int()
      .min(1)
      .max(100)
      .optional()
      .meta({ description: 'How many items run at the same time; default 10.' }),
    tolerated_failures: z
      .union([z.number().int().min(0).max(MAX_MAP_ITEMS), z.string().regex(TOLERATED_PERCENT_PATTERN)])
      .optional()
      .meta({
        description:
          'Failed items the step tolerates: a count, or a percentage of the items ("5%"); default 0. A tolerated failed item is null in the output.',
      }),
    get steps(): z.ZodType<Step[]> {
      return stepListSchema;
    },
  })
  .meta({ id: 'MapStep' });

const caseSchema = z
  .strictObject({
    id: stepIdSchema.meta({ description: 'Unique among the cases of the step; the run key of the case.' }),
    when: expressionSchema,
    get steps(): z.ZodType<Step[]> {
      return stepListSchema;
    },
  })
  .meta({ id: 'SwitchCase' });

export const switchStepSchema = z
  .strictObject({
    ...containerCommon,
    kind: z.literal('switch'),
    cases: z.array(caseSchema).min(1).max(MAX_BRANCHES).meta({
      description: 'The first case whose `when` holds runs its steps.',
    }),
    get default(): z.ZodOptional<z.ZodType<Step[]>> {
      return stepListSchema
        .optional()
        .meta({ description: 'The steps run when no case holds (none: nothing runs).' });
    },
  })
  .meta({ id: 'SwitchStep' });

export const loopStepSchema = z
  .strictObject({
    ...containerCommon,
    kind: z.literal('loop'),
    until: expressionSchema.meta({
      description: 'Evaluated after each iteration (its steps are in `steps`); the loop ends when it holds.',
    }),
    max_iterations: z.number().int().min(1).max(MAX_LOOP_ITERATIONS).meta({
      description: 'Reaching it fails the step with loop_limit_exceeded.',
    }),
    get steps(): z.ZodType<Step[]> {
      return stepListSchema;
    },
  })
  .meta({ id: 'LoopStep' });

export const workflowStepSchema = z
  .strictObject({
    ...containerCommon,
    kind: z.literal('workflow'),
    workflow: workflowIdSchema.meta({
      description: 'Another workflow of the workspace, started as a child execution.',
    }),
    version: z.number().int().min(1).optional().meta({ description: 'Default: its latest version.' }),
    input: z.record(z.string(), z.unknown()).optional().meta({
      description:
        "The child's input; strings may hold {{ }} templates. Validated against its input_schema when the step runs.",
    }),
    wait: z.boolean().optional().meta({
      description:
        'true (default): the step ends when the child ends; false: it succeeds at once with {execution_id}.',
    }),
  })
  .meta({ id: 'WorkflowStep' });

const STEP_KINDS =
  '"rules", "connector", "ai", "approval", "sleep", "wait_for_event", "parallel", "map", "switch", "loop", "workflow"';

export const stepSchema = z.discriminatedUnion(
  'kind',
  [
    rulesStepSchema,
    connectorStepSchema,
    aiStepSchema,
    approvalStepSchema,
    sleepStepSchema,
    waitForEventStepSchema,
    parallelStepSchema,
    mapStepSchema,
    switchStepSchema,
    loopStepSchema,
    workflowStepSchema,
  ],
  {
    error: (issue) => (issue.code === 'invalid_union' ? `kind must be one of ${STEP_KINDS}` : undefined),
  },
);

/** A container's steps: at least one (the definition's own list is bounded in definitionSchema). */
const stepListSchema: z.ZodType<Step[]> = z.array(stepSchema).min(1).max(500);

export const triggerSchema = z
  .discriminatedUnion(
    'type',
    [
      z.strictObject({ type: z.literal('api') }),
      z.strictObject({ type: z.literal('webhook') }),
      z
        .strictObject({
          type: z.literal('schedule'),
          cron: z
            .string()
            .min(1)
            .max(200)
            .regex(
              SCHEDULE_CRON_PATTERN,
              'must be a cron expression of 5 fields (minute hour day-of-month month day-of-week) or @hourly, @daily, @weekly, @monthly, @yearly; it may not fire more than once a minute (use "every" for intervals)',
            )
            .optional(),
          every: z
            .string()
            .regex(
              SCHEDULE_EVERY_PATTERN,
              'must be a duration of at least 1 minute, such as "1m", "15m" or "1h"',
            )
            .optional(),
          timezone: z.string().min(1).max(100).optional(),
          input: z.record(z.string(), z.unknown()).optional(),
          overlap: z
            .enum(SCHEDULE_OVERLAP_POLICIES)
            .optional()
            .meta({
              description:
                'What happens when a run is due while the previous one is still open: `skip` (default) skips it, ' +
                '`buffer_one` starts it when the open one ends (at most one waits), `buffer_all` starts every due ' +
                'run in turn, `cancel_other` cancels the open run and starts the new one, `allow_all` starts it at once.',
            }),
        })
        .meta({
          // Checked on save (a schedule needs exactly one of the two); stated here for tools.
          oneOf: [{ required: ['cron'] }, { required: ['every'] }],
        }),
      z.strictObject({
        type: z.literal('event'),
        event: z.string().regex(EVENT_NAME_PATTERN, EVENT_NAME_RULE).meta({
          description: 'The name of the events that start an execution (`user.signup`): exactly this name.',
        }),
        if: expressionSchema.optional().meta({
          description:
            'JSONata over the event, `{id, name, data}`: only events for which it holds start an execution (omitted: every event of that name). Checked on save: invalid JSONata syntax is 400 invalid_definition.',
        }),
      }),
    ],
    {
      error: (issue) =>
        issue.code === 'invalid_union'
          ? 'type must be one of "api", "webhook", "schedule", "event"'
          : undefined,
    },
  )
  .meta({ id: 'Trigger' });

/**
 * A flow control expression (docs/flow-control.md): JSONata over `{input}` only, evaluated when a run
 * starts. Checked on save beyond this schema (it must parse, and read no steps, secrets or execution).
 */
const inputExpressionSchema = z.string().min(1, 'must be a JSONata expression').max(10_000);

/** At most `limit` executions per key are open (running or waiting); the rest are queued. */
export const MAX_CONCURRENCY_LIMIT = 1000;

const concurrencySchema = z
  .strictObject({
    limit: z
      .number()
      .int()
      .min(1)
      .max(MAX_CONCURRENCY_LIMIT)
      .meta({ description: 'Executions of one key open (running or waiting) at most; the rest are queued.' }),
    key: inputExpressionSchema.optional().meta({
      description:
        'JSONata over {input} giving the key ("input.customer_id"); omitted: the whole workflow is one key. ' +
        'A string is the key as it is, a number or boolean its JSON text, anything else "null"; cut to 200 characters. ' +
        'Validated on save beyond this schema: it must parse and read only input (400 invalid_definition).',
    }),
  })
  .meta({ id: 'Concurrency' });

/** At most `limit` executions per key start in any window of `period`; the rest are queued. */
const throttleSchema = z
  .strictObject({
    limit: z
      .number()
      .int()
      .min(1)
      .max(MAX_THROTTLE_LIMIT)
      .meta({ description: 'Executions of one key that start in any window of `period`, at most.' }),
    period: durationAtMost(MAX_THROTTLE_PERIOD_MS, '24h').meta({
      description: 'The window, from "1s" to "24h" (longer or shorter: 400 invalid_definition).',
    }),
    key: inputExpressionSchema.optional().meta({
      description:
        'JSONata over {input} giving the key, as for `concurrency` (its own key: the two may differ); omitted: ' +
        'the whole workflow is one key.',
    }),
  })
  .meta({ id: 'Throttle' });

/**
 * Triggers of one key within `period` of each other make one execution, which starts with the last trigger's
 * input once `period` passes without a new one, or `max_wait` after its first.
 */
const debounceSchema = z
  .strictObject({
    period: durationAtMost(MAX_DEBOUNCE_MS, '7d').meta({
      description:
        'Quiet time after the last trigger before the execution starts, from "1s" to "7d" (400 invalid_definition otherwise).',
    }),
    key: inputExpressionSchema.optional().meta({
      description:
        'JSONata over {input} giving the key, as for `concurrency`; omitted: the whole workflow is one key. ' +
        'Evaluated when the trigger arrives: an evaluation error answers 400 invalid_input.',
    }),
    max_wait: durationAtMost(MAX_DEBOUNCE_MS, '7d')
      .optional()
      .meta({
        description:
          'Longest an execution waits after its first trigger, however often new ones come: from `period` to "7d". ' +
          'Omitted: it waits for `period` of quiet, however long that takes.',
      }),
  })
  .meta({ id: 'Debounce' });

/** The example definition of the OpenAPI document (the one docs/definitions.md shows). */
export const DEFINITION_EXAMPLE = {
  id: 'customer-onboarding',
  name: 'Customer onboarding',
  description: 'Routes a new customer, registers it in the CRM, welcomes it and asks for a review.',
  trigger: { type: 'api' },
  input_schema: {
    type: 'object',
    required: ['customer', 'plan'],
    properties: { customer: { type: 'string' }, plan: { type: 'string' } },
  },
  steps: [
    {
      id: 'route',
      kind: 'rules',
      rules: [
        { when: "input.plan = 'enterprise'", output: { tier: 'high' } },
        { when: "input.plan = 'banned'", action: 'fail', message: 'plan not allowed' },
      ],
      default: { tier: 'standard' },
    },
    {
      id: 'crm',
      kind: 'connector',
      connector: 'http',
      request: {
        method: 'POST',
        url: 'https://crm.example/api/customers',
        headers: { Authorization: 'Bearer {{ secrets.CRM_TOKEN }}' },
        body: { name: '{{ input.customer }}', tier: '{{ steps.route.output.tier }}' },
      },
      retry: { max_attempts: 5, initial_interval: '1s', backoff: 2, max_interval: '1m' },
      timeout: '30s',
    },
    { id: 'welcome', kind: 'ai', prompt: 'Write a one-line welcome for {{ input.customer }}.' },
    {
      id: 'review',
      kind: 'approval',
      if: "steps.route.output.tier = 'high'",
      message: 'Approve the enterprise plan for {{ input.customer }}?',
      timeout: '72h',
    },
  ],
};

export const definitionSchema = z
  .strictObject({
    id: workflowIdSchema,
    name: z.string().min(1).max(200).optional(),
    description: z.string().max(5000).optional(),
    trigger: triggerSchema.optional().meta({ description: 'Defaults to {"type": "api"}.' }),
    input_schema: z.record(z.string(), z.unknown()).optional().meta({
      description: 'JSON Schema (draft 2020-12) that trigger input must satisfy.',
    }),
    timeout: durationSchema.optional().meta({
      description:
        'Limit of a whole execution (retries included); past it the execution ends with status timed_out.',
    }),
    steps: z.array(stepSchema).min(1).max(MAX_DEFINITION_STEPS),
    output: z.unknown().optional().meta({
      description:
        "The execution's output when it succeeds; strings may hold {{ }} templates over the steps. Without it: the output of the last step that ran.",
    }),
    concurrency: concurrencySchema.optional().meta({
      description:
        'At most `limit` executions per key open at once; the others wait with the status queued (docs/flow-control.md).',
    }),
    throttle: throttleSchema.optional().meta({
      description:
        'At most `limit` executions per key start in any window of `period`; the others wait with the status ' +
        'queued (docs/flow-control.md#throttle).',
    }),
    debounce: debounceSchema.optional().meta({
      description:
        'Triggers of one key coalesce into one execution, queued until `period` passes without a new trigger (or ' +
        '`max_wait` after the first); it runs with the last input, and every coalesced trigger answers its ' +
        'execution_id (docs/flow-control.md#debounce).',
    }),
    priority: inputExpressionSchema.optional().meta({
      description:
        'JSONata over {input}: the order of queued executions, higher first (then arrival). A number, rounded and ' +
        'clamped to -100..100; anything else 0. Validated on save beyond this schema: it must parse and read only input.',
    }),
  })
  .meta({ id: 'WorkflowDefinition', example: DEFINITION_EXAMPLE });

export type Definition = z.infer<typeof definitionSchema>;
export type RulesStep = z.infer<typeof rulesStepSchema>;
export type ConnectorStep = z.infer<typeof connectorStepSchema>;
export type AiStep = z.infer<typeof aiStepSchema>;
export type ApprovalStep = z.infer<typeof approvalStepSchema>;
export type SleepStep = z.infer<typeof sleepStepSchema>;
export type WaitForEventStep = z.infer<typeof waitForEventStepSchema>;
/** Steps the `run_steps` local activity runs (or, for an approval or a sleep, begins). */
export type LeafStep = RulesStep | ConnectorStep | AiStep | ApprovalStep | SleepStep | WaitForEventStep;

/*
 * The container kinds' types are written out: their schemas refer to the step list through getters, and
 * TypeScript cannot infer a type that refers to itself. SCHEMA_TYPES_AGREE checks at compile time that
 * they are exactly what the schemas accept.
 */
interface ContainerCommon {
  id: string;
  name?: string | undefined;
  description?: string | undefined;
  if?: string | undefined;
}
export interface ParallelStep extends ContainerCommon {
  kind: 'parallel';
  branches: { id: string; steps: Step[]; on_error?: 'fail' | 'continue' | undefined }[];
}
export interface MapStep extends ContainerCommon {
  kind: 'map';
  items: string;
  as?: string | undefined;
  concurrency?: number | undefined;
  tolerated_failures?: number | string | undefined;
  steps: Step[];
}
export interface SwitchStep extends ContainerCommon {
  kind: 'switch';
  cases: { id: string; when: string; steps: Step[] }[];
  default?: Step[] | undefined;
}
export interface LoopStep extends ContainerCommon {
  kind: 'loop';
  until: string;
  max_iterations: number;
  steps: Step[];
}
export interface WorkflowStep extends ContainerCommon {
  kind: 'workflow';
  workflow: string;
  version?: number | undefined;
  input?: Record<string, unknown> | undefined;
  wait?: boolean | undefined;
}
/** Steps that hold step lists of their own. */
export type ContainerStep = ParallelStep | MapStep | SwitchStep | LoopStep;
export type Step = LeafStep | ContainerStep | WorkflowStep;

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export const SCHEMA_TYPES_AGREE: [
  Same<z.infer<typeof parallelStepSchema>, ParallelStep>,
  Same<z.infer<typeof mapStepSchema>, MapStep>,
  Same<z.infer<typeof switchStepSchema>, SwitchStep>,
  Same<z.infer<typeof loopStepSchema>, LoopStep>,
  Same<z.infer<typeof workflowStepSchema>, WorkflowStep>,
  Same<z.infer<typeof stepSchema>, Step>,
] = [true, true, true, true, true, true];
export type Trigger = z.infer<typeof triggerSchema>;
export type TriggerType = Trigger['type'];
export type StepRetry = z.infer<typeof retrySchema>;
