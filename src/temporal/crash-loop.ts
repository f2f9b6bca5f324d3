/**
 * Runs that crash the worker (issue 14's poison pill). A worker process that dies in the middle of a
 * workflow task never answers it; Temporal times the task out and hands it out again, to the restarted
 * worker, which dies again — for ever. Temporal counts the attempts of a run's pending workflow task,
 * and past a number of consecutive failures or timeouts
 * (`system.numConsecutiveWorkflowTaskProblemsToTriggerSearchAttribute`, which our dev server sets; on
 * by default in Temporal Cloud) it marks the run with the TemporalReportedProblems search attribute —
 * Temporal UI's "Task Failures" view.
 *
 * Before it polls, every worker (at each start, so after each crash) terminates the runs of its task
 * queue so marked for timed-out workflow tasks whose pending task is at CRASH_LOOP_ATTEMPTS or more,
 * with a reason that says why. Tasks that *fail* (an error in workflow code, a non-determinism after a
 * bad deploy) are left alone: they do not crash the worker, and a fixed deploy can still save them.
 */
import type { Client } from '@temporalio/client';
import type { Logger } from '../logger';
import { visibilityString } from './visibility-query';

/** TemporalReportedProblems' value for a run whose workflow tasks keep timing out. */
const TIMED_OUT_TASKS = 'category=WorkflowTaskTimedOut';

export interface CrashLoopCheck {
  client: Client;
  taskQueue: string;
  /** Workflow task attempt from which a run counts as crashing the worker. */
  maxAttempts: number;
  logger: Logger;
}

/** Terminates the runs of the task queue whose workflow task keeps crashing workers; returns their ids. */
export async function terminateCrashLoopingRuns(check: CrashLoopCheck): Promise<string[]> {
  const query =
    `TaskQueue = ${visibilityString(check.taskQueue)} AND ExecutionStatus = 'Running' ` +
    `AND TemporalReportedProblems IN ('${TIMED_OUT_TASKS}')`;
  const terminated: string[] = [];
  for await (const run of check.client.workflow.list({ query })) {
    const handle = check.client.workflow.getHandle(run.workflowId, run.runId);
    const description = await handle.describe();
    const attempt = description.raw.pendingWorkflowTask?.attempt ?? 0;
    if (attempt < check.maxAttempts) continue;
    const reason =
      `its workflow task timed out ${attempt} times in a row, each time taking down the worker that ran it ` +
      `(a crash loop); terminated so that it cannot crash the worker again. Report it with its history.`;
    await handle.terminate(reason);
    check.logger.error(
      { workflowId: run.workflowId, runId: run.runId, attempt, workflowType: run.type },
      `Terminated a run that crashed the worker ${attempt} times`,
    );
    terminated.push(run.workflowId);
  }
  return terminated;
}
