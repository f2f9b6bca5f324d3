/** Workspaces: the tenant boundary. Every other table hangs off a workspace id. */
import type { Queryable } from './db';

export interface Workspace {
  id: string;
  name: string;
  created_at: Date;
}

/** The workspace BOOTSTRAP_API_KEY and the demo workflow live in. */
export const DEFAULT_WORKSPACE_ID = 'default';

export async function createWorkspace(db: Queryable, id: string, name: string): Promise<Workspace> {
  const [row] = await db.query<Workspace>('insert into workspaces (id, name) values ($1, $2) returning *', [
    id,
    name,
  ]);
  return row!;
}

/** Creates the workspace when missing; returns true when it was created now. */
export async function ensureWorkspace(db: Queryable, id: string, name: string): Promise<boolean> {
  const rows = await db.query(
    'insert into workspaces (id, name) values ($1, $2) on conflict (id) do nothing returning id',
    [id, name],
  );
  return rows.length > 0;
}

export async function getWorkspace(db: Queryable, id: string): Promise<Workspace | undefined> {
  const [row] = await db.query<Workspace>('select * from workspaces where id = $1', [id]);
  return row;
}

export async function listWorkspaces(db: Queryable): Promise<Workspace[]> {
  return db.query<Workspace>('select * from workspaces order by created_at, id');
}
