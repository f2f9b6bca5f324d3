/**
 * Debounce's local activities (docs/flow-control.md#debounce): `end_debounce`, a debounced run's question
 * when its timer fires, and `close_debounce`, its last act whatever way it ends. The table and its locking
 * are platform/store/debounces.ts.
 */
import type { Database } from '../../platform/store/db';
import { closeDebounce, endDebounce } from '../../platform/store/debounces';
import type { EndDebounceRequest, EndDebounceResult } from '../../core/flow-control';

export function createDebounceActivities(deps: { db: Database }) {
  return {
    /** Undefined when the execution has no row (it was closed). */
    async end_debounce(request: EndDebounceRequest): Promise<EndDebounceResult | undefined> {
      return endDebounce(deps.db, request.execution_id);
    },

    async close_debounce(request: EndDebounceRequest): Promise<void> {
      await closeDebounce(deps.db, request.execution_id);
    },
  };
}
