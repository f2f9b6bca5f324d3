/**
 * The Switchyard API client without inbound-hook signing: the generated openapi-fetch client (`raw`, every
 * operation typed from the OpenAPI document) plus one method per operation that returns the body or throws
 * `SwitchyardError`, lists as async iterables, idempotent triggers, retries of 429/503, and waiting for an
 * execution to finish. It imports no Node built-in, so browsers load it too (`@switchyard/client/browser`);
 * `SwitchyardClient` (client.ts) adds `hooks`, which signs with node:crypto.
 */
import createClient, { type Client } from 'openapi-fetch';
import { ExecutionWaitTimeoutError, SwitchyardError } from './errors';
import { PageIterator, type Page } from './pagination';
import { randomUuid } from './random-id';
import { delay, retryingFetch, type RetryOptions } from './retry';
import type { components, operations, paths } from './generated/schema';

export type Schemas = components['schemas'];
export type WorkflowDefinition = Schemas['WorkflowDefinition'];
export type Workflow = Schemas['Workflow'];
export type WorkflowListItem = Schemas['WorkflowListItem'];
export type Execution = Schemas['Execution'];
export type ExecutionSummary = Schemas['ExecutionSummary'];
export type ExecutionStatus = Execution['status'];
export type Step = Schemas['Step'];
export type StepRun = Schemas['StepRun'];
export type StepRunStatus = StepRun['status'];
export type Accepted = Schemas['Accepted'];
export type RetryAccepted = Schemas['RetryAccepted'];
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
export type CreatedWebhookEndpoint = Schemas['CreatedWebhookEndpoint'];
export type WebhookDelivery = Schemas['WebhookDelivery'];
export type Secret = Schemas['Secret'];
export type ApiKey = Schemas['ApiKey'];
export type CreatedApiKey = Schemas['CreatedApiKey'];
export type WorkflowVersion = Schemas['WorkflowVersion'];
export type WorkflowQueue = Schemas['WorkflowQueue'];
export type Workspace = Schemas['Workspace'];
export type Event = Schemas['Event'];
export type EventInput = Schemas['EventInput'];
export type EventsAccepted = Schemas['EventsAccepted'];
export type Schedule = Schemas['Schedule'];
export type BackfillAccepted = Schemas['BackfillAccepted'];
export type BulkOperation = Schemas['BulkOperation'];
export type BulkOperationRequest = Schemas['BulkOperationRequest'];
export type BulkOperationAccepted = Schemas['BulkOperationAccepted'];
export type BulkOperationDryRun = Schemas['BulkOperationDryRun'];

type QueryOf<K extends keyof operations> = operations[K]['parameters'] extends { query?: infer Q }
  ? NonNullable<Q>
  : never;
type BodyOf<K extends keyof operations> = operations[K] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;
/** A list's filters, without the cursor (the iterator keeps it). */
type ListQuery<K extends keyof operations> = Omit<QueryOf<K>, 'cursor'>;

/**
 * Every status of an execution once, as keys in the order the API documents them (docs/api.md#executions).
 * Typed by the OpenAPI document's generated schema: a status the document has and this lacks, or the
 * reverse, fails to compile.
 */
const EXECUTION_STATUS_KEYS: Record<ExecutionStatus, true> = {
  queued: true,
  running: true,
  waiting: true,
  success: true,
  failed: true,
  canceled: true,
  terminated: true,
  timed_out: true,
};

/** Every status of an execution, the open ones (queued, running, waiting) first, then the final ones. */
export const EXECUTION_STATUSES: readonly ExecutionStatus[] = Object.keys(
  EXECUTION_STATUS_KEYS,
) as ExecutionStatus[];

/** Statuses an execution does not leave. */
export const FINAL_EXECUTION_STATUSES: readonly ExecutionStatus[] = [
  'success',
  'failed',
  'canceled',
  'terminated',
  'timed_out',
];

export interface SwitchyardClientOptions {
  /** Where the service listens, without `/v1`: `http://127.0.0.1:3000`. */
  baseUrl: string;
  /** An API key (`sk_...`), sent as `Authorization: Bearer`. Optional for inbound hooks only. */
  apiKey?: string;
  /** Retries of 429 and 503 answers (`{ maxRetries: 0 }` turns them off). */
  retry?: RetryOptions;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  /** A fetch of your own (proxies, tests, a browser's credentials); defaults to the global fetch. */
  fetch?: (request: Request) => Promise<Response>;
}

export interface TriggerOptions {
  /**
   * The same key (per workflow, for 24 h) answers the same `execution_id` and starts nothing new. When
   * omitted the client sends a random one, so its own retries never start a second run.
   */
  idempotencyKey?: string;
  /** Run this version instead of the latest. */
  version?: number;
}

export interface WaitOptions {
  /**
   * Give up (throwing `ExecutionWaitTimeoutError`) after this long.
   * @default 60000
   */
  timeoutMs?: number;
  /**
   * Time between two reads of the execution.
   * @default 500
   */
  intervalMs?: number;
  /**
   * Statuses to stop at; add `'waiting'` to stop at a pending approval.
   * @default FINAL_EXECUTION_STATUSES
   */
  until?: readonly ExecutionStatus[];
  signal?: AbortSignal;
}

const rfc3339 = (time: Date | string): string => (typeof time === 'string' ? time : time.toISOString());

/** Throws the answer's `SwitchyardError` unless it is a 2xx; returns the body. */
export async function unwrap<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw SwitchyardError.fromResponse(response, error);
  return data as T;
}

export class SwitchyardApiClient {
  /** The generated client, for anything the methods below do not cover: `client.raw.GET('/v1/...', ...)`. */
  readonly raw: Client<paths>;

  constructor(options: SwitchyardClientOptions) {
    const fetchImpl = options.fetch ?? ((request: Request) => globalThis.fetch(request));
    this.raw = createClient<paths>({
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      headers: {
        ...options.headers,
        ...(options.apiKey ? { Authorization: `Bearer ${options.apiKey}` } : {}),
      },
      fetch: retryingFetch(fetchImpl, options.retry),
    });
  }

  readonly workflows = {
    list: (query: ListQuery<'listWorkflows'> = {}): PageIterator<WorkflowListItem> =>
      new PageIterator((cursor) =>
        unwrap(this.raw.GET('/v1/workflows', { params: { query: { ...query, cursor } } })),
      ),
    /** `?version=N` reads an older version. */
    get: (id: string, options: { version?: number } = {}): Promise<Workflow> =>
      unwrap(this.raw.GET('/v1/workflows/{id}', { params: { path: { id }, query: options } })),
    /** Every version of a workflow, newest first (`get` lists only the 20 newest). */
    versions: (id: string, query: ListQuery<'listWorkflowVersions'> = {}): PageIterator<WorkflowVersion> =>
      new PageIterator((cursor) =>
        unwrap(
          this.raw.GET('/v1/workflows/{id}/versions', {
            params: { path: { id }, query: { ...query, cursor } },
          }),
        ),
      ),
    /** Executions queued and open under the workflow's `concurrency`, in all and for its busiest keys. */
    queue: (id: string): Promise<WorkflowQueue> =>
      unwrap(this.raw.GET('/v1/workflows/{id}/queue', { params: { path: { id } } })),
    /** Version 1; a webhook trigger's `hook_secret` is in this answer only. */
    create: (definition: WorkflowDefinition): Promise<Workflow> =>
      unwrap(this.raw.POST('/v1/workflows', { body: definition })),
    /** Saves a new version. */
    update: (id: string, definition: WorkflowDefinition): Promise<Workflow> =>
      unwrap(this.raw.PUT('/v1/workflows/{id}', { params: { path: { id } }, body: definition })),
    delete: (id: string): Promise<void> =>
      unwrap(this.raw.DELETE('/v1/workflows/{id}', { params: { path: { id } } })),
    trigger: (
      id: string,
      input: Record<string, unknown> = {},
      options: TriggerOptions = {},
    ): Promise<Accepted> =>
      unwrap(
        this.raw.POST('/v1/workflows/{id}/trigger', {
          params: {
            path: { id },
            query: options.version !== undefined ? { version: options.version } : {},
            header: { 'Idempotency-Key': options.idempotencyKey ?? randomUuid() },
          },
          body: input,
        }),
      ),
    rotateHookSecret: (id: string): Promise<Schemas['HookSecret']> =>
      unwrap(this.raw.POST('/v1/workflows/{id}/hook-secret', { params: { path: { id } } })),
    /** The schedule of a workflow with a schedule trigger (404 `schedule_not_found` otherwise). */
    schedule: {
      /** Its spec, whether it is paused, its next five times and its recent runs. */
      get: (id: string): Promise<Schedule> =>
        unwrap(this.raw.GET('/v1/workflows/{id}/schedule', { params: { path: { id } } })),
      /** No run starts at its times until `resume`; the pause lasts across new versions. */
      pause: (id: string, body: BodyOf<'pauseSchedule'> = {}): Promise<Schedule> =>
        unwrap(this.raw.POST('/v1/workflows/{id}/schedule/pause', { params: { path: { id } }, body })),
      resume: (id: string): Promise<Schedule> =>
        unwrap(this.raw.POST('/v1/workflows/{id}/schedule/resume', { params: { path: { id } } })),
      /** One run now, with the schedule's input, paused or not. */
      run: (id: string): Promise<Accepted> =>
        unwrap(this.raw.POST('/v1/workflows/{id}/schedule/run', { params: { path: { id } } })),
      /** Starts the runs the schedule would have started in [start, end), a past window; at most 1,000. */
      backfill: (
        id: string,
        window: { start: Date | string; end: Date | string },
      ): Promise<BackfillAccepted> =>
        unwrap(
          this.raw.POST('/v1/workflows/{id}/schedule/backfill', {
            params: { path: { id } },
            body: { start: rfc3339(window.start), end: rfc3339(window.end) },
          }),
        ),
    },
  };

  readonly executions = {
    list: (query: ListQuery<'listExecutions'> = {}): PageIterator<ExecutionSummary> =>
      new PageIterator((cursor) =>
        unwrap(this.raw.GET('/v1/executions', { params: { query: { ...query, cursor } } })),
      ),
    get: (id: string): Promise<Execution> =>
      unwrap(this.raw.GET('/v1/executions/{id}', { params: { path: { id } } })),
    /**
     * Every run of a container step (parallel, map, switch, loop) in order, where `get` shows the first 20;
     * `status` keeps those of one status.
     */
    runs: (id: string, stepId: string, query: ListQuery<'listStepRuns'> = {}): PageIterator<StepRun> =>
      new PageIterator((cursor) =>
        unwrap(
          this.raw.GET('/v1/executions/{id}/steps/{step_id}/runs', {
            params: { path: { id, step_id: stepId }, query: { ...query, cursor } },
          }),
        ),
      ),
    /** Starts again at the failed step; `input` corrects the input of that step and later ones. */
    retry: (id: string, body: BodyOf<'retryExecution'> = {}): Promise<RetryAccepted> =>
      unwrap(this.raw.POST('/v1/executions/{id}/retry', { params: { path: { id } }, body })),
    cancel: (id: string): Promise<Accepted> =>
      unwrap(this.raw.POST('/v1/executions/{id}/cancel', { params: { path: { id } } })),
    approve: (id: string, stepId: string, body: BodyOf<'approveStep'> = {}): Promise<Step> =>
      unwrap(
        this.raw.POST('/v1/executions/{id}/steps/{step_id}/approve', {
          params: { path: { id, step_id: stepId } },
          body,
        }),
      ),
    reject: (id: string, stepId: string, body: BodyOf<'rejectStep'> = {}): Promise<Step> =>
      unwrap(
        this.raw.POST('/v1/executions/{id}/steps/{step_id}/reject', {
          params: { path: { id, step_id: stepId } },
          body,
        }),
      ),
    wait: (id: string, options?: WaitOptions): Promise<Execution> => this.waitForExecution(id, options),
  };

  readonly webhooks = {
    /** The `secret` (to verify deliveries with) is in this answer only. */
    create: (body: BodyOf<'createWebhook'>): Promise<CreatedWebhookEndpoint> =>
      unwrap(this.raw.POST('/v1/webhooks', { body })),
    list: (query: ListQuery<'listWebhooks'> = {}): PageIterator<WebhookEndpoint> =>
      new PageIterator((cursor) =>
        unwrap(this.raw.GET('/v1/webhooks', { params: { query: { ...query, cursor } } })),
      ),
    get: (id: string): Promise<WebhookEndpoint> =>
      unwrap(this.raw.GET('/v1/webhooks/{id}', { params: { path: { id } } })),
    delete: (id: string): Promise<void> =>
      unwrap(this.raw.DELETE('/v1/webhooks/{id}', { params: { path: { id } } })),
    /** Newest first. */
    deliveries: (id: string, query: ListQuery<'listWebhookDeliveries'> = {}): PageIterator<WebhookDelivery> =>
      new PageIterator((cursor) =>
        unwrap(
          this.raw.GET('/v1/webhooks/{id}/deliveries', {
            params: { path: { id }, query: { ...query, cursor } },
          }),
        ),
      ),
    redeliver: (id: string, deliveryId: string) =>
      unwrap(
        this.raw.POST('/v1/webhooks/{id}/deliveries/{delivery_id}/retry', {
          params: { path: { id, delivery_id: deliveryId } },
        }),
      ),
  };

  readonly secrets = {
    /** Names and dates only: values never leave the service. */
    list: (query: ListQuery<'listSecrets'> = {}): PageIterator<Secret> =>
      new PageIterator((cursor) =>
        unwrap(this.raw.GET('/v1/secrets', { params: { query: { ...query, cursor } } })),
      ),
    put: (name: string, value: string): Promise<void> =>
      unwrap(this.raw.PUT('/v1/secrets/{name}', { params: { path: { name } }, body: { value } })),
    delete: (name: string): Promise<void> =>
      unwrap(this.raw.DELETE('/v1/secrets/{name}', { params: { path: { name } } })),
  };

  readonly apiKeys = {
    /** The `key` is in this answer only. */
    create: (body: BodyOf<'createApiKey'>): Promise<CreatedApiKey> =>
      unwrap(this.raw.POST('/v1/api-keys', { body })),
    list: (query: ListQuery<'listApiKeys'> = {}): PageIterator<ApiKey> =>
      new PageIterator((cursor) =>
        unwrap(this.raw.GET('/v1/api-keys', { params: { query: { ...query, cursor } } })),
      ),
    revoke: (id: string): Promise<void> =>
      unwrap(this.raw.DELETE('/v1/api-keys/{id}', { params: { path: { id } } })),
  };

  readonly events = {
    /**
     * Sends one event or a batch of up to 100; answers their ids in order. An event without an `id` gets a
     * random one (`evt_` + 32 hex digits) from the client, so that its own retries act on it once.
     */
    send: (events: EventInput | readonly EventInput[]): Promise<EventsAccepted> => {
      const withId = (event: EventInput): EventInput => ({
        ...event,
        id: event.id ?? `evt_${randomUuid().replaceAll('-', '')}`,
      });
      const body = Array.isArray(events)
        ? (events as readonly EventInput[]).map(withId)
        : withId(events as EventInput);
      return unwrap(this.raw.POST('/v1/events', { body }));
    },
    /** Newest first; `name` keeps the events of one name. */
    list: (query: ListQuery<'listEvents'> = {}): PageIterator<Event> =>
      new PageIterator((cursor) =>
        unwrap(this.raw.GET('/v1/events', { params: { query: { ...query, cursor } } })),
      ),
    /** The event with the executions it started and woke, and why a trigger refused its data. */
    get: (id: string): Promise<Event> =>
      unwrap(this.raw.GET('/v1/events/{id}', { params: { path: { id } } })),
  };

  readonly bulkOperations = {
    /**
     * Cancels, retries or reruns the executions `filter` matches, in the background; with `dry_run: true`,
     * only counts them (BulkOperationDryRun) and changes nothing.
     */
    create: (request: BulkOperationRequest): Promise<BulkOperationAccepted | BulkOperationDryRun> =>
      unwrap(this.raw.POST('/v1/bulk-operations', { body: request })),
    /** Newest first. */
    list: (query: ListQuery<'listBulkOperations'> = {}): PageIterator<BulkOperation> =>
      new PageIterator((cursor) =>
        unwrap(this.raw.GET('/v1/bulk-operations', { params: { query: { ...query, cursor } } })),
      ),
    /** Its progress: matched, succeeded, failed, skipped, the first errors. */
    get: (id: string): Promise<BulkOperation> =>
      unwrap(this.raw.GET('/v1/bulk-operations/{id}', { params: { path: { id } } })),
    /** Stops it: what it did stays done, the rest is left alone. */
    cancel: (id: string): Promise<BulkOperation> =>
      unwrap(this.raw.POST('/v1/bulk-operations/{id}/cancel', { params: { path: { id } } })),
  };

  readonly workspace = {
    /** The caller's workspace: its limits (null: unlimited) and what it uses of them. */
    get: (): Promise<Workspace> => unwrap(this.raw.GET('/v1/workspace')),
  };

  /**
   * Reads the execution until its status is final (or one of `until`), and returns it with its steps.
   * Throws `ExecutionWaitTimeoutError` after `timeoutMs`; the execution itself goes on.
   */
  async waitForExecution(id: string, options: WaitOptions = {}): Promise<Execution> {
    const timeoutMs = options.timeoutMs ?? 60_000;
    const intervalMs = options.intervalMs ?? 500;
    const until = options.until ?? FINAL_EXECUTION_STATUSES;
    const deadline = Date.now() + timeoutMs;
    let last: Execution | undefined;
    for (;;) {
      options.signal?.throwIfAborted();
      last = await this.executions.get(id);
      if (until.includes(last.status)) return last;
      const left = deadline - Date.now();
      if (left <= 0) throw new ExecutionWaitTimeoutError(id, last.status, timeoutMs);
      await delay(Math.min(intervalMs, left), options.signal);
    }
  }
}

export type { Page };
