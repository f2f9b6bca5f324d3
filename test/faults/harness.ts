/**
 * What every fault scenario checks afterwards (and the load test too): every accepted execution reached
 * a final status, every subscribed endpoint received each of its events at least once under one
 * webhook-id, and the API answered only contract responses meanwhile.
 */
import { expect } from 'chai';
import type { Response } from 'supertest';
import type { ApiClient } from '../support/stack';
import type { Receiver } from '../support/receiver';
import { waitFor } from '../support/wait';

const CONTRACT_CODES = new Set([
  'invalid_request',
  'invalid_input',
  'invalid_definition',
  'invalid_webhook_url',
  'unauthorized',
  'invalid_signature',
  'forbidden',
  'workflow_not_found',
  'execution_not_found',
  'webhook_not_found',
  'step_not_found',
  'api_key_not_found',
  'not_found',
  'method_not_allowed',
  'execution_not_failed',
  'execution_not_running',
  'step_not_waiting',
  'workflow_exists',
  'payload_too_large',
  'unsupported_media_type',
  'rate_limited',
  'internal_error',
  'temporal_unavailable',
  'database_unavailable',
]);

/** How long a well-behaved caller waits before trying again: Retry-After when given, else `fallbackMs`. */
export function retryDelayMs(res: Response, fallbackMs: number): number {
  const seconds = Number(res.headers['retry-after']);
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : fallbackMs;
}

/** Every API answer of a scenario, and whether it is one the contract allows. */
export class ResponseLog {
  readonly statuses = new Map<number, number>();
  readonly violations: string[] = [];
  /** Requests that got no HTTP answer at all (the API process was gone). */
  networkErrors = 0;

  /**
   * `allowed`: the statuses the scenario expects. A 429 is always allowed, with a Retry-After header:
   * under load and faults the workers fall behind, and the trigger endpoints then ask callers to slow
   * down (docs/operations.md#backpressure) instead of queueing without bound.
   */
  record(res: Response, allowed: number[]): void {
    this.statuses.set(res.status, (this.statuses.get(res.status) ?? 0) + 1);
    if (res.status === 429) {
      if (!/^\d+$/.test(String(res.headers['retry-after'] ?? '')))
        this.violations.push(`429 without a Retry-After in seconds: ${JSON.stringify(res.headers)}`);
    } else if (!allowed.includes(res.status))
      this.violations.push(`unexpected ${res.status}: ${JSON.stringify(res.body)}`);
    if (res.status >= 400) {
      const error = (
        res.body as { error?: { code?: unknown; message?: unknown; request_id?: unknown; details?: unknown } }
      ).error;
      const ok =
        typeof error?.code === 'string' &&
        CONTRACT_CODES.has(error.code) &&
        typeof error.message === 'string' &&
        typeof error.request_id === 'string' &&
        Array.isArray(error.details);
      if (!ok) this.violations.push(`not a contract error body (${res.status}): ${JSON.stringify(res.body)}`);
    }
  }

  summary(): Record<string, number> {
    return Object.fromEntries([...this.statuses.entries()].map(([status, count]) => [String(status), count]));
  }

  expectOnlyContractResponses(): void {
    expect(this.violations.slice(0, 5), `${this.violations.length} non-contract responses`).to.deep.equal([]);
    expect(this.statuses.get(500) ?? 0, 'no 500').to.equal(0);
  }
}

/**
 * Triggers `workflowId` from `concurrency` callers until `stop()` says so or `count` are accepted; returns
 * the accepted execution ids. Each call's answer goes to the log.
 */
export async function triggerUnderFault(
  client: () => ApiClient,
  workflowId: string,
  options: {
    concurrency: number;
    count?: number;
    until?: () => boolean;
    log: ResponseLog;
    allowed: number[];
    input?: unknown;
  },
): Promise<string[]> {
  const accepted: string[] = [];
  let issued = 0;
  const more = () => (options.count === undefined || issued < options.count) && !(options.until?.() ?? false);
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      while (more()) {
        issued += 1;
        try {
          const res = await client()
            .post(`/v1/workflows/${workflowId}/trigger`, options.input ?? {})
            .timeout(20_000);
          options.log.record(res, options.allowed);
          if (res.status === 202) accepted.push(res.body.execution_id as string);
          else await new Promise((resolve) => setTimeout(resolve, retryDelayMs(res, 100)));
        } catch {
          options.log.networkErrors += 1;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
    }),
  );
  return accepted;
}

/**
 * Triggers `workflowId` `count` times from `callers` callers at once, the n-th trigger with `input(n)` through
 * `client(n)` (several APIs in turn, say); a 429 is made again after its Retry-After, through the next client,
 * until accepted. Returns the execution ids in the order accepted; any other answer than 202 or 429 throws.
 */
export async function triggerEach(
  client: (n: number) => ApiClient,
  workflowId: string,
  options: { count: number; callers: number; log: ResponseLog; input: (n: number) => unknown },
): Promise<string[]> {
  const accepted: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: options.callers }, async () => {
      while (next < options.count) {
        const n = next++;
        for (let attempt = 0; ; attempt++) {
          const res = await client(n + attempt)
            .post(`/v1/workflows/${workflowId}/trigger`, options.input(n))
            .timeout(30_000);
          options.log.record(res, [202]);
          if (res.status === 202) {
            accepted.push(res.body.execution_id as string);
            break;
          }
          if (res.status !== 429) throw new Error(`trigger ${n}: ${res.status} ${JSON.stringify(res.body)}`);
          await new Promise((resolve) => setTimeout(resolve, retryDelayMs(res, 500)));
        }
      }
    }),
  );
  return accepted;
}

/** Waits until every execution has a final status; returns the statuses. */
export async function waitAllFinal(
  client: ApiClient,
  ids: string[],
  timeoutMs = 120_000,
): Promise<Map<string, string>> {
  const statuses = new Map<string, string>();
  await waitFor(
    async () => {
      for (const id of ids) {
        if (statuses.has(id)) continue;
        const res = await client.get(`/v1/executions/${id}`).timeout(10_000);
        if (
          res.status === 200 &&
          ['success', 'failed', 'canceled', 'terminated', 'timed_out'].includes(res.body.status as string)
        ) {
          statuses.set(id, res.body.status as string);
        }
      }
      return statuses.size === ids.length;
    },
    { timeoutMs, intervalMs: 500, what: `${ids.length} executions to finish (${statuses.size} done)` },
  );
  return statuses;
}

interface EventBody {
  id: string;
  event: string;
  execution_id: string;
}

/**
 * For each execution and event kind: the webhook-ids of the deliveries the receiver acknowledged (2xx)
 * at `path` (one expected per event). Requests it refused do not count as delivered.
 */
export function receivedEvents(receiver: Receiver, path: string): Map<string, Map<string, Set<string>>> {
  const byExecution = new Map<string, Map<string, Set<string>>>();
  for (const request of receiver.requestsTo(path)) {
    if (request.answered === undefined || request.answered < 200 || request.answered >= 300) continue;
    const body = request.json as EventBody | undefined;
    if (!body?.execution_id) continue;
    const kinds = byExecution.get(body.execution_id) ?? new Map<string, Set<string>>();
    const ids = kinds.get(body.event) ?? new Set<string>();
    ids.add(String(request.headers['webhook-id']));
    kinds.set(body.event, ids);
    byExecution.set(body.execution_id, kinds);
  }
  return byExecution;
}

/**
 * Waits until every execution's events of these kinds arrived at least once; each under one webhook-id.
 * When some never arrive, `explain` (given the missing `<execution> <kind>` pairs) says what the service
 * knows of them, for the failure message: whether a delivery was recorded, its status and attempts.
 */
export async function expectEventsDelivered(
  receiver: Receiver,
  path: string,
  ids: string[],
  kinds: string[],
  timeoutMs = 120_000,
  explain?: (missing: string[]) => Promise<string>,
): Promise<void> {
  const missing = () => {
    const events = receivedEvents(receiver, path);
    return ids.flatMap((id) =>
      kinds.filter((kind) => !events.get(id)?.has(kind)).map((kind) => `${id} ${kind}`),
    );
  };
  try {
    await waitFor(async () => missing().length === 0, {
      timeoutMs,
      intervalMs: 500,
      what: () => `every event delivered (${missing().length} missing: ${missing().slice(0, 3).join(', ')})`,
    });
  } catch (error) {
    if (!explain) throw error;
    const why = await explain(missing()).catch((e: Error) => `(could not read the deliveries: ${e.message})`);
    throw new Error(`${(error as Error).message}\n${why}`);
  }
  for (const [execution, kinds] of receivedEvents(receiver, path)) {
    for (const [kind, webhookIds] of kinds)
      expect(webhookIds.size, `${execution} ${kind} arrived under ${[...webhookIds].join(', ')}`).to.equal(1);
  }
}

/** One line per scenario with its counts, for the run's log. */
export function reportScenario(name: string, counts: Record<string, unknown>): void {
  process.stdout.write(`      [${name}] ${JSON.stringify(counts)}\n`);
}

const FINAL = ['success', 'failed', 'canceled', 'terminated', 'timed_out'];

/**
 * Like waitAllFinal for many executions of one workflow: reads the executions list (100 a page) instead
 * of each history, so the check itself does not load the service it measures.
 */
export async function waitAllFinalListed(
  client: ApiClient,
  workflowId: string,
  ids: string[],
  timeoutMs = 600_000,
): Promise<Map<string, string>> {
  const wanted = new Set(ids);
  let statuses = new Map<string, string>();
  /** The last pass's status of every listed execution, final or not: a failure names those not done. */
  let listed = new Map<string, string>();
  await waitFor(
    async () => {
      const seen = new Map<string, string>();
      const all = new Map<string, string>();
      let cursor: string | null = null;
      do {
        const res = await client
          .get(`/v1/executions?workflow=${workflowId}&limit=100${cursor ? `&cursor=${cursor}` : ''}`)
          .timeout(30_000);
        if (res.status !== 200) return false;
        for (const item of res.body.data as { execution_id: string; status: string }[]) {
          if (!wanted.has(item.execution_id)) continue;
          all.set(item.execution_id, item.status);
          if (FINAL.includes(item.status)) seen.set(item.execution_id, item.status);
        }
        cursor = res.body.next_cursor as string | null;
      } while (cursor);
      statuses = seen;
      listed = all;
      return seen.size === wanted.size;
    },
    {
      timeoutMs,
      intervalMs: 2000,
      // A function: read when the wait gives up, so that it says how many had finished by then, and which not.
      what: () => {
        const notDone = ids
          .filter((id) => !statuses.has(id))
          .slice(0, 5)
          .map((id) => `${id}: ${listed.get(id) ?? 'not listed'}`);
        return `${ids.length} executions of ${workflowId} to finish (${statuses.size} done; not: ${notDone.join(', ')})`;
      },
    },
  );
  return statuses;
}
