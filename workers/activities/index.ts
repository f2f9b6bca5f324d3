/**
 * Activities of the worker, built from their dependencies (createActivities(deps)), so tests and
 * processes wire the same code to different databases and settings. Keys are Temporal activity types.
 */
import { createControlEvaluator } from './control';
import { createChildPreparer } from './sub-workflow';
import { createPreviousChunkReader } from './previous-chunk';
import type { Client } from '@temporalio/client';
import type { ComputePool } from '../../platform/compute/pool';
import { SchemaValidator } from '../../platform/compute/schemas';
import type { CachedReads } from '../../platform/store/cached-reads';
import type { Database } from '../../platform/store/db';
import type { SecretCipher } from '../../platform/secrets/cipher';
import { readSecretValues } from '../../platform/store/secrets';
import type { LimitValue } from '../../core/workspace-limits';
import { createAiActivity, type AiProviderConfig } from './ai';
import { createAiBudget } from './ai-budget';
import { createEventActivities } from './events';
import { createHousekeepingActivities } from './housekeeping';
import { createHttpConnector } from './http-connector';
import { limitOutput } from './output-limit';
import { createSecretResolver } from './secrets';
import { WorkspaceStepSlots } from './step-slots';
import { createStepRunner } from './steps';
import { createEventWaits } from './event-waits';
import { createAdmissionActivities } from './admission';
import { dropBatchPlace, keepBatchPlace } from '../../platform/store/workspace-admissions';
import { createDebounceActivities } from './debounce';

export interface ActivityDeps {
  db: Database;
  /** Cached reads (the subscriptions a run's last steps ask about). */
  reads: CachedReads;
  /** Told when a batch of an execution's steps begins (the embedded process's admission: admission.ts). */
  onStepsBegin?: (executionId: string) => void;
  cipher: SecretCipher;
  /** Threads for workspaces' schemas and regular expressions (platform/compute/pool.ts). */
  compute: ComputePool;
  allowPrivateDestinations: boolean;
  /** Cap on a connector (or AI provider) response body. */
  maxResponseBytes?: number;
  /** Longest a connector's response body may pause between two chunks. */
  bodyIdleTimeoutMs?: number;
  ai: AiProviderConfig;
  /** AI tokens a workspace may use per UTC day unless set for it (WORKSPACE_MAX_AI_TOKENS_PER_DAY); null or absent: unlimited. */
  aiTokensPerDay?: LimitValue;
  /** Executions open at once per workspace unless set for it (WORKSPACE_MAX_OPEN_EXECUTIONS); null or absent: unlimited. */
  openExecutionsPerWorkspace?: LimitValue;
  /** Starts delivery workflows and waits on executions (events). */
  client: Client;
  /** Webhook retry delays in ms after the first attempt. */
  webhookRetryScheduleMs: number[];
  /** Days finished webhook deliveries are kept (the housekeeping job). */
  deliveryLogRetentionDays: number;
  /** Days Temporal keeps closed runs (TEMPORAL_RETENTION_DAYS; the housekeeping job). */
  executionRetentionDays: number;
  /** Days events are kept (EVENT_RETENTION_DAYS; the housekeeping job). */
  eventRetentionDays: number;
  /** Payloads are encrypted (docs/operations.md#encrypted-step-data). */
  encryptsPayloads?: boolean;
  /**
   * Connector and ai calls one workspace may run at once in the step local activity
   * (WORKER_LOCAL_CALL_SLOTS_PER_WORKSPACE, step-slots.ts); absent: no cap.
   */
  localCallSlotsPerWorkspace?: number;
  /** The worker's calls in all under which a workspace past its share may still take one (step-slots.ts). */
  localCallsBorrowable?: number;
}

export const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;
export const DEFAULT_BODY_IDLE_TIMEOUT_MS = 30_000;

export function createActivities(deps: ActivityDeps) {
  const resolveSecrets = createSecretResolver((workspaceId, names) =>
    readSecretValues(deps.db, deps.cipher, workspaceId, names),
  );
  const maxResponseBytes = deps.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const connector = createHttpConnector({
    policy: { allowPrivate: deps.allowPrivateDestinations },
    maxResponseBytes,
    bodyIdleTimeoutMs: deps.bodyIdleTimeoutMs ?? DEFAULT_BODY_IDLE_TIMEOUT_MS,
    resolveSecrets,
  });
  const schemas = new SchemaValidator(deps.compute);
  const eventWaits = createEventWaits({ db: deps.db, cipher: deps.cipher });
  const ai = createAiActivity({
    provider: deps.ai,
    resolveSecrets,
    maxResponseBytes,
    schemas,
    budget: createAiBudget(deps.db, deps.aiTokensPerDay ?? null),
  });
  const admission = createAdmissionActivities({
    db: deps.db,
    client: deps.client,
    compute: deps.compute,
    onStepsBegin: deps.onStepsBegin,
    reads: deps.reads,
    openExecutionsPerWorkspace: deps.openExecutionsPerWorkspace ?? null,
  });
  return {
    // Every step runs here first, as a local activity (see steps.ts).
    run_steps: createStepRunner({
      gates: admission,
      batchPlaces: {
        keep: (workspaceId, executionId) => keepBatchPlace(deps.db, workspaceId, executionId),
        drop: (workspaceId, executionId) => dropBatchPlace(deps.db, workspaceId, executionId),
      },
      connector,
      ai,
      compute: deps.compute,
      onBatchBegin: deps.onStepsBegin,
      encryptsPayloads: deps.encryptsPayloads,
      subscribedEventKinds: (workspaceId) => deps.reads.subscribedEventKinds(workspaceId),
      eventWaits,
      ...(deps.localCallSlotsPerWorkspace !== undefined && {
        slots: new WorkspaceStepSlots(deps.localCallSlotsPerWorkspace, deps.localCallsBorrowable),
      }),
    }),
    // Ends a wait_for_event's wait, woken or not (event-waits.ts).
    end_event_wait: eventWaits.end_event_wait,
    // What steers containers and the execution's output (control.ts).
    evaluate_control: createControlEvaluator({ compute: deps.compute }),
    // What a workflow step checks before it starts its child execution (sub-workflow.ts).
    prepare_child: createChildPreparer({
      compute: deps.compute,
      schemas,
      workflowVersion: (workspaceId, workflowId, version) =>
        deps.reads.workflowVersion(workspaceId, workflowId, version),
    }),
    // A retry's chunk of a large map: its result in the failed run (previous-chunk.ts).
    previous_chunk_result: createPreviousChunkReader(deps.client),
    // The attempts a connector or ai step has left after its first one failed: activities of their own,
    // whose outputs must fit in a Temporal payload (see output-limit.ts).
    connector_http: limitOutput(connector),
    ai: limitOutput(ai),
    ...createEventActivities({
      db: deps.db,
      subscribedEventKinds: (workspaceId) => deps.reads.subscribedEventKinds(workspaceId),
      cipher: deps.cipher,
      client: deps.client,
      policy: { allowPrivate: deps.allowPrivateDestinations },
      retryScheduleMs: deps.webhookRetryScheduleMs,
    }),
    // Flow control: a run's place among its key's open executions, and its workspace's (admission.ts).
    ...admission,
    // Flow control: a debounced run's wait for its key's quiet time (debounce.ts).
    ...createDebounceActivities({ db: deps.db }),
    ...createHousekeepingActivities({
      db: deps.db,
      deliveryLogRetentionDays: deps.deliveryLogRetentionDays,
      executionRetentionDays: deps.executionRetentionDays,
      eventRetentionDays: deps.eventRetentionDays,
    }),
  };
}

export type Activities = ReturnType<typeof createActivities>;
