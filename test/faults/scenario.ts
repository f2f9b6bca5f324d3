/** Shared setup of the fault scenarios: a deployment, a receiver, a workflow and a webhook endpoint. */
import { Deployment, type DeploymentOptions } from '../support/deployment';
import { definition, type StepSpec } from '../support/fixtures';
import { Receiver } from '../support/receiver';
import type { ApiClient } from '../support/stack';
import { expectEventsDelivered } from './harness';

export const EVENTS_PATH = '/events';

export interface Scenario {
  deployment: Deployment;
  receiver: Receiver;
  workflowId: string;
  /** The endpoint subscribed to the scenario's events, at `EVENTS_PATH` of the receiver. */
  endpointId: string;
  /**
   * Waits until the endpoint received every subscribed event of these executions (harness.ts
   * expectEventsDelivered); a failure quotes the delivery log of the missing ones.
   */
  expectEventsDelivered: (executionIds: string[], timeoutMs?: number) => Promise<void>;
  stop(): Promise<void>;
}

export async function startScenario(
  steps: (receiverUrl: string) => StepSpec[],
  options: DeploymentOptions & { events?: string[] } = {},
): Promise<Scenario> {
  const receiver = await Receiver.start();
  const deployment = new Deployment(options);
  try {
    await deployment.start();
    const client = deployment.client();
    const events = options.events ?? ['execution.started', 'execution.completed'];
    const endpoint = await client
      .post('/v1/webhooks', { url: `${receiver.url}${EVENTS_PATH}`, events })
      .expect(201);
    const endpointId = endpoint.body.id as string;
    const body = definition(steps(receiver.url));
    await client.post('/v1/workflows', body).expect(201);
    return {
      deployment,
      receiver,
      workflowId: body['id'] as string,
      endpointId,
      expectEventsDelivered: (executionIds, timeoutMs) =>
        expectEventsDelivered(receiver, EVENTS_PATH, executionIds, events, timeoutMs, (missing) =>
          explainMissingDeliveries(deployment.client(), endpointId, missing),
        ),
      stop: async () => {
        await deployment.stop();
        await receiver.stop();
      },
    };
  } catch (error) {
    await deployment.stop().catch(() => undefined);
    await receiver.stop();
    throw error;
  }
}

interface DeliveryView {
  event: string;
  execution_id: string;
  status: string;
  attempts: { at: string; status_code: number | null; error: string | null }[];
  next_attempt_at: string | null;
  created_at: string;
}

/**
 * What the endpoint's delivery log says of events that never arrived (the first ten): none recorded, or
 * each delivery's status, attempts and next attempt. Tells a late delivery from a lost event.
 */
async function explainMissingDeliveries(
  client: ApiClient,
  endpointId: string,
  missing: string[],
): Promise<string> {
  const wanted = new Set(missing);
  const found = new Map<string, DeliveryView>();
  let cursor: string | null = null;
  do {
    const res = await client
      .get(`/v1/webhooks/${endpointId}/deliveries?limit=100${cursor ? `&cursor=${cursor}` : ''}`)
      .expect(200);
    for (const delivery of res.body.data as DeliveryView[]) {
      const key = `${delivery.execution_id} ${delivery.event}`;
      if (wanted.has(key)) found.set(key, delivery);
    }
    cursor = res.body.next_cursor as string | null;
  } while (cursor);
  const lines = missing.slice(0, 10).map((key) => {
    const d = found.get(key);
    if (!d) return `${key}: no delivery recorded`;
    const attempts = d.attempts
      .map((a) => `${a.at} ${a.status_code ?? '-'} ${a.error ?? ''}`.trim())
      .join('; ');
    return `${key}: ${d.status}, recorded ${d.created_at}, attempts [${attempts}], next ${d.next_attempt_at ?? '-'}`;
  });
  const recorded = missing.filter((key) => found.has(key)).length;
  return `Of ${missing.length} missing, ${recorded} have a delivery recorded (now ${new Date().toISOString()}):\n${lines.join('\n')}`;
}
