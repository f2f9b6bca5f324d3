/**
 * A debounced run's wait (docs/flow-control.md#debounce): started by the trigger that made its key's
 * execution, queued from its first moment (its start's SwitchyardQueued search attribute), it sleeps the
 * period, then asks `end_debounce` whether its key has been quiet that long; a trigger that came in since
 * pushed the end back, and the run sleeps again until then. When it ends, the run takes the last trigger's
 * input and counts the triggers it took in. The row is the truth (platform/store/debounces.ts): triggers
 * never signal the run, so a chatty key costs the run one timer per period, not one event per trigger.
 * Deterministic code only.
 */
import { proxyLocalActivities, sleep, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { ExecutionInput } from '../../core/execution-types';
import { durationMs } from '../../core/step-defaults';

/** The database may be away for a while: both retry without end, each try bounded. */
const { end_debounce, close_debounce } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
});

/**
 * Waits for the key's quiet time, then puts the last trigger's input (and body and event) in `input`;
 * returns how many triggers the run took in.
 */
export async function waitForQuiet(input: ExecutionInput): Promise<number> {
  let waitMs = durationMs(input.workflow.definition.debounce!.period);
  for (;;) {
    await sleep(Math.max(1, waitMs));
    const result = await end_debounce({ execution_id: workflowInfo().workflowId });
    // No row: the sweeper found it long overdue (this run was stuck for longer): it runs as it was started.
    if (!result) return 1;
    if (result.state === 'waiting') {
      waitMs = result.wait_ms;
      continue;
    }
    input.input = result.input;
    if (result.body !== undefined) input.trigger.body = result.body;
    else delete input.trigger.body;
    if (result.event) input.trigger.event = result.event;
    return result.coalesced;
  }
}

/** The run ends, whatever way: its row goes, so the key's next trigger makes a new execution. */
export async function closeDebounce(): Promise<void> {
  await close_debounce({ execution_id: workflowInfo().workflowId });
}
