/**
 * Whether the execution is `waiting` (docs/api.md#executions): while at least one approval or sleep of the
 * run waits, its SwitchyardWaiting search attribute is true, which the API's reads and the list's
 * `status=waiting` filter go by. Set when the first wait begins, cleared when the last one ends.
 * Deterministic code only.
 */
import { upsertSearchAttributes } from '@temporalio/workflow';
import { WAITING_ATTRIBUTE } from '../../core/search-attributes';
import type { Run } from './frame';

function waits(run: Run): number {
  return run.waiting.size + run.sleeping;
}

/** Call once a wait was counted (an approval in `run.waiting`, a sleep in `run.sleeping`). */
export function waitBegan(run: Run): void {
  if (waits(run) === 1) upsertSearchAttributes([{ key: WAITING_ATTRIBUTE, value: true }]);
}

/** Call once a wait was uncounted. */
export function waitEnded(run: Run): void {
  if (waits(run) === 0) upsertSearchAttributes([{ key: WAITING_ATTRIBUTE, value: false }]);
}
