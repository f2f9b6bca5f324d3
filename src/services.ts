/** Everything request handlers need, built once per process by main.ts (or by a test). */
import type { ComputePool } from '../platform/compute/pool';
import type { SchemaValidation } from '../platform/compute/schemas';
import type { Config } from '../platform/config';
import type { EventStoreQueue } from './events/store-queue';
import type { AdmissionGate } from './flow-control/admission';
import type { ExecutionBacklog } from './flow-control/backpressure';
import type { Logger } from '../platform/logger';
import type { Tracing } from '../platform/observability/tracing';
import type { SecretCipher } from '../platform/secrets/cipher';
import type { CachedReads } from '../platform/store/cached-reads';
import type { Database } from '../platform/store/db';
import type { TemporalConnection } from '../platform/temporal/connection';

export interface Services {
  config: Config;
  logger: Logger;
  db: Database;
  temporal: TemporalConnection;
  cipher: SecretCipher;
  /**
   * True when a worker polls the execution task queue through this process's own connection, so the
   * first workflow task can come back in the start response (eager start).
   */
  eagerStart: boolean;
  /** Backpressure: refuses new executions while the workers are behind (flow-control/backpressure.ts). */
  backlog: ExecutionBacklog;
  /** With the worker in this process: paces new executions by how fast it takes them (admission.ts). */
  admission: AdmissionGate | undefined;
  /** What triggers read from the database, cached and kept fresh by change notices. */
  reads: CachedReads;
  /** Threads for work whose cost a workspace controls (platform/compute/pool.ts). */
  compute: ComputePool;
  /** Workspaces' JSON Schemas, checked and validated within bounds (platform/compute/schemas.ts). */
  schemas: SchemaValidation;
  /** Stores the events of POST /v1/events, those of requests that arrive together in one statement. */
  eventStore: EventStoreQueue;
  /** Temporal UI's address for links to runs (TEMPORAL_UI_URL, or the embedded dev server's UI). */
  temporalUiUrl?: string | undefined;
  /**
   * The event dispatcher of this API process (src/events/dispatcher.ts): stored events are dispatched when
   * kicked, and by its sweep otherwise. Absent in a process that serves no API.
   */
  eventDispatch?: { kick(): void } | undefined;
  /** This process's bulk runner (src/bulk/runner.ts): told when an operation is created. */
  bulkRunner?: { kick(): void } | undefined;
  /** OpenTelemetry, when OTEL_EXPORTER_OTLP_ENDPOINT asks for it (platform/observability/tracing.ts). */
  tracing?: Tracing | undefined;
}
