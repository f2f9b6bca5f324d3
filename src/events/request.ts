/**
 * What POST /v1/events accepts (docs/events.md#sending-events): one event `{name, data, id?}` or an array of
 * them as `application/json`, or CloudEvents 1.0 in structured mode (`application/cloudevents+json`, one
 * event; `application/cloudevents-batch+json`, an array). Every problem is reported at once with its JSON
 * pointer (`/3/data` in a batch); the events come back in request order, each with its id.
 */
import type Koa from 'koa';
import { z } from 'zod';
import {
  EVENT_ID_PATTERN,
  EVENT_ID_RULE,
  EVENT_NAME_PATTERN,
  EVENT_NAME_RULE,
  MAX_EVENT_DATA_BYTES,
  MAX_EVENTS_PER_REQUEST,
} from '../../core/events';
import { parseUserJson } from '../../core/parse-user-json';
import { invalidRequest, type ErrorDetail } from '../../platform/errors';
import { newEventId } from '../../platform/ids';
import type { NewEvent } from '../../platform/store/events';
import { zodDetails } from '../definitions/validate';

export const CLOUDEVENT_TYPE = 'application/cloudevents+json';
export const CLOUDEVENT_BATCH_TYPE = 'application/cloudevents-batch+json';

const dataSchema = z.record(z.string(), z.unknown(), { error: 'must be a JSON object' }).meta({
  description: `A JSON object of at most ${MAX_EVENT_DATA_BYTES} bytes (256 KiB) as JSON.`,
});

const nameSchema = z.string().regex(EVENT_NAME_PATTERN, EVENT_NAME_RULE);
const idSchema = z.string().regex(EVENT_ID_PATTERN, EVENT_ID_RULE);

export const EVENT_EXAMPLE = {
  name: 'user.signup',
  data: { user_id: 'u_1842', email: 'ada@example.com', plan: 'pro' },
  id: 'signup-u_1842',
};

export const eventInputSchema = z
  .strictObject({
    name: nameSchema.meta({ description: 'What happened: `user.signup`, `payment.succeeded`.' }),
    data: dataSchema.optional().meta({ description: 'Default `{}`.' }),
    id: idSchema.optional().meta({
      description:
        'Your id of the event: one sent again within 24 h is the same event (accepted, acted on once). Default: a generated `evt_...`.',
    }),
  })
  .meta({ id: 'EventInput', example: EVENT_EXAMPLE });

export const eventBatchSchema = z
  .array(eventInputSchema)
  .min(1, 'must hold at least one event')
  .max(MAX_EVENTS_PER_REQUEST, `must hold at most ${MAX_EVENTS_PER_REQUEST} events`);

export const eventsBodySchema = z.union([eventInputSchema, eventBatchSchema]).meta({
  description: `One event, or an array of 1 to ${MAX_EVENTS_PER_REQUEST}.`,
  example: EVENT_EXAMPLE,
});

/** A content type whose data is JSON (CloudEvents `datacontenttype`). */
const JSON_CONTENT_TYPE = /^(application\/json|text\/json|application\/[A-Za-z0-9.+-]+\+json)(;.*)?$/;

export const CLOUDEVENT_EXAMPLE = {
  specversion: '1.0',
  type: 'user.signup',
  source: 'https://accounts.example.com',
  id: 'b8f4e6d2-3c1a-4f0e-9a57-1d2c3b4a5f60',
  subject: 'u_1842',
  time: '2026-11-21T10:02:44Z',
  datacontenttype: 'application/json',
  data: { user_id: 'u_1842', email: 'ada@example.com', plan: 'pro' },
};

/** CloudEvents 1.0 (structured mode, JSON format); extension attributes are allowed and not kept. */
export const cloudEventSchema = z
  .looseObject({
    specversion: z.literal('1.0', { error: 'must be "1.0"' }),
    type: nameSchema.meta({ description: "The event's name." }),
    source: z.string().min(1).max(1024).meta({ description: 'Kept and shown.' }),
    id: idSchema,
    subject: z.string().min(1).max(1024).optional().meta({ description: 'Kept and shown.' }),
    time: z.string().max(64).optional(),
    datacontenttype: z
      .string()
      .regex(JSON_CONTENT_TYPE, 'must be a JSON type such as application/json: data is JSON')
      .optional(),
    dataschema: z.string().max(2048).optional(),
    data: dataSchema.optional().meta({ description: 'Default `{}`.' }),
    data_base64: z
      .never({ error: 'is not accepted: data must be a JSON object (send it as `data`)' })
      .optional(),
  })
  .meta({ id: 'CloudEvent', example: CLOUDEVENT_EXAMPLE });

export const cloudEventBatchSchema = z
  .array(cloudEventSchema)
  .min(1, 'must hold at least one event')
  .max(MAX_EVENTS_PER_REQUEST, `must hold at most ${MAX_EVENTS_PER_REQUEST} events`)
  .meta({ example: [CLOUDEVENT_EXAMPLE] });

type Mode = 'json' | 'cloudevent' | 'cloudevent-batch';

function modeOf(koa: Koa.Context): Mode {
  if (koa.is(CLOUDEVENT_TYPE)) return 'cloudevent';
  if (koa.is(CLOUDEVENT_BATCH_TYPE)) return 'cloudevent-batch';
  return 'json';
}

/**
 * The events of a request body, in order, each with its id (generated where none was given); throws 400
 * `invalid_request` listing every problem.
 */
export function eventsOfRequest(koa: Koa.Context, body: unknown): NewEvent[] {
  const mode = modeOf(koa);
  if (body === undefined)
    throw invalidRequest('Send an event, or an array of events, as the body.', [
      { path: '', message: 'is required' },
    ]);
  const batch = Array.isArray(body);
  if (mode === 'cloudevent' && batch)
    throw invalidRequest(
      `An ${CLOUDEVENT_TYPE} body is one event; send an array as ${CLOUDEVENT_BATCH_TYPE}.`,
      [{ path: '', message: 'must be an object' }],
    );
  if (mode === 'cloudevent-batch' && !batch)
    throw invalidRequest(
      `An ${CLOUDEVENT_BATCH_TYPE} body is an array of events; send one event as ${CLOUDEVENT_TYPE}.`,
      [{ path: '', message: 'must be an array' }],
    );
  if (batch && body.length > MAX_EVENTS_PER_REQUEST)
    throw invalidRequest(
      `The batch holds ${body.length} events; a request holds at most ${MAX_EVENTS_PER_REQUEST}. Send the rest in another request.`,
      [{ path: '', message: `must hold at most ${MAX_EVENTS_PER_REQUEST} events` }],
    );
  const events = mode === 'json' ? plainEvents(body, batch) : cloudEvents(body, batch);
  const problems = events.flatMap((event, i) => dataSizeProblems(event, batch ? `/${i}` : ''));
  if (problems.length > 0) throw invalidEvents(problems);
  return events;
}

function plainEvents(body: unknown, batch: boolean): NewEvent[] {
  const parsed = parseUserJson(batch ? eventBatchSchema : eventInputSchema, body);
  if (!parsed.success) {
    const first: unknown = Array.isArray(body) ? body[0] : body;
    const cloudEvent = typeof first === 'object' && first !== null && Object.hasOwn(first, 'specversion');
    throw invalidEvents(
      zodDetails(parsed.issues),
      cloudEvent ? ` Send CloudEvents as ${batch ? CLOUDEVENT_BATCH_TYPE : CLOUDEVENT_TYPE}.` : '',
    );
  }
  const events = Array.isArray(parsed.data) ? parsed.data : [parsed.data];
  return events.map((event) => ({ id: event.id ?? newEventId(), name: event.name, data: event.data ?? {} }));
}

function cloudEvents(body: unknown, batch: boolean): NewEvent[] {
  const parsed = parseUserJson(batch ? cloudEventBatchSchema : cloudEventSchema, body);
  if (!parsed.success) throw invalidEvents(zodDetails(parsed.issues));
  const events = Array.isArray(parsed.data) ? parsed.data : [parsed.data];
  return events.map((event) => ({
    id: event.id,
    name: event.type,
    data: event.data ?? {},
    source: event.source,
    ...(event.subject !== undefined && { subject: event.subject }),
  }));
}

function dataSizeProblems(event: NewEvent, at: string): ErrorDetail[] {
  const bytes = Buffer.byteLength(JSON.stringify(event.data), 'utf8');
  return bytes > MAX_EVENT_DATA_BYTES
    ? [
        {
          path: `${at}/data`,
          message: `is ${bytes} bytes as JSON; an event's data holds at most ${MAX_EVENT_DATA_BYTES}`,
        },
      ]
    : [];
}

function invalidEvents(details: ErrorDetail[], hint = '') {
  const first = details[0]!;
  const more = details.length > 1 ? ` (and ${details.length - 1} more)` : '';
  return invalidRequest(`Invalid event: ${first.path || '/'} ${first.message}${more}.${hint}`, details);
}
