/**
 * Events (docs/events.md): POST /v1/events stores one event or a batch (plain JSON or CloudEvents) and
 * answers 202 once they are committed; the dispatcher (src/events/dispatcher.ts) then acts on them. GET
 * lists and reads them with what they started, woke and why a trigger refused one.
 */
import { z } from 'zod';
import { EVENT_NAME_PATTERN, EVENT_NAME_RULE, MAX_EVENT_DATA_BYTES } from '../../core/events';
import { notFound } from '../../platform/errors';
import { getEvent, listEvents, type EventRecord } from '../../platform/store/events';
import {
  CLOUDEVENT_BATCH_TYPE,
  CLOUDEVENT_EXAMPLE,
  CLOUDEVENT_TYPE,
  cloudEventBatchSchema,
  cloudEventSchema,
  eventsBodySchema,
  eventsOfRequest,
} from '../events/request';
import { defineListRoute } from './list-route';
import { defineRoute, type AnyRoute } from './route';
import { EXAMPLE_EXECUTION_ID, timestamp } from './schemas';
import { EVENT_DATA_SIZE, NUL_TEXT } from './semantic-errors';

const eventSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    data: z.record(z.string(), z.unknown()),
    received_at: timestamp,
    source: z.string().optional().meta({ description: 'A CloudEvent: its `source`.' }),
    subject: z.string().optional().meta({ description: 'A CloudEvent: its `subject`, when it had one.' }),
    started: z.array(z.string()).meta({
      description:
        'The executions its event triggers started (execution ids), in order; at most 1,000 listed.',
    }),
    woke: z.array(z.string()).meta({
      description:
        'The waiting executions (wait_for_event) it woke, in order; at most 1,000 listed. Empty until they are woken.',
    }),
    errors: z.array(z.object({ workflow: z.string(), code: z.string(), message: z.string() })).meta({
      description:
        "Event triggers that matched but started nothing: `invalid_input` (the data fails the workflow's input_schema), `expression_error` (the trigger's `if` failed), `invalid_definition` (the version's input_schema is no longer accepted).",
    }),
  })
  .meta({ id: 'Event' });

const eventExample = {
  id: 'signup-u_1842',
  name: 'user.signup',
  data: { user_id: 'u_1842', email: 'ada@example.com', plan: 'pro' },
  received_at: '2026-11-21T10:02:44.560Z',
  started: [EXAMPLE_EXECUTION_ID],
  woke: [],
  errors: [
    {
      workflow: 'crm-sync',
      code: 'invalid_input',
      message: "The input does not match the workflow's input_schema: /company is required.",
    },
  ],
};

const acceptedEventsSchema = z
  .object({
    status: z.literal('accepted'),
    ids: z.array(z.string()).meta({ description: "The events' ids, in request order: given or generated." }),
  })
  .meta({ id: 'EventsAccepted' });

function toEventView(record: EventRecord) {
  return {
    id: record.id,
    name: record.name,
    data: record.data,
    received_at: record.received_at.toISOString(),
    ...(record.source !== null && { source: record.source }),
    ...(record.subject !== null && { subject: record.subject }),
    started: record.started,
    woke: record.woke,
    errors: record.errors,
  };
}

const isSeq = (value: unknown): value is string => typeof value === 'string' && /^\d{1,19}$/.test(value);

const SEND_DESCRIPTION = [
  'Stores one event, or an array of up to 100, and answers 202 once they are committed: no crash or restart',
  'loses an accepted event, nor the executions it starts. Then each event starts one execution of every',
  "workflow whose latest version has an event trigger for its name (and whose `if` holds), with the event's",
  "`data` as input; data that fails a workflow's input_schema starts nothing there, and the event's read",
  'says why.',
  '',
  'An event is `{"name", "data", "id"}`: `data` an object of at most 256 KiB as JSON (default `{}`), `id`',
  'optional (default a generated `evt_...`). An `id` the workspace sent within the last 24 h is the same',
  'event again: accepted (202, the same id), acted on once.',
  '',
  `CloudEvents 1.0 in structured mode are accepted too: \`Content-Type: ${CLOUDEVENT_TYPE}\` for one,`,
  `\`${CLOUDEVENT_BATCH_TYPE}\` for an array. \`type\` is the name, \`id\` the id, \`data\` the data (a JSON`,
  'object); `source` and `subject` are kept and shown. `specversion` must be "1.0"; `data_base64` is refused.',
].join('\n');

export function eventRoutes(): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/events',
      operationId: 'sendEvents',
      summary: 'Send events',
      description: SEND_DESCRIPTION,
      tag: 'Events',
      auth: 'write',
      body: eventsBodySchema,
      otherBodyTypes: {
        [CLOUDEVENT_TYPE]: { schema: cloudEventSchema, example: CLOUDEVENT_EXAMPLE },
        [CLOUDEVENT_BATCH_TYPE]: { schema: cloudEventBatchSchema, example: [CLOUDEVENT_EXAMPLE] },
      },
      bodyValidation: 'handler',
      bodyRequired: true,
      responses: {
        202: {
          description: 'Accepted: the events are stored and will be acted on',
          schema: acceptedEventsSchema,
          example: { status: 'accepted', ids: ['signup-u_1842'] },
          links: {
            getEvent: {
              operationId: 'getEvent',
              parameters: { id: '$response.body#/ids/0' },
              description: 'The first event of the request.',
            },
          },
        },
      },
      errors: [],
      semanticErrors: [EVENT_DATA_SIZE, NUL_TEXT],
      handler: async ({ koa, services, auth, body }) => {
        const events = eventsOfRequest(koa, body);
        await services.eventStore.store({ workspaceId: auth.workspaceId, events });
        services.eventDispatch?.kick();
        return { status: 202, body: { status: 'accepted', ids: events.map((event) => event.id) } };
      },
    }),
    defineListRoute({
      path: '/v1/events',
      operationId: 'listEvents',
      summary: 'List events, newest first',
      tag: 'Events',
      auth: 'read',
      filters: {
        name: z
          .string()
          .regex(EVENT_NAME_PATTERN, EVENT_NAME_RULE)
          .optional()
          .meta({ description: 'Only events of this name.' }),
      },
      page: {
        description: 'A page of events, newest first',
        item: eventSchema,
        id: 'EventList',
        example: eventExample,
      },
      scope: ({ auth, query }) => ['events', auth.workspaceId, query.name ?? null],
      isPosition: isSeq,
      fetch: ({ services, auth, query }, page) =>
        listEvents(services.db, auth.workspaceId, { name: query.name }, page),
      positionOf: (row) => row.seq,
      toView: toEventView,
    }),
    defineRoute({
      method: 'get',
      path: '/v1/events/{id}',
      operationId: 'getEvent',
      summary: 'Read an event: what it started, woke, and why a trigger refused it',
      description: `Events are kept for EVENT_RETENTION_DAYS (7 by default); \`data\` holds up to ${MAX_EVENT_DATA_BYTES} bytes.`,
      tag: 'Events',
      auth: 'read',
      params: z.object({ id: z.string() }),
      responses: { 200: { description: 'The event', schema: eventSchema, example: eventExample } },
      errors: [404],
      errorExamples: {
        404: { code: 'event_not_found', message: "No event 'signup-u_1842' in this workspace." },
      },
      handler: async ({ services, auth, params }) => {
        const record = await getEvent(services.db, auth.workspaceId, params.id);
        if (!record) throw notFound('event_not_found', `No event '${params.id}' in this workspace.`);
        return { status: 200, body: toEventView(record) };
      },
    }),
  ];
}
