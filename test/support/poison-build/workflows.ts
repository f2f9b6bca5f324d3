/**
 * Workflow code of a "poison build" for the tests of runs stuck on a build: the service's workflows, with
 * an execution workflow that throws (a bug in workflow code). Every workflow task of its runs fails, and
 * Temporal retries it for ever.
 */
import { setWorkflowOptions } from '@temporalio/workflow';
import type { ExecutionInput, ExecutionResult } from '../../../core/execution-types';

export { delivery, housekeeping } from '../../../workers/workflows';

setWorkflowOptions({ versioningBehavior: 'PINNED' }, execution);
export async function execution(_input: ExecutionInput): Promise<ExecutionResult> {
  // Not an ApplicationFailure: the SDK fails the workflow task rather than the run.
  throw new TypeError('poison: this build cannot run executions');
}
