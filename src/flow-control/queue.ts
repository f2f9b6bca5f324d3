/**
 * A workflow's queue (GET /v1/workflows/{id}/queue, docs/flow-control.md#the-queue): what its concurrency
 * gate holds (open and queued runs per key, platform/store/admissions.ts) and the runs its throttle holds
 * back (platform/store/throttles.ts) and the runs waiting for their debounce (platform/store/debounces.ts),
 * counted together by key.
 */
import type { QueueView } from '../../core/flow-control';
import { QUEUE_KEYS_SHOWN, queueCounts } from '../../platform/store/admissions';
import type { Queryable } from '../../platform/store/db';
import { throttleQueueCounts } from '../../platform/store/throttles';
import { debounceQueueCounts } from '../../platform/store/debounces';

export async function workflowQueue(
  db: Queryable,
  workspaceId: string,
  workflowId: string,
): Promise<QueueView> {
  const [gate, ...heldBack] = await Promise.all([
    queueCounts(db, workspaceId, workflowId),
    throttleQueueCounts(db, workspaceId, workflowId, QUEUE_KEYS_SHOWN),
    debounceQueueCounts(db, workspaceId, workflowId, QUEUE_KEYS_SHOWN),
  ]);
  if (heldBack.every((counts) => counts.queued === 0)) return gate;
  const keys = new Map(gate.keys.map((entry) => [entry.key, { ...entry }]));
  let queued = gate.queued;
  for (const counts of heldBack) {
    queued += counts.queued;
    for (const entry of counts.keys) {
      const known = keys.get(entry.key);
      if (known) known.queued += entry.queued;
      else keys.set(entry.key, { key: entry.key, queued: entry.queued, open: 0 });
    }
  }
  const busiest = [...keys.values()]
    .sort((a, b) => b.queued + b.open - (a.queued + a.open))
    .slice(0, QUEUE_KEYS_SHOWN);
  return { queued, open: gate.open, keys: busiest };
}
