/**
 * Webhook endpoints for execution events (docs/webhooks.md#outbound-webhooks), their delivery log and
 * redelivery.
 */
import { z } from 'zod';
import { AppError, notFound } from '../../platform/errors';
import {
  checkDestination,
  checkUrlForm,
  DestinationError,
  type DestinationPolicy,
} from '../../platform/net/destination-guard';
import { isDocumentationHost, resolves } from '../../platform/net/documentation-hosts';
import {
  createEndpoint,
  deleteEndpoint,
  deliveryTarget,
  getDelivery,
  getEndpoint,
  listDeliveries,
  listEndpoints,
  type DeliveryRecord,
  type EndpointRecord,
} from '../../platform/store/webhooks';
import { createWithinLimit } from '../../platform/store/workspace-limits';
import { newSigningSecret } from '../../platform/webhook-signing';
import { countLimit } from '../workspaces/limits';
import { redeliver } from '../webhooks/redeliver';
import { EVENT_KINDS } from '../../core/event-types';
import { isString } from '../http/cursor';
import { defineListRoute } from './list-route';
import { defineRoute, type AnyRoute } from './route';
import { NUL_TEXT, WEBHOOK_URL } from './semantic-errors';
import { EXAMPLE_EXECUTION_ID, timestamp, limitExceededExample } from './schemas';

const endpointExample = {
  id: 'wh_8ZtQ3nV6pR1xK4mC7bLs',
  url: 'https://hooks.example.com/switchyard',
  events: ['execution.completed', 'execution.failed'],
  description: 'Order system: finished runs',
  status: 'enabled',
  created_at: '2026-11-03T10:15:22.640Z',
};

const deliveryExample = {
  id: 'dlv_4mT7qW2zX9cV5bN1kL8pR3sY',
  event_id: 'evt_5b0c2f6e9d8a4c71b3e2a94f07d6c158',
  event: 'execution.completed',
  execution_id: EXAMPLE_EXECUTION_ID,
  status: 'succeeded',
  attempts: [
    {
      at: '2026-11-21T10:02:44.701Z',
      status_code: 503,
      duration_ms: 212,
      error: 'The receiver answered 503.',
    },
    { at: '2026-11-21T10:02:49.733Z', status_code: 200, duration_ms: 87, error: null },
  ],
  next_attempt_at: null,
  created_at: '2026-11-21T10:02:44.560Z',
};

const endpointSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(z.enum(EVENT_KINDS)),
    description: z.string().nullable(),
    status: z
      .enum(['enabled', 'disabled'])
      .meta({ description: 'disabled after the receiver answered 410 Gone' }),
    created_at: timestamp,
  })
  .meta({ id: 'WebhookEndpoint' });

const createdEndpointSchema = endpointSchema
  .extend({
    secret: z
      .string()
      .meta({ description: 'The whsec_ signing secret (Standard Webhooks): shown only here.' }),
  })
  .meta({ id: 'CreatedWebhookEndpoint' });

const deliverySchema = z
  .object({
    id: z.string(),
    event_id: z.string().meta({ description: 'Also the webhook-id header of every attempt.' }),
    event: z.enum(EVENT_KINDS),
    execution_id: z.string(),
    status: z.enum(['pending', 'succeeded', 'failed']),
    attempts: z.array(
      z.object({
        at: timestamp,
        status_code: z.number().int().nullable(),
        duration_ms: z.number().int(),
        error: z.string().nullable(),
      }),
    ),
    next_attempt_at: timestamp.nullable(),
    created_at: timestamp,
  })
  .meta({ id: 'WebhookDelivery' });

/**
 * What checkDestination accepts in form (its address checks come on top): https (http only where
 * ALLOW_PRIVATE_DESTINATIONS is on), a host, no credentials. Documented rather than enforced by the
 * schema, so that every refused URL keeps the contract's code, 400 `invalid_webhook_url`.
 */
const WEBHOOK_URL_PATTERN = '^https?://[^\\s/?#@]+([/?#]\\S*)?$';

const createBody = z
  .strictObject({
    url: z
      .string()
      .min(1)
      .max(2048)
      .meta({
        format: 'uri',
        pattern: WEBHOOK_URL_PATTERN,
        description:
          'An absolute https URL without credentials that does not resolve to a private, loopback or link-local address ' +
          '(plain http and private addresses only where the operator set ALLOW_PRIVATE_DESTINATIONS); its host must resolve, except a name ' +
          'reserved for documentation (example.com, example.net, example.org, *.example), accepted unresolved so that examples work offline. ' +
          'Any other value is 400 invalid_webhook_url.',
        example: 'https://hooks.example.com/switchyard',
      }),
    events: z
      .array(z.enum(EVENT_KINDS, { error: `must be one of ${EVENT_KINDS.join(', ')}` }))
      .min(1)
      .max(EVENT_KINDS.length)
      .refine((events) => new Set(events).size === events.length, 'must not repeat an event kind')
      // The document states the refinement, so that tools generate what is accepted.
      .meta({ uniqueItems: true }),
    description: z.string().max(500).optional(),
  })
  .meta({
    example: {
      url: endpointExample.url,
      events: endpointExample.events,
      description: endpointExample.description,
    },
  });

/**
 * A webhook URL as registration checks it: the destination guard's checks, except that a documentation
 * name (documentation-hosts.ts) that does not resolve is accepted, so that the document's example works
 * offline. One that resolves is checked like any other name; deliveries check every name again.
 */
export async function checkWebhookUrl(raw: string, policy: DestinationPolicy): Promise<void> {
  const url = checkUrlForm(raw, policy);
  if (!policy.allowPrivate && isDocumentationHost(url.hostname) && !(await resolves(url.hostname))) return;
  await checkDestination(raw, policy);
}

const idParams = z.object({ id: z.string() });
const webhookNotFound = (id: string) =>
  notFound('webhook_not_found', `No webhook '${id}' in this workspace.`);

function toEndpointView(record: EndpointRecord) {
  return {
    id: record.id,
    url: record.url,
    events: record.events,
    description: record.description,
    status: record.status,
    created_at: record.created_at.toISOString(),
  };
}

function toDeliveryView(
  record: DeliveryRecord & {
    attempts: { at: Date; status_code: number | null; duration_ms: number; error: string | null }[];
  },
) {
  return {
    id: record.id,
    event_id: record.event_id,
    event: record.event,
    execution_id: record.execution_id,
    status: record.status,
    attempts: record.attempts.map((a) => ({
      at: a.at.toISOString(),
      status_code: a.status_code,
      duration_ms: a.duration_ms,
      error: a.error,
    })),
    next_attempt_at: record.next_attempt_at?.toISOString() ?? null,
    created_at: record.created_at.toISOString(),
  };
}

export function webhookRoutes(): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/webhooks',
      operationId: 'createWebhook',
      summary: 'Register an endpoint for execution events',
      description:
        'The URL must be HTTPS and must not resolve to a private, loopback or link-local address (checked now and at every delivery). ' +
        'Deliveries are signed per Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature) with the returned secret. ' +
        "An endpoint past the workspace's `webhook_endpoints` limit is 409 limit_exceeded (GET /v1/workspace).",
      tag: 'Webhooks',
      auth: 'write',
      body: createBody,
      bodyRequired: true,
      responses: {
        201: {
          description: 'Registered; `secret` is shown only here',
          schema: createdEndpointSchema,
          example: { ...endpointExample, secret: 'whsec_C2FtcGxlLWVuZHBvaW50LXNlY3JldC0xMjM0' },
          links: {
            getWebhook: { operationId: 'getWebhook', parameters: { id: '$response.body#/id' } },
            deleteWebhook: { operationId: 'deleteWebhook', parameters: { id: '$response.body#/id' } },
            listWebhookDeliveries: {
              operationId: 'listWebhookDeliveries',
              parameters: { id: '$response.body#/id' },
            },
          },
        },
      },
      errors: [400, 409],
      semanticErrors: [WEBHOOK_URL, NUL_TEXT],
      errorExamples: { 409: limitExceededExample('webhook_endpoints', 50) },
      handler: async ({ services, auth, body }) => {
        try {
          await checkWebhookUrl(body.url, { allowPrivate: services.config.allowPrivateDestinations });
        } catch (error) {
          if (!(error instanceof DestinationError)) throw error;
          throw new AppError(
            400,
            'invalid_webhook_url',
            `The webhook URL is not allowed: ${error.message}.`,
            {
              details: [{ path: '/url', message: error.message }],
            },
          );
        }
        const secret = newSigningSecret();
        const record = await createWithinLimit(
          services.db,
          await countLimit(services, auth.workspaceId, 'webhook_endpoints'),
          (tx) =>
            createEndpoint(tx, services.cipher, {
              workspaceId: auth.workspaceId,
              url: body.url,
              events: body.events,
              description: body.description ?? null,
              secret,
            }),
        );
        return { status: 201, body: { ...toEndpointView(record), secret } };
      },
    }),
    defineListRoute({
      path: '/v1/webhooks',
      operationId: 'listWebhooks',
      summary: 'List webhook endpoints',
      tag: 'Webhooks',
      auth: 'read',
      page: {
        description: 'A page of endpoints',
        item: endpointSchema,
        id: 'WebhookEndpointList',
        example: endpointExample,
      },
      scope: ({ auth }) => ['webhooks', auth.workspaceId],
      isPosition: isString,
      fetch: ({ services, auth }, page) => listEndpoints(services.db, auth.workspaceId, page),
      positionOf: (row) => row.id,
      toView: toEndpointView,
    }),
    defineRoute({
      method: 'get',
      path: '/v1/webhooks/{id}',
      operationId: 'getWebhook',
      summary: 'Read a webhook endpoint (never its secret)',
      tag: 'Webhooks',
      auth: 'read',
      params: idParams,
      responses: { 200: { description: 'The endpoint', schema: endpointSchema, example: endpointExample } },
      errors: [404],
      handler: async ({ services, auth, params }) => {
        const record = await getEndpoint(services.db, auth.workspaceId, params.id);
        if (!record) throw webhookNotFound(params.id);
        return { status: 200, body: toEndpointView(record) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/webhooks/{id}',
      operationId: 'deleteWebhook',
      summary: 'Remove a webhook endpoint (its pending retries stop)',
      tag: 'Webhooks',
      auth: 'write',
      params: idParams,
      responses: { 204: { description: 'Removed' } },
      errors: [404],
      handler: async ({ services, auth, params }) => {
        if (!(await deleteEndpoint(services.db, auth.workspaceId, params.id)))
          throw webhookNotFound(params.id);
        return { status: 204 };
      },
    }),
    defineListRoute({
      path: '/v1/webhooks/{id}/deliveries',
      operationId: 'listWebhookDeliveries',
      summary: "An endpoint's deliveries, newest first, with every attempt",
      tag: 'Webhooks',
      auth: 'read',
      params: idParams,
      page: {
        description: 'A page of deliveries',
        item: deliverySchema,
        id: 'WebhookDeliveryList',
        example: deliveryExample,
      },
      errors: [404],
      check: async ({ services, auth, params }) => {
        if (!(await getEndpoint(services.db, auth.workspaceId, params.id))) throw webhookNotFound(params.id);
      },
      scope: ({ params }) => ['deliveries', params.id],
      isPosition: isString,
      fetch: ({ services, params }, page) => listDeliveries(services.db, params.id, page),
      positionOf: (row) => row.id,
      toView: toDeliveryView,
    }),
    defineRoute({
      method: 'post',
      path: '/v1/webhooks/{id}/deliveries/{delivery_id}/retry',
      operationId: 'redeliverWebhook',
      summary: 'Send a delivery again',
      description: [
        'A new series of attempts (same webhook-id), logged after the earlier ones. One series per delivery at a',
        'time: while the delivery is still being attempted (its first series retrying, or an earlier',
        'redelivery), 409 `delivery_in_progress`. A workspace may ask for 10 redeliveries at once, then one',
        'every 6 s (429 `rate_limited` past it).',
      ].join(' '),
      tag: 'Webhooks',
      auth: 'write',
      params: z.object({ id: z.string(), delivery_id: z.string() }),
      responses: {
        202: {
          description: 'Accepted: the delivery is being sent again',
          schema: z
            .object({ status: z.literal('accepted'), delivery_id: z.string() })
            .meta({ id: 'RedeliveryAccepted' }),
          example: { status: 'accepted', delivery_id: deliveryExample.id },
        },
      },
      errors: [404, 409],
      errorExamples: {
        409: {
          code: 'delivery_in_progress',
          message: `Delivery '${deliveryExample.id}' is still being attempted; ask again once it has succeeded or failed.`,
        },
      },
      handler: async ({ koa, services, auth, params }) => {
        const endpoint = await getEndpoint(services.db, auth.workspaceId, params.id);
        if (!endpoint) throw webhookNotFound(params.id);
        const delivery = await getDelivery(services.db, params.id, params.delivery_id);
        if (!delivery)
          throw notFound('not_found', `No delivery '${params.delivery_id}' for webhook '${params.id}'.`);
        const target = await deliveryTarget(services.db, services.cipher, delivery.id);
        if (!target)
          throw notFound('not_found', `No delivery '${params.delivery_id}' for webhook '${params.id}'.`);
        await redeliver(services, koa, { workspaceId: auth.workspaceId, delivery, payload: target.payload });
        return { status: 202, body: { status: 'accepted', delivery_id: delivery.id } };
      },
    }),
  ];
}
