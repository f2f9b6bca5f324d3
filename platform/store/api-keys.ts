/** API keys: only a SHA-256 of each key is stored; the key itself is returned once, at creation. */
import { newApiKey, newApiKeyId, sha256Hex } from '../ids';
import type { Queryable } from './db';
import { pageByCreation, type PageRequest } from './keyset-pages';

export const SCOPES = ['read', 'write', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

export interface ApiKeyRecord {
  id: string;
  workspace_id: string;
  name: string;
  scopes: Scope[];
  prefix: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

const COLUMNS = 'id, workspace_id, name, scopes, prefix, created_at, last_used_at, revoked_at';

/** How many leading characters of a key are kept for display ("sk_Ab12Cd"). */
const PREFIX_LENGTH = 9;

export interface CreatedApiKey {
  record: ApiKeyRecord;
  /** The key itself: shown to the caller once, never stored. */
  key: string;
}

export async function createApiKey(
  db: Queryable,
  input: { workspaceId: string; name: string; scopes: Scope[]; key?: string },
): Promise<CreatedApiKey> {
  const key = input.key ?? newApiKey();
  const [record] = await db.query<ApiKeyRecord>(
    `insert into api_keys (id, workspace_id, name, scopes, prefix, key_hash)
     values ($1, $2, $3, $4, $5, $6) returning ${COLUMNS}`,
    [newApiKeyId(), input.workspaceId, input.name, input.scopes, key.slice(0, PREFIX_LENGTH), sha256Hex(key)],
  );
  return { record: record!, key };
}

/** The key record for a presented key, revoked or not; undefined when unknown. */
export async function findApiKeyByKey(db: Queryable, key: string): Promise<ApiKeyRecord | undefined> {
  const [row] = await db.query<ApiKeyRecord>(`select ${COLUMNS} from api_keys where key_hash = $1`, [
    sha256Hex(key),
  ]);
  return row;
}

/** The key records of several presented keys at once (revoked or not), by key; unknown keys are absent. */
export async function findApiKeysByKeys(
  db: Queryable,
  keys: readonly string[],
): Promise<Map<string, ApiKeyRecord>> {
  const byHash = new Map(keys.map((key) => [sha256Hex(key), key]));
  const rows = await db.query<ApiKeyRecord & { key_hash: string }>(
    `select ${COLUMNS}, key_hash from api_keys where key_hash = any($1::text[])`,
    [[...byHash.keys()]],
  );
  return new Map(rows.map(({ key_hash, ...record }) => [byHash.get(key_hash)!, record]));
}

export async function keyHashExists(db: Queryable, key: string): Promise<boolean> {
  const rows = await db.query('select 1 from api_keys where key_hash = $1', [sha256Hex(key)]);
  return rows.length > 0;
}

/** The workspace's keys, oldest first. */
export function listApiKeys(db: Queryable, workspaceId: string, page: PageRequest): Promise<ApiKeyRecord[]> {
  return pageByCreation(
    db,
    { table: 'api_keys', columns: COLUMNS, scope: 'workspace_id' },
    workspaceId,
    page,
  );
}

/** Revokes a key of the workspace; false when there is no such key there. Revoking twice is harmless. */
export async function revokeApiKey(db: Queryable, workspaceId: string, id: string): Promise<boolean> {
  const rows = await db.query(
    'update api_keys set revoked_at = coalesce(revoked_at, now()) where workspace_id = $1 and id = $2 returning id',
    [workspaceId, id],
  );
  return rows.length > 0;
}

export async function touchApiKey(db: Queryable, id: string): Promise<void> {
  await db.query('update api_keys set last_used_at = now() where id = $1', [id]);
}
