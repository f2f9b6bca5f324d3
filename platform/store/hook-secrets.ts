/**
 * Inbound hook signing secrets (docs/webhooks.md#inbound-hooks): created when a version with a webhook
 * trigger is first saved (returned once), rotated on request (returned once), sealed at rest like workspace
 * secrets.
 */
import type { SecretCipher } from '../secrets/cipher';
import { newSigningSecret } from '../webhook-signing';
import { announceChange } from './changes';
import type { Queryable } from './db';

const sealContext = (workspaceId: string, workflowId: string): string => `hook/${workspaceId}/${workflowId}`;

/** Creates the workflow's hook secret when it has none; returns the new secret, or undefined when one existed. */
export async function ensureHookSecret(
  tx: Queryable,
  cipher: SecretCipher,
  workspaceId: string,
  workflowId: string,
): Promise<string | undefined> {
  const secret = newSigningSecret();
  const rows = await tx.query(
    'insert into hook_secrets (workspace_id, workflow_id, sealed) values ($1, $2, $3) on conflict do nothing returning workflow_id',
    [workspaceId, workflowId, cipher.seal(secret, sealContext(workspaceId, workflowId))],
  );
  if (rows.length === 0) return undefined;
  await announceChange(tx, 'workflows');
  return secret;
}

/** Replaces the workflow's hook secret (creating it if missing) and returns the new one. */
export async function rotateHookSecret(
  db: Queryable,
  cipher: SecretCipher,
  workspaceId: string,
  workflowId: string,
): Promise<string> {
  const secret = newSigningSecret();
  await db.query(
    `insert into hook_secrets (workspace_id, workflow_id, sealed) values ($1, $2, $3)
     on conflict (workspace_id, workflow_id) do update set sealed = excluded.sealed, created_at = now()`,
    [workspaceId, workflowId, cipher.seal(secret, sealContext(workspaceId, workflowId))],
  );
  await announceChange(db, 'workflows');
  return secret;
}

export interface SealedHookCandidate {
  workspaceId: string;
  workflowId: string;
  /** The secret, sealed as stored (openHookSecret opens it). */
  sealed: string;
}

/**
 * Every workflow with this id, in any workspace, whose latest version has a webhook trigger, with its
 * sealed secret: the signature decides which one an inbound request means.
 */
export async function hookCandidates(db: Queryable, workflowId: string): Promise<SealedHookCandidate[]> {
  const rows = await db.query<{ workspace_id: string; sealed: string }>(
    `select h.workspace_id, h.sealed
       from hook_secrets h
       join workflows w on w.workspace_id = h.workspace_id and w.id = h.workflow_id
       join workflow_versions v on v.workspace_id = w.workspace_id and v.workflow_id = w.id and v.version = w.latest_version
      where h.workflow_id = $1 and v.definition->'trigger'->>'type' = 'webhook'`,
    [workflowId],
  );
  return rows.map((row) => ({ workspaceId: row.workspace_id, workflowId, sealed: row.sealed }));
}

/** A candidate's secret in clear, for the one request that checks a signature with it. */
export function openHookSecret(cipher: SecretCipher, candidate: SealedHookCandidate): string {
  return cipher.open(candidate.sealed, sealContext(candidate.workspaceId, candidate.workflowId));
}
