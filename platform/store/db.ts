/**
 * One small interface over the two databases the service runs on: embedded PGlite (default, in
 * DATA_DIR) and a PostgreSQL server (DATABASE_URL). Stores take a `Queryable`, so the same SQL runs on both.
 *
 * Connection-level failures become AppError 503 `database_unavailable` here, once, so that no caller
 * can leak a driver error or hang on a dead server.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { databaseUnavailable, invalidRequest } from '../errors';
import { metrics } from '../observability/metrics';

export interface Queryable {
  query<Row = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<Row[]>;
}

export interface Database extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /** The embedded instance, when kind is 'pglite' (pglite-socket serves it to `npm run admin`). */
  readonly pglite?: PGlite;
  /** Runs `fn` in one transaction; rolls back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Runs a multi-statement SQL script (migrations). */
  execScript(sql: string): Promise<void>;
  /** Throws database_unavailable when the database cannot answer. */
  ping(): Promise<void>;
  /**
   * Receives NOTIFY payloads of a channel (see changes.ts). `onGap` is called when notices may be missed
   * from then on (the listening connection was lost), `onLive` when they arrive again (reconnected: the
   * ones sent meanwhile are lost). Resolves once listening, or once the first attempt failed (a gap,
   * retried in the background); the returned function stops.
   */
  listen(channel: string, handlers: ListenHandlers): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export interface ListenHandlers {
  onNotice(payload: string): void;
  onGap(): void;
  onLive(): void;
}

/** PostgreSQL SQLSTATE classes and driver messages that mean "the server is not there", not "your SQL is wrong". */
const UNAVAILABLE_SQLSTATE = /^(08|53|57P|58)/;
const UNAVAILABLE_NODE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);
const UNAVAILABLE_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended unexpectedly|Query read timeout|the database system is (starting up|shutting down)|Cannot use a pool after calling end/i;

export function isUnavailableError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (UNAVAILABLE_NODE_CODES.has(code) || UNAVAILABLE_SQLSTATE.test(code)))
    return true;
  if (error instanceof AggregateError) return error.errors.some(isUnavailableError);
  return typeof message === 'string' && UNAVAILABLE_MESSAGES.test(message);
}

/**
 * PostgreSQL cannot store U+0000 in text (SQLSTATE 22021) or jsonb (22P05): data holding one is the
 * client's mistake, a 400, not a server error.
 */
const NUL_SQLSTATES = new Set(['22021', '22P05']);

/** A statement's SQLSTATE (five characters): the database refused it. */
const SQLSTATE = /^[0-9A-Z]{5}$/;

function mapUnavailable(error: unknown): never {
  if (isUnavailableError(error)) {
    metrics.dbQueryErrors.inc({ kind: 'unavailable' });
    throw databaseUnavailable(error);
  }
  if (SQLSTATE.test(String((error as { code?: unknown } | null)?.code)))
    metrics.dbQueryErrors.inc({ kind: 'query' });
  if (NUL_SQLSTATES.has(String((error as { code?: unknown } | null)?.code))) {
    throw invalidRequest('Text must not contain the NUL character (U+0000).', [
      { path: '', message: 'contains U+0000' },
    ]);
  }
  throw error;
}

export interface OpenDatabaseOptions {
  /** A PostgreSQL connection string; undefined selects embedded PGlite in `dataDir`. */
  url: string | undefined;
  dataDir: string;
  /** Pool size for a PostgreSQL server. */
  maxConnections?: number;
  /**
   * PostgreSQL's statement_timeout on every pool connection (DATABASE_STATEMENT_TIMEOUT_MS): the server
   * cancels a statement running longer, so none holds a connection and its locks for ever. 0: none.
   * PGlite runs in this process and has no timer to cancel with; it takes no timeout.
   */
  statementTimeoutMs?: number;
}

/** DATABASE_STATEMENT_TIMEOUT_MS's default. */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 15_000;

export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  return options.url
    ? openPostgres(
        options.url,
        options.maxConnections ?? 10,
        options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS,
      )
    : openPglite(options.dataDir);
}

/** Where PGlite keeps its files inside DATA_DIR. */
export function pgliteDirectory(dataDir: string): string {
  return path.join(dataDir, 'pgdata');
}

/**
 * PGlite's buffer cache: PostgreSQL's default (128 MB) costs the process its size in memory from the
 * start, and the service's tables are small. 16 MB holds them.
 */
const PGLITE_START_PARAMS = [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'];

async function openPglite(dataDir: string): Promise<Database> {
  const directory = pgliteDirectory(dataDir);
  fs.mkdirSync(directory, { recursive: true });
  if (!fs.existsSync(path.join(directory, 'PG_VERSION'))) await initializeCluster(directory);
  const db = await PGlite.create(directory, { startParams: PGLITE_START_PARAMS });
  const run = async <Row>(q: Pick<PGlite, 'query'>, sql: string, params?: unknown[]): Promise<Row[]> => {
    try {
      return (await q.query<Row>(sql, params)).rows;
    } catch (error) {
      return mapUnavailable(error);
    }
  };
  return {
    kind: 'pglite',
    query: (sql, params) => run(db, sql, params),
    transaction: (fn) => db.transaction((tx) => fn({ query: (sql, params) => run(tx, sql, params) })),
    execScript: async (sql) => {
      await db.exec(sql);
    },
    ping: async () => {
      if (db.closed) throw databaseUnavailable(new Error('PGlite is closed'));
      await db.query('select 1');
    },
    // One process, one connection: nothing can be missed.
    listen: async (channel, handlers) => {
      const stop = await db.listen(channel, (payload) => handlers.onNotice(payload));
      return async () => {
        if (!db.closed) await stop();
      };
    },
    close: () => db.close(),
    pglite: db,
  };
}

/** A new cluster, created by a short-lived child process (pglite-init.ts says why). */
async function initializeCluster(directory: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    execFile(
      process.execPath,
      [path.join(__dirname, 'pglite-init.js'), directory],
      { timeout: 120_000 },
      (error, _stdout, stderr) =>
        error
          ? reject(new Error(`Creating the embedded database failed: ${stderr || error.message}`))
          : resolve(),
    );
  });
}

async function openPostgres(url: string, max: number, statementTimeoutMs: number): Promise<Database> {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    // A dead server must answer 503 quickly, never hang a request.
    connectionTimeoutMillis: 3000,
    // The server cancels a long statement (and frees its locks); the client stops waiting a little
    // later, for a server that no longer answers at all.
    ...(statementTimeoutMs > 0 && { statement_timeout: statementTimeoutMs }),
    query_timeout: (statementTimeoutMs > 0 ? statementTimeoutMs : DEFAULT_STATEMENT_TIMEOUT_MS) + 2_000,
    idleTimeoutMillis: 30000,
  });
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on('error', () => undefined);
  const untrack = metrics.trackPool(() => ({
    total: pool.totalCount,
    idle: pool.idleCount,
    waiting: pool.waitingCount,
  }));
  const db: Database = {
    kind: 'postgres',
    query: async <Row>(sql: string, params?: unknown[]) => {
      try {
        return (await pool.query(sql, params)).rows as Row[];
      } catch (error) {
        return mapUnavailable(error);
      }
    },
    transaction: async (fn) => {
      const client = await pool.connect().catch(mapUnavailable);
      try {
        await client.query('begin');
        const result = await fn({
          query: async <Row>(sql: string, params?: unknown[]) =>
            (await client.query(sql, params)).rows as Row[],
        });
        await client.query('commit');
        return result;
      } catch (error) {
        await client.query('rollback').catch(() => undefined);
        return mapUnavailable(error);
      } finally {
        client.release();
      }
    },
    execScript: async (sql) => {
      await db.query(sql);
    },
    ping: async () => {
      await db.query('select 1');
    },
    listen: (channel, handlers) => listenOnServer(url, channel, handlers),
    close: () => {
      untrack();
      return pool.end();
    },
  };
  await db.ping();
  return db;
}

/** How long to wait before listening again after the connection was lost: doubling up to the maximum. */
const RELISTEN_DELAYS_MS = { first: 500, max: 15_000 };

/**
 * LISTEN on a connection of its own (pool connections come and go), reconnecting when it is lost. Each
 * loss is a gap (notices sent meanwhile are lost), each reconnection `onLive`.
 */
async function listenOnServer(url: string, channel: string, handlers: ListenHandlers) {
  let stopped = false;
  let client: pg.Client | undefined;
  let delay = RELISTEN_DELAYS_MS.first;
  let timer: NodeJS.Timeout | undefined;
  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
    next.on('notification', (message) => {
      if (message.channel === channel && message.payload !== undefined) handlers.onNotice(message.payload);
    });
    const lost = () => {
      if (client !== next) return;
      client = undefined;
      next.removeAllListeners('error');
      next.on('error', () => undefined);
      void next.end().catch(() => undefined);
      if (stopped) return;
      handlers.onGap();
      retryLater();
    };
    next.on('error', lost);
    next.on('end', lost);
    await next.connect();
    await next.query(`listen ${pg.escapeIdentifier(channel)}`);
    client = next;
    delay = RELISTEN_DELAYS_MS.first;
  };
  const retry = () => {
    connect().then(
      () => handlers.onLive(),
      () => {
        if (!stopped) retryLater();
      },
    );
  };
  const retryLater = () => {
    timer = setTimeout(retry, delay);
    delay = Math.min(delay * 2, RELISTEN_DELAYS_MS.max);
  };
  try {
    await connect();
  } catch {
    // The database may come later: until then, a gap.
    handlers.onGap();
    retryLater();
  }
  return async () => {
    stopped = true;
    clearTimeout(timer);
    const current = client;
    client = undefined;
    await current?.end().catch(() => undefined);
  };
}
