/** Webhook endpoints, deliveries and delivery attempts (docs/webhooks.md#outbound-webhooks). */
import { randomBase62 } from '../ids';
import type { SecretCipher } from '../secrets/cipher';
import type { EventKind, EventPayload } from '../../core/event-types';
import { announceChange } from './changes';
import type { Queryable } from './db';
import { deleteInBatches, PURGE_BATCH } from './delete-in-batches';
import { pageByCreation, type PageRequest } from './keyset-pages';

export interface EndpointRecord {
  id: string;
  workspace_id: string;
  url: string;
  events: EventKind[];
  description: string | null;
  status: 'enabled' | 'disabled';
  created_at: Date;
}

export interface DeliveryRecord {
  id: string;
  endpoint_id: string;
  event_id: string;
  event: EventKind;
  execution_id: string;
  status: 'pending' | 'succeeded' | 'failed';
  next_attempt_at: Date | null;
  created_at: Date;
}

export interface AttemptRecord {
  delivery_id: string;
  at: Date;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
}

const ENDPOINT_COLUMNS = 'id, workspace_id, url, events, description, status, created_at';
const DELIVERY_COLUMNS =
  'id, endpoint_id, event_id, event, execution_id, status, next_attempt_at, created_at';

const sealContext = (workspaceId: string, endpointId: string): string =>
  `webhook/${workspaceId}/${endpointId}`;

export async function createEndpoint(
  db: Queryable,
  cipher: SecretCipher,
  input: {
    workspaceId: string;
    url: string;
    events: EventKind[];
    description: string | null;
    secret: string;
  },
): Promise<EndpointRecord> {
  const id = `wh_${randomBase62(20)}`;
  const [row] = await db.query<EndpointRecord>(
    `insert into webhook_endpoints (id, workspace_id, url, events, description, sealed_secret)
     values ($1, $2, $3, $4, $5, $6) returning ${ENDPOINT_COLUMNS}`,
    [
      id,
      input.workspaceId,
      input.url,
      input.events,
      input.description,
      cipher.seal(input.secret, sealContext(input.workspaceId, id)),
    ],
  );
  await announceChange(db, 'webhooks');
  return row!;
}

export async function getEndpoint(
  db: Queryable,
  workspaceId: string,
  id: string,
): Promise<EndpointRecord | undefined> {
  const [row] = await db.query<EndpointRecord>(
    `select ${ENDPOINT_COLUMNS} from webhook_endpoints where workspace_id = $1 and id = $2`,
    [workspaceId, id],
  );
  return row;
}

/** The workspace's endpoints, oldest first. */
export function listEndpoints(
  db: Queryable,
  workspaceId: string,
  page: PageRequest,
): Promise<EndpointRecord[]> {
  return pageByCreation(
    db,
    { table: 'webhook_endpoints', columns: ENDPOINT_COLUMNS, scope: 'workspace_id' },
    workspaceId,
    page,
  );
}

/** Deletes an endpoint and its deliveries; a delivery still retrying finds it gone and stops. */
export async function deleteEndpoint(db: Queryable, workspaceId: string, id: string): Promise<boolean> {
  const rows = await db.query(
    'delete from webhook_endpoints where workspace_id = $1 and id = $2 returning id',
    [workspaceId, id],
  );
  if (rows.length > 0) await announceChange(db, 'webhooks');
  return rows.length > 0;
}

export async function disableEndpoint(db: Queryable, id: string): Promise<void> {
  await db.query("update webhook_endpoints set status = 'disabled', disabled_at = now() where id = $1", [id]);
  await announceChange(db, 'webhooks');
}

/** The enabled endpoints of the workspace that subscribe to this event kind. */
export async function subscribedEndpoints(
  db: Queryable,
  workspaceId: string,
  event: EventKind,
): Promise<{ id: string }[]> {
  return db.query<{ id: string }>(
    "select id from webhook_endpoints where workspace_id = $1 and status = 'enabled' and $2 = any(events) order by id",
    [workspaceId, event],
  );
}

/** The event kinds some enabled endpoint of the workspace subscribes to. */
export async function subscribedEventKinds(db: Queryable, workspaceId: string): Promise<EventKind[]> {
  const rows = await db.query<{ event: EventKind }>(
    "select distinct unnest(events) as event from webhook_endpoints where workspace_id = $1 and status = 'enabled' order by 1",
    [workspaceId],
  );
  return rows.map((row) => row.event);
}

/** One delivery per endpoint for an event (idempotent: emitting the same event twice records it once). */
export async function createDeliveries(
  db: Queryable,
  workspaceId: string,
  payload: EventPayload,
  endpointIds: string[],
): Promise<string[]> {
  const ids: string[] = [];
  for (const endpointId of endpointIds) {
    const [row] = await db.query<{ id: string }>(
      `insert into webhook_deliveries (id, workspace_id, endpoint_id, event_id, event, execution_id, payload)
       values ($1, $2, $3, $4, $5, $6, $7::jsonb)
       on conflict (endpoint_id, event_id) do update set event = excluded.event
       returning id`,
      [
        `dlv_${randomBase62(24)}`,
        workspaceId,
        endpointId,
        payload.id,
        payload.event,
        payload.execution_id,
        JSON.stringify(payload),
      ],
    );
    ids.push(row!.id);
  }
  return ids;
}

export interface DeliveryTarget {
  delivery_id: string;
  endpoint_id: string;
  workspace_id: string;
  url: string;
  endpoint_status: 'enabled' | 'disabled';
  secret: string;
  payload: EventPayload;
}

/** Everything one attempt needs; undefined when the delivery (or its endpoint) was deleted. */
export async function deliveryTarget(
  db: Queryable,
  cipher: SecretCipher,
  deliveryId: string,
): Promise<DeliveryTarget | undefined> {
  const [row] = await db.query<{
    delivery_id: string;
    endpoint_id: string;
    workspace_id: string;
    url: string;
    endpoint_status: 'enabled' | 'disabled';
    sealed_secret: string;
    payload: EventPayload;
  }>(
    `select d.id as delivery_id, e.id as endpoint_id, e.workspace_id, e.url, e.status as endpoint_status, e.sealed_secret, d.payload
       from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
      where d.id = $1`,
    [deliveryId],
  );
  if (!row) return undefined;
  const { sealed_secret: sealed, ...rest } = row;
  return { ...rest, secret: cipher.open(sealed, sealContext(row.workspace_id, row.endpoint_id)) };
}

/** Records one attempt and the delivery's state after it. */
export async function recordAttempt(
  db: Queryable,
  attempt: AttemptRecord,
  state: { status: DeliveryRecord['status']; nextAttemptAt: Date | null },
): Promise<void> {
  await db.query(
    'insert into webhook_delivery_attempts (delivery_id, at, status_code, duration_ms, error) values ($1, $2, $3, $4, $5)',
    [attempt.delivery_id, attempt.at, attempt.status_code, attempt.duration_ms, attempt.error],
  );
  await db.query('update webhook_deliveries set status = $2, next_attempt_at = $3 where id = $1', [
    attempt.delivery_id,
    state.status,
    state.nextAttemptAt,
  ]);
}

export async function markDelivery(
  db: Queryable,
  deliveryId: string,
  status: DeliveryRecord['status'],
): Promise<void> {
  await db.query('update webhook_deliveries set status = $2, next_attempt_at = null where id = $1', [
    deliveryId,
    status,
  ]);
}

export async function getDelivery(
  db: Queryable,
  endpointId: string,
  deliveryId: string,
): Promise<DeliveryRecord | undefined> {
  const [row] = await db.query<DeliveryRecord>(
    `select ${DELIVERY_COLUMNS} from webhook_deliveries where endpoint_id = $1 and id = $2`,
    [endpointId, deliveryId],
  );
  return row;
}

/** Deliveries of an endpoint, newest first, with their attempts in order. */
export async function listDeliveries(
  db: Queryable,
  endpointId: string,
  page: PageRequest,
): Promise<(DeliveryRecord & { attempts: AttemptRecord[] })[]> {
  const deliveries = await pageByCreation<DeliveryRecord>(
    db,
    { table: 'webhook_deliveries', columns: DELIVERY_COLUMNS, scope: 'endpoint_id', descending: true },
    endpointId,
    page,
  );
  if (deliveries.length === 0) return [];
  const attempts = await db.query<AttemptRecord>(
    'select delivery_id, at, status_code, duration_ms, error from webhook_delivery_attempts where delivery_id = any($1::text[]) order by id',
    [deliveries.map((d) => d.id)],
  );
  return deliveries.map((delivery) => ({
    ...delivery,
    attempts: attempts.filter((a) => a.delivery_id === delivery.id),
  }));
}

/**
 * Deletes finished deliveries (and, by cascade, their attempts) created more than `retentionDays` ago.
 * Pending ones stay: their delivery workflow still writes to them.
 */
export function purgeDeliveryLog(db: Queryable, retentionDays: number): Promise<number> {
  return deleteInBatches(
    db,
    `delete from webhook_deliveries where id in (
       select id from webhook_deliveries
        where created_at < now() - make_interval(days => $1) and status <> 'pending'
        limit ${PURGE_BATCH})
     returning 1`,
    [retentionDays],
  );
}
