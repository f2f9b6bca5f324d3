/**
 * Console sessions: what a browser holds instead of an API key. The token travels only in an HttpOnly
 * cookie; the table keeps its SHA-256. A session is read together with its key, so it always acts with the
 * key's current scopes and dies with it when the key is revoked.
 */
import { randomBase62, sha256Hex } from '../ids';
import type { Scope } from './api-keys';
import type { Queryable } from './db';

export interface ConsoleSession {
  id: string;
  csrf_token: string;
  created_at: Date;
  expires_at: Date;
  key_id: string;
  key_name: string;
  key_prefix: string;
  workspace_id: string;
  workspace_name: string;
  scopes: Scope[];
}

export interface CreatedConsoleSession {
  session: ConsoleSession;
  /** The cookie's value: given to the browser once, never stored. */
  token: string;
}

const newSessionId = (): string => `cs_${randomBase62(20)}`;
const newSessionToken = (): string => `cst_${randomBase62(43)}`;

const SELECT = `
  select s.id, s.csrf_token, s.created_at, s.expires_at,
         k.id as key_id, k.name as key_name, k.prefix as key_prefix, k.scopes,
         w.id as workspace_id, w.name as workspace_name
    from console_sessions s
    join api_keys k on k.id = s.key_id
    join workspaces w on w.id = k.workspace_id`;

/**
 * A session for an active key, valid for `ttlMs`. Deletes expired sessions on the way (they are few), and
 * keeps the key's workspace at `maxPerWorkspace` sessions: past it, its oldest other sessions end (signed
 * out), so that signing in again and again cannot grow the table without bound.
 */
export async function createConsoleSession(
  db: Queryable,
  input: { keyId: string; ttlMs: number; maxPerWorkspace: number },
): Promise<CreatedConsoleSession> {
  await db.query('delete from console_sessions where expires_at < now()');
  const token = newSessionToken();
  const id = newSessionId();
  await db.query(
    `insert into console_sessions (id, token_hash, key_id, csrf_token, expires_at)
     values ($1, $2, $3, $4, now() + make_interval(secs => $5))`,
    [id, sha256Hex(token), input.keyId, randomBase62(32), input.ttlMs / 1000],
  );
  await db.query(
    `delete from console_sessions where id in (
       select s.id from console_sessions s join api_keys k on k.id = s.key_id
        where k.workspace_id = (select workspace_id from api_keys where id = $1) and s.id <> $3
        order by s.created_at desc, s.id desc
       offset $2)`,
    [input.keyId, input.maxPerWorkspace - 1, id],
  );
  const [session] = await db.query<ConsoleSession>(`${SELECT} where s.id = $1`, [id]);
  return { session: session!, token };
}

/** The live session for a cookie's token: unknown, expired and revoked-key sessions are undefined. */
export async function findConsoleSession(db: Queryable, token: string): Promise<ConsoleSession | undefined> {
  const [session] = await db.query<ConsoleSession>(
    `${SELECT} where s.token_hash = $1 and s.expires_at > now() and k.revoked_at is null`,
    [sha256Hex(token)],
  );
  return session;
}

export async function deleteConsoleSession(db: Queryable, id: string): Promise<void> {
  await db.query('delete from console_sessions where id = $1', [id]);
}
