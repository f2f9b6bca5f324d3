/** Everything request handlers need, built once per process by main.ts (or by a test). */
import type { Config } from './config';
import type { Logger } from './logger';
import type { SecretCipher } from './secrets/cipher';
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
}
