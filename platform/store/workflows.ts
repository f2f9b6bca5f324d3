/**
 * Workflows and their immutable versions (docs/definitions.md#versions). Every save is a new version: 1, 2,
 * 3, ...
 */
import type { Definition } from '../../core/definitions/schema';
import type { LimitValue } from '../../core/workspace-limits';
import { announceChange } from './changes';
import type { Database, Queryable } from './db';
import { pageByKey, type PageRequest } from './keyset-pages';
import { checkCountLimit, lockCountLimit, type CountLimit } from './workspace-limits';

export interface WorkflowVersionRecord {
  workflow_id: string;
  version: number;
  definition: Definition;
  /** When this version was saved. */
  version_created_at: Date;
  /** When the workflow was first created, and last changed. */
  created_at: Date;
  updated_at: Date;
  latest_version: number;
}

export interface WorkflowListing {
  id: string;
  name: string | null;
  description: string | null;
  trigger_type: string;
  version: number;
  created_at: Date;
  updated_at: Date;
}

const isUniqueViolation = (error: unknown): boolean => (error as { code?: string }).code === '23505';

/**
 * Work that must succeed together with a save (inside its transaction): if it throws, the version is
 * not saved. Its result travels back to the caller.
 */
export type AfterSave<T> = (tx: Queryable, record: WorkflowVersionRecord) => Promise<T>;

export interface SavedWorkflow<T> {
  record: WorkflowVersionRecord;
  extra: T;
}

/**
 * Creates version 1; returns undefined when the id is taken in the workspace. Throws 409 limit_exceeded
 * when the workspace already has `maxWorkflows` (null: unlimited; see workspace-limits.ts).
 */
export async function createWorkflow<T>(
  db: Database,
  workspaceId: string,
  definition: Definition,
  maxWorkflows: LimitValue,
  afterSave: AfterSave<T>,
): Promise<SavedWorkflow<T> | undefined> {
  const workflowLimit: CountLimit = { workspaceId, name: 'workflows', max: maxWorkflows };
  try {
    return await db.transaction(async (tx) => {
      await lockCountLimit(tx, workflowLimit);
      await tx.query('insert into workflows (workspace_id, id, latest_version) values ($1, $2, 1)', [
        workspaceId,
        definition.id,
      ]);
      await checkCountLimit(tx, workflowLimit);
      await insertVersion(tx, workspaceId, definition.id, 1, definition);
      const record = (await getWorkflowVersion(tx, workspaceId, definition.id))!;
      await announceChange(tx, 'workflows');
      return { record, extra: await afterSave(tx, record) };
    });
  } catch (error) {
    if (isUniqueViolation(error)) return undefined;
    throw error;
  }
}

/** Saves the next version; returns undefined when there is no such workflow. */
export async function saveWorkflowVersion<T>(
  db: Database,
  workspaceId: string,
  definition: Definition,
  afterSave: AfterSave<T>,
): Promise<SavedWorkflow<T> | undefined> {
  return db.transaction(async (tx) => {
    // The row lock serializes concurrent saves: each gets its own version number.
    const [row] = await tx.query<{ latest_version: number }>(
      'update workflows set latest_version = latest_version + 1, updated_at = now() where workspace_id = $1 and id = $2 returning latest_version',
      [workspaceId, definition.id],
    );
    if (!row) return undefined;
    await insertVersion(tx, workspaceId, definition.id, row.latest_version, definition);
    const record = (await getWorkflowVersion(tx, workspaceId, definition.id))!;
    await announceChange(tx, 'workflows');
    return { record, extra: await afterSave(tx, record) };
  });
}

/**
 * Undoes a save whose side effects failed (its schedule): version 1 takes the workflow with it, a later
 * version gives way to the one before. Nothing happens when another save came after it meanwhile (that
 * save's own schedule stands).
 */
export async function revertWorkflowVersion(
  db: Database,
  workspaceId: string,
  workflowId: string,
  version: number,
): Promise<void> {
  await db.transaction(async (tx) => {
    const [row] = await tx.query<{ latest_version: number }>(
      'select latest_version from workflows where workspace_id = $1 and id = $2 for update',
      [workspaceId, workflowId],
    );
    if (row?.latest_version !== version) return;
    if (version === 1) {
      await tx.query('delete from workflows where workspace_id = $1 and id = $2', [workspaceId, workflowId]);
    } else {
      await tx.query(
        'delete from workflow_versions where workspace_id = $1 and workflow_id = $2 and version = $3',
        [workspaceId, workflowId, version],
      );
      await tx.query(
        'update workflows set latest_version = $3, updated_at = now() where workspace_id = $1 and id = $2',
        [workspaceId, workflowId, version - 1],
      );
    }
    await announceChange(tx, 'workflows');
  });
}

async function insertVersion(
  tx: Queryable,
  workspaceId: string,
  workflowId: string,
  version: number,
  definition: Definition,
): Promise<void> {
  await tx.query(
    'insert into workflow_versions (workspace_id, workflow_id, version, definition) values ($1, $2, $3, $4::jsonb)',
    [workspaceId, workflowId, version, JSON.stringify(definition)],
  );
}

/** A version of a workflow (the latest when `version` is undefined). */
export async function getWorkflowVersion(
  db: Queryable,
  workspaceId: string,
  workflowId: string,
  version?: number,
): Promise<WorkflowVersionRecord | undefined> {
  const [row] = await db.query<WorkflowVersionRecord>(
    `select w.id as workflow_id, v.version, v.definition, v.created_at as version_created_at,
            w.created_at, w.updated_at, w.latest_version
       from workflows w
       join workflow_versions v on v.workspace_id = w.workspace_id and v.workflow_id = w.id
      where w.workspace_id = $1 and w.id = $2 and v.version = coalesce($3::int, w.latest_version)`,
    [workspaceId, workflowId, version ?? null],
  );
  return row;
}

export async function workflowExists(
  db: Queryable,
  workspaceId: string,
  workflowId: string,
): Promise<boolean> {
  const rows = await db.query('select 1 from workflows where workspace_id = $1 and id = $2', [
    workspaceId,
    workflowId,
  ]);
  return rows.length > 0;
}

/** A page of a workflow's versions, newest first: at most `limit`, older than `after` when given. */
export function listWorkflowVersions(
  db: Queryable,
  workspaceId: string,
  workflowId: string,
  page: PageRequest<number>,
): Promise<{ version: number; created_at: Date }[]> {
  return pageByKey(
    db,
    'select version, created_at from workflow_versions where workspace_id = $1 and workflow_id = $2',
    [workspaceId, workflowId],
    { key: 'version', type: 'int', descending: true },
    page,
  );
}

/** Workflows of a workspace by id, with their latest version's name, description and trigger type. */
export function listWorkflows(
  db: Queryable,
  workspaceId: string,
  page: PageRequest,
): Promise<WorkflowListing[]> {
  return pageByKey(
    db,
    `select w.id, v.definition->>'name' as name, v.definition->>'description' as description,
            coalesce(v.definition->'trigger'->>'type', 'api') as trigger_type,
            w.latest_version as version, w.created_at, w.updated_at
       from workflows w
       join workflow_versions v on v.workspace_id = w.workspace_id and v.workflow_id = w.id and v.version = w.latest_version
      where w.workspace_id = $1`,
    [workspaceId],
    { key: 'w.id', type: 'text' },
    page,
  );
}

/**
 * The workflows of a workspace whose latest version has an event trigger for `eventName`
 * (docs/events.md#event-triggers), by id, each with that version.
 */
export function workflowsTriggeredBy(
  db: Queryable,
  workspaceId: string,
  eventName: string,
): Promise<Pick<WorkflowVersionRecord, 'workflow_id' | 'version' | 'definition'>[]> {
  return db.query(
    `select v.workflow_id, v.version, v.definition
       from workflow_versions v
       join workflows w on w.workspace_id = v.workspace_id and w.id = v.workflow_id and w.latest_version = v.version
      where v.workspace_id = $1 and v.definition #>> '{trigger,type}' = 'event'
        and v.definition #>> '{trigger,event}' = $2
      order by v.workflow_id`,
    [workspaceId, eventName],
  );
}

/**
 * Deletes a workflow and its versions; running executions go on (they carry their definition).
 * `beforeCommit` runs inside the transaction once the row is gone (it throws to keep the workflow).
 */
export async function deleteWorkflow(
  db: Database,
  workspaceId: string,
  workflowId: string,
  beforeCommit: (tx: Queryable) => Promise<void> = async () => undefined,
): Promise<boolean> {
  return db.transaction(async (tx) => {
    const rows = await tx.query('delete from workflows where workspace_id = $1 and id = $2 returning id', [
      workspaceId,
      workflowId,
    ]);
    if (rows.length === 0) return false;
    await announceChange(tx, 'workflows');
    await beforeCommit(tx);
    return true;
  });
}
