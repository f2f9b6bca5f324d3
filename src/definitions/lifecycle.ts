/**
 * What saving or deleting a workflow does beyond its own rows:
 * - the inbound hook secret of a workflow with a webhook trigger (docs/webhooks.md#inbound-hooks), in the
 *   save's transaction;
 * - the Temporal Schedule of a workflow with a schedule trigger (docs/definitions.md#schedule-trigger),
 *   outside any transaction: no database connection waits on Temporal (a slow Temporal would otherwise
 *   hold the pool's connections, and the rows' locks, for every workspace). A save whose schedule
 *   Temporal refuses (down: 503; a spec it rejects: 400) is undone, so the error still means "nothing
 *   changed"; a delete removes the schedule first. What can still drift (this process dying in between)
 *   is put right by reconcileSchedules at every API start.
 */
import type { Services } from '../services';
import type { Queryable } from '../../platform/store/db';
import { revertWorkflowVersion, type WorkflowVersionRecord } from '../../platform/store/workflows';
import { ensureHookSecret } from '../../platform/store/hook-secrets';
import { removeSchedule, syncSchedule } from './schedule-sync';

export interface SaveExtras {
  /** The inbound signing secret, only when this save created it. */
  hook_secret?: string;
}

/** Inside the save's transaction: database work only. */
export async function afterWorkflowSaved(
  services: Services,
  tx: Queryable,
  workspaceId: string,
  record: WorkflowVersionRecord,
): Promise<SaveExtras> {
  const extras: SaveExtras = {};
  if (record.definition.trigger?.type === 'webhook') {
    const created = await ensureHookSecret(tx, services.cipher, workspaceId, record.workflow_id);
    if (created) extras.hook_secret = created;
  }
  return extras;
}

/** After the save committed: the schedule; when Temporal refuses it, the version is undone. */
export async function afterWorkflowCommitted(
  services: Services,
  workspaceId: string,
  record: WorkflowVersionRecord,
): Promise<void> {
  try {
    await syncSchedule(services, workspaceId, record);
  } catch (error) {
    await revertWorkflowVersion(services.db, workspaceId, record.workflow_id, record.version);
    throw error;
  }
}

/** Before the workflow's rows are deleted (outside their transaction). */
export async function beforeWorkflowDeleted(
  services: Services,
  workspaceId: string,
  workflowId: string,
): Promise<void> {
  await removeSchedule(services, workspaceId, workflowId);
}
