/**
 * Temporal's fairness keys (docs/operations.md#fair-sharing-of-workers): every workflow a workspace
 * starts (executions, their retries, scheduled runs, webhook deliveries) carries the workspace as its
 * fairness key, and its activities inherit it. A Temporal server with fairness enabled
 * (`matching.enableFairness`, which our dev server sets) then dispatches the tasks of a task queue
 * round-robin between keys rather than first in, first out, so one workspace's backlog of thousands of
 * tasks does not sit in front of another workspace's one. Without it the key is carried and ignored.
 */
import type { Priority } from '@temporalio/common';

/** Temporal refuses fairness keys longer than this (bytes). */
export const MAX_FAIRNESS_KEY_BYTES = 64;

/**
 * The fairness key of a workspace: its id (at most 63 ASCII characters when `npm run admin` creates it),
 * or, for a longer id, its start and a hash of the whole (two such workspaces sharing a key share their
 * turn, nothing else).
 */
export function fairnessKeyOf(workspaceId: string): string {
  if (new TextEncoder().encode(workspaceId).length <= MAX_FAIRNESS_KEY_BYTES) return workspaceId;
  let hash = 0x811c9dc5;
  for (let i = 0; i < workspaceId.length; i++)
    hash = Math.imul(hash ^ workspaceId.charCodeAt(i), 0x01000193) >>> 0;
  return `${workspaceId.replace(/[^\x20-\x7e]/g, '_').slice(0, 40)}~${hash.toString(16).padStart(8, '0')}`;
}

/** The priority every workflow a workspace starts carries. */
export function workspacePriority(workspaceId: string): Priority {
  return { fairnessKey: fairnessKeyOf(workspaceId) };
}
