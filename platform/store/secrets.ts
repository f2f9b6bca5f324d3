/** Workspace secrets: names and sealed values (see secrets/cipher.ts); values never leave in listings. */
import type { SecretCipher } from '../secrets/cipher';
import type { Queryable } from './db';
import { pageByKey, type PageRequest } from './keyset-pages';

export const SECRET_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

export interface SecretListing {
  name: string;
  created_at: Date;
  updated_at: Date;
}

const sealContext = (workspaceId: string, name: string): string => `${workspaceId}/${name}`;

/** Creates or replaces a secret; says which (`xmax = 0`: the row is a new one, not an updated one). */
export async function putSecret(
  db: Queryable,
  cipher: SecretCipher,
  workspaceId: string,
  name: string,
  value: string,
): Promise<'created' | 'replaced'> {
  const [row] = await db.query<{ created: boolean }>(
    `insert into secrets (workspace_id, name, sealed) values ($1, $2, $3)
     on conflict (workspace_id, name) do update set sealed = excluded.sealed, updated_at = now()
     returning (xmax = 0) as created`,
    [workspaceId, name, cipher.seal(value, sealContext(workspaceId, name))],
  );
  return row!.created ? 'created' : 'replaced';
}

/** The workspace's secrets (names and dates only), by name. */
export function listSecrets(db: Queryable, workspaceId: string, page: PageRequest): Promise<SecretListing[]> {
  return pageByKey(
    db,
    'select name, created_at, updated_at from secrets where workspace_id = $1',
    [workspaceId],
    { key: 'name', type: 'text' },
    page,
  );
}

export async function deleteSecret(db: Queryable, workspaceId: string, name: string): Promise<boolean> {
  const rows = await db.query('delete from secrets where workspace_id = $1 and name = $2 returning name', [
    workspaceId,
    name,
  ]);
  return rows.length > 0;
}

/** The plaintext values of the named secrets that exist (missing names are absent from the result). */
export async function readSecretValues(
  db: Queryable,
  cipher: SecretCipher,
  workspaceId: string,
  names: string[],
): Promise<Record<string, string>> {
  if (names.length === 0) return {};
  const rows = await db.query<{ name: string; sealed: string }>(
    'select name, sealed from secrets where workspace_id = $1 and name = any($2::text[])',
    [workspaceId, names],
  );
  return Object.fromEntries(
    rows.map((row) => [row.name, cipher.open(row.sealed, sealContext(workspaceId, row.name))]),
  );
}
