/**
 * Workflow code of a "next build" for the deploy tests: the service's workflows, with a change to the
 * execution workflow that old histories cannot replay on (a timer before anything else). A run started
 * by the current build and moved onto this one would fail its next task with a non-determinism error.
 */
import { setWorkflowOptions, sleep } from '@temporalio/workflow';
import type { ExecutionInput, ExecutionResult } from '../../../core/execution-types';
import { execution as currentExecution } from '../../../workers/workflows/execution';

export { delivery, housekeeping } from '../../../workers/workflows';

setWorkflowOptions({ versioningBehavior: 'PINNED' }, execution);
export async function execution(input: ExecutionInput): Promise<ExecutionResult> {
  await sleep(1);
  return currentExecution(input);
}
