/**
 * What a bulk operation does to one execution (docs/operations.md#bulk-operations), through the API's own
 * paths: cancel (src/executions/cancel.ts), retry from the failed step (retry.ts), rerun with the same input
 * (trigger.ts, under an id derived from the operation and the execution, and naming it in `rerun_of`).
 * An execution that does not qualify (not open for a cancel, not failed for a retry) is skipped.
 *
 * Every action is safe to do again: a cancel of a canceled run or a retry of a run retried already does not
 * qualify any more, and a rerun's derived id lets Temporal refuse a second start. So a runner that stopped
 * in the middle of an action (`resumed`) does it again and counts it as done when it finds it done.
 */
import { AppError } from '../../platform/errors';
import { rerunExecutionId } from '../../platform/ids';
import type { ClaimedOperation, ItemOutcome } from '../../platform/store/bulk-operations';
import type { Services } from '../services';
import { cancelExecution } from '../executions/cancel';
import { executionInputOf, locateExecution } from '../executions/locate';
import { retryExecution } from '../executions/retry';
import { triggerExecution } from '../executions/trigger';

export interface ActionOutcome {
  state: ItemOutcome;
  error?: { code: string; message: string };
  resultExecutionId?: string;
}

/** Codes that say the execution does not qualify for the action. */
const NOT_QUALIFIED = new Set(['execution_not_running', 'execution_not_failed', 'execution_not_found']);

export async function applyAction(
  services: Services,
  op: ClaimedOperation,
  executionId: string,
  resumed: boolean,
): Promise<ActionOutcome> {
  try {
    return await act(services, op, executionId);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    const refusal = { code: error.code, message: error.message };
    if (NOT_QUALIFIED.has(error.code)) {
      // A cancel or retry this operation did before its runner stopped leaves the run out of its filter.
      if (resumed && error.code !== 'execution_not_found') return { state: 'succeeded' };
      return { state: 'skipped', error: refusal };
    }
    // Temporal or a worker away (503): the operation tries again later, this execution included.
    if (error.status >= 500) throw error;
    return { state: 'failed', error: refusal };
  }
}

async function act(services: Services, op: ClaimedOperation, executionId: string): Promise<ActionOutcome> {
  const workspaceId = op.workspace_id;
  switch (op.action) {
    case 'cancel':
      await cancelExecution(services, workspaceId, executionId);
      return { state: 'succeeded' };
    case 'retry':
      await retryExecution(services, {
        workspaceId,
        executionId,
        ...(op.options['input'] !== undefined && { input: op.options['input'] }),
        keyId: op.created_by ?? 'bulk-operation',
      });
      return { state: 'succeeded' };
    case 'rerun': {
      // The input its latest run ran with (a retry's corrected one, if any), as received.
      const { description } = await locateExecution(services, workspaceId, executionId);
      const ran = await executionInputOf(services, executionId, description.runId);
      const { executionId: started } = await triggerExecution(services, {
        workspaceId,
        workflowId: ran.workflow.id,
        ...(op.options['version'] !== 'latest' && { version: ran.workflow.version }),
        body: ran.trigger.body ?? ran.input,
        executionId: rerunExecutionId(workspaceId, op.id, executionId),
        triggerType: 'api',
        rerunOf: executionId,
      });
      return { state: 'succeeded', resultExecutionId: started };
    }
  }
}
