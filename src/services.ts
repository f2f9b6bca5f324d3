/** Everything request handlers need, built once per process by main.ts (or by a test). */
import type { ComputePool } from './compute/pool';
import type { SchemaValidation } from './compute/schemas';
import type { Config } from './config';
import type { AdmissionGate } from './executions/admission';
import type { ExecutionBacklog } from './executions/backpressure';
import type { Logger } from './logger';
import type { Tracing } from './observability/tracing';
import type { SecretCipher } from './secrets/cipher';
import type { CachedReads } from './store/cached-reads';
import type { Database } from './store/db';
import type { TemporalConnection } from './temporal/connection';

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
  /** Backpressure: refuses new executions while the workers are behind (executions/backpressure.ts). */
  backlog: ExecutionBacklog;
  /** With the worker in this process: paces new executions by how fast it takes them (admission.ts). */
  admission: AdmissionGate | undefined;
  /** What triggers read from the database, cached and kept fresh by change notices. */
  reads: CachedReads;
  /** Threads for work whose cost a workspace controls (src/compute/pool.ts). */
  compute: ComputePool;
  /** Workspaces' JSON Schemas, checked and validated within bounds (src/compute/schemas.ts). */
  schemas: SchemaValidation;
  /** Temporal UI's address for links to runs (TEMPORAL_UI_URL, or the embedded dev server's UI). */
  temporalUiUrl?: string | undefined;
  /** OpenTelemetry, when OTEL_EXPORTER_OTLP_ENDPOINT asks for it (observability/tracing.ts). */
  tracing?: Tracing | undefined;
}
