/**
 * What saving or deleting a workflow does beyond its own rows, inside the same transaction (a failure
 * here leaves the workflow as it was, so a 503 really means "nothing happened"):
 * - the inbound hook secret of a workflow with a webhook trigger (docs/webhooks.md#inbound-hooks);
 * - the Temporal Schedule of a workflow with a schedule trigger (docs/definitions.md#schedule-trigger).
 */
import type { Services } from '../services';
import type { Queryable } from '../store/db';
import type { WorkflowVersionRecord } from '../store/workflows';
import { ensureHookSecret } from '../hooks/hook-secrets';
import { removeSchedule, syncSchedule } from '../schedules/sync';

export interface SaveExtras {
  /** The inbound signing secret, only when this save created it. */
  hook_secret?: string;
}

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
  await syncSchedule(services, workspaceId, record);
  return extras;
}

export async function beforeWorkflowDeleted(
  services: Services,
  workspaceId: string,
  workflowId: string,
): Promise<void> {
  await removeSchedule(services, workspaceId, workflowId);
}
