/**
 * Runs that crash the worker (poison pills: docs/operations.md#a-run-that-crashes-the-worker). A worker process that dies in the middle of a
 * workflow task never answers it; Temporal times the task out and hands it out again, to the restarted
 * worker, which dies again — for ever. Temporal counts the attempts of a run's pending workflow task,
 * and past a number of consecutive failures or timeouts
 * (`system.numConsecutiveWorkflowTaskProblemsToTriggerSearchAttribute`, which our dev server sets; on
 * by default in Temporal Cloud) it marks the run with the TemporalReportedProblems search attribute —
 * Temporal UI's "Task Failures" view.
 *
 * The catch: when the poison run takes the process down, every workflow task in flight in that process
 * times out with it (a run in the middle of a slow connector call holds its workflow task open while the
 * `run_steps` local activity runs). Their retries come due at the same moment as the poison's, so the
 * restarted worker takes them together again, and they reach any attempt count together: attempts alone
 * cannot tell the poison from its bystanders. Histories cannot either: the crash usually happens in a
 * local activity, and Temporal records neither the retried attempts nor which worker started them.
 *
 * Hence **probation**. The suspects are the running runs of the task queue so marked for timed-out
 * workflow tasks whose pending task is a retry. If there are any when a worker starts, it polls in
 * probation (processes/probation-worker.ts): one workflow task at a time, no sticky cache, and an
 * identity that says so and since when (`<identity>/probation/<epoch ms>`). Bystanders then run one after
 * the other and complete, which ends their streak; the poison takes down a probation worker that was
 * running nothing else. So a suspect is the poison when its last attempt timed out after starting at a
 * moment when a probation worker was polling the task queue and no other worker polled: when it started
 * comes from the retry's scheduled time (the timeout) minus the workflow task timeout, known within
 * TIMEOUT_LAG_MS (Temporal's timers fire late under load, so the start is taken as that much earlier),
 * or exactly when an earlier check of the same process saw the attempt in flight;
 * which workers polled, and since when, from the task queue's pollers (DescribeTaskQueue). Such a run,
 * at CRASH_LOOP_ATTEMPTS or more, is terminated with a reason that says why; the others are left to
 * complete. A start waits (up to a minute) for suspects' attempts in flight to time out first: they were
 * most likely on the worker that just died, and judged later the poison would crash the new worker
 * before any check saw it. A probation worker checks every few seconds, and once no suspect is left the
 * process replaces it by a normal worker.
 *
 * Tasks that *fail* (an error in workflow code, a non-determinism after a bad deploy) are left alone:
 * they do not crash the worker, and a fixed deploy can still save them.
 *
 * Limits: a run that keeps crashing workers is terminated a few crashes later than before (one or two
 * probation crashes, each a workflow task timeout apart), and while suspects remain the worker runs one
 * workflow task at a time. With several worker processes on one task queue, a normal worker that got a
 * bystander's task from its last poll and then died while another process was in probation cannot be
 * told apart from that probation worker: the bystander could be taken for the poison. With one worker
 * process per task queue (`npm start`, or one worker deployment per queue) it cannot.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { Logger } from '../logger';
import { visibilityString } from './visibility-query';

/** TemporalReportedProblems' value for a run whose workflow tasks keep timing out. */
const TIMED_OUT_TASKS = 'category=WorkflowTaskTimedOut';
const PROBATION_MARK = '/probation/';

/** A suspect's attempt seen in flight: its start is then known exactly. */
export interface InFlightAttempt {
  attempt: number;
  startedAt: number;
}

export interface CrashLoopCheck {
  client: Client;
  taskQueue: string;
  /** Workflow task attempt from which a run counts as crashing the worker. */
  maxAttempts: number;
  logger: Logger;
}

export interface CrashLoopOutcome {
  /** Workflow ids of the runs terminated as the poison. */
  terminated: string[];
  /** Runs still suspected (their workflow tasks timed out, the last attempt with bystanders). */
  suspects: number;
  /**
   * When the last attempt of a suspect that is in flight now (maybe on a worker that just died) times
   * out, if one is: until then, whether it crashed a worker cannot be known.
   */
  inFlightUntil?: number;
  /** Those attempts in flight, by run id: pass them to the next check (`seen`). */
  inFlight: Map<string, InFlightAttempt>;
}

/** The identity of a worker in probation since `since` (ms since the epoch). */
export function probationIdentity(baseIdentity: string, since: number): string {
  return `${baseIdentity}${PROBATION_MARK}${since}`;
}

/** When the worker of this identity began its probation; undefined: not a probation worker. */
export function probationSince(identity: string): number | undefined {
  const at = identity.lastIndexOf(PROBATION_MARK);
  if (at < 0) return undefined;
  const since = Number(identity.slice(at + PROBATION_MARK.length));
  return Number.isSafeInteger(since) ? since : undefined;
}

export interface Poller {
  identity: string;
  lastAccess: number;
}

function millis(t: { seconds?: unknown; nanos?: number | null } | null | undefined): number | undefined {
  if (!t || t.seconds === undefined || t.seconds === null) return undefined;
  return Number(t.seconds) * 1000 + Math.floor((t.nanos ?? 0) / 1e6);
}

async function workflowPollers(client: Client, taskQueue: string): Promise<Poller[]> {
  const response = await client.workflowService.describeTaskQueue({
    namespace: client.options.namespace,
    taskQueue: { name: taskQueue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  });
  return (response.pollers ?? []).map((p) => ({
    identity: p.identity ?? '',
    lastAccess: millis(p.lastAccessTime) ?? 0,
  }));
}

/**
 * How late Temporal may time a workflow task out (its timer queue lags under load: 4-5 s seen on a busy
 * dev server). An attempt's start is known within this much: it is taken as an upper bound.
 */
export const TIMEOUT_LAG_MS = 10_000;

/**
 * Whether an attempt that started at `startedAt` (or up to `uncertaintyMs` earlier) ran alone on a worker
 * in probation: a probation worker was polling by then, and no other worker polled since.
 */
export function ranInProbation(
  startedAt: number,
  pollers: readonly Poller[],
  uncertaintyMs: number,
): boolean {
  const earliest = startedAt - uncertaintyMs;
  let probation = false;
  for (const poller of pollers) {
    const since = probationSince(poller.identity);
    if (since === undefined) {
      if (poller.lastAccess >= earliest) return false;
    } else if (since <= earliest) probation = true;
  }
  return probation;
}

/**
 * Terminates the runs of the task queue that crashed a worker in probation at CRASH_LOOP_ATTEMPTS or
 * more; counts the other suspects.
 */
export async function terminateCrashLoopingRuns(
  check: CrashLoopCheck,
  seen: ReadonlyMap<string, InFlightAttempt> = new Map(),
): Promise<CrashLoopOutcome> {
  const query =
    `TaskQueue = ${visibilityString(check.taskQueue)} AND ExecutionStatus = 'Running' ` +
    `AND TemporalReportedProblems IN ('${TIMED_OUT_TASKS}')`;
  const terminated: string[] = [];
  let suspects = 0;
  let inFlightUntil: number | undefined;
  const inFlight = new Map<string, InFlightAttempt>();
  let pollers: Poller[] | undefined;
  for await (const run of check.client.workflow.list({ query })) {
    const handle = check.client.workflow.getHandle(run.workflowId, run.runId);
    const description = await handle.describe();
    const task = description.raw.pendingWorkflowTask;
    const attempt = task?.attempt ?? 0;
    // A completed workflow task ends the streak (the search attribute may lag behind).
    if (attempt < 2) continue;
    const scheduled = millis(task?.scheduledTime);
    const taskTimeout = millis(description.raw.executionConfig?.defaultWorkflowTaskTimeout) ?? 10_000;
    const state = task?.state;
    const waiting =
      state === temporal.api.enums.v1.PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_SCHEDULED;
    const started = millis(task?.startedTime);
    if (
      state === temporal.api.enums.v1.PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_STARTED &&
      started
    ) {
      inFlightUntil = Math.max(inFlightUntil ?? 0, started + taskTimeout);
      inFlight.set(run.runId, { attempt, startedAt: started });
    }
    if (attempt >= check.maxAttempts && waiting && scheduled !== undefined) {
      // The attempt that timed out: seen in flight by an earlier check (its start exact), or else started
      // a task timeout before its retry was scheduled (late timers make that an upper bound).
      const known = seen.get(run.runId);
      const exact = known?.attempt === attempt - 1 ? known.startedAt : undefined;
      pollers ??= await workflowPollers(check.client, check.taskQueue);
      const startedAt = exact ?? scheduled - taskTimeout;
      if (ranInProbation(startedAt, pollers, exact === undefined ? TIMEOUT_LAG_MS : 0)) {
        const reason =
          `its workflow task timed out ${attempt - 1} times in a row, each time taking down the worker that ` +
          `ran it (a crash loop), the last time on a worker in probation that ran nothing else: this run is ` +
          `what crashes the worker. Terminated so that it cannot crash the worker again. Report it with its history.`;
        await handle.terminate(reason);
        check.logger.error(
          { workflowId: run.workflowId, runId: run.runId, attempt, workflowType: run.type },
          `Terminated a run that crashed the worker ${attempt - 1} times, the last time running alone`,
        );
        terminated.push(run.workflowId);
        continue;
      }
    }
    suspects += 1;
  }
  return { terminated, suspects, inFlight, ...(inFlightUntil !== undefined && { inFlightUntil }) };
}
