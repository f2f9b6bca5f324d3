/**
 * The execution worker of a process, in probation while runs that may crash it are about
 * (platform/temporal/crash-loop.ts explains why and how the poison run is told from its bystanders).
 *
 * At start it terminates the runs found to crash workers; if other suspects remain, it runs a probation
 * worker (one workflow task at a time) and checks again every few seconds; once no suspect is left it
 * shuts the probation worker down gracefully and starts a normal one, in the same process.
 */
import os from 'node:os';
import type { Worker } from '@temporalio/worker';
import type { Logger } from '../platform/logger';
import {
  probationIdentity,
  terminateCrashLoopingRuns,
  type CrashLoopCheck,
  type CrashLoopOutcome,
} from '../platform/temporal/crash-loop';

export interface ProbationWorkerOptions extends CrashLoopCheck {
  /** Creates the worker: in probation with that identity, or a normal one. */
  create(probation: { identity: string } | undefined): Promise<Worker>;
  /** How often a probation worker checks for suspects. */
  recheckMs?: number;
}

export interface RunningWorker {
  /** The worker polling now (the probation one, then the normal one). */
  readonly current: Worker;
  /** Resolves when the worker stops by itself (a fatal error); never when stopped by `stop`. */
  readonly stopped: Promise<void>;
  stop(): Promise<void>;
}

/** The longest a start waits for the attempts in flight on a dead worker to time out. */
const MAX_SETTLE_MS = 60_000;

async function check(
  options: ProbationWorkerOptions,
  seen?: CrashLoopOutcome['inFlight'],
): Promise<CrashLoopOutcome | undefined> {
  try {
    return await terminateCrashLoopingRuns(options, seen);
  } catch (error) {
    options.logger.warn({ err: error }, 'Could not check for runs that crash the worker');
    return undefined;
  }
}

/**
 * The check at start. A suspect whose attempt is in flight was most likely running on the worker that
 * just died (this process does not poll yet): wait for that attempt to time out before judging it, or
 * the new worker takes the retry — and dies — before any check could see it.
 */
async function checkAtStart(options: ProbationWorkerOptions): Promise<number> {
  const deadline = Date.now() + MAX_SETTLE_MS;
  let seen: CrashLoopOutcome['inFlight'] | undefined;
  for (;;) {
    const outcome = await check(options, seen);
    if (!outcome) return 0;
    const until = outcome.inFlightUntil;
    if (until === undefined || until >= deadline || outcome.suspects === 0) return outcome.suspects;
    // Attempts seen in flight keep their exact start: the next check judges them by it.
    seen = new Map([...(seen ?? []), ...outcome.inFlight]);
    const waitMs = Math.max(0, until - Date.now()) + 1_000;
    options.logger.info(
      { suspects: outcome.suspects, waitMs },
      'A run suspected of crashing the worker has a workflow task in flight (on the worker that died?); ' +
        'waiting for it to time out before polling',
    );
    await new Promise((resolve) => setTimeout(resolve, waitMs));
  }
}

/** Creates and runs the process's worker, in probation first if suspects are about. */
export async function runProbationWorker(options: ProbationWorkerOptions): Promise<RunningWorker> {
  const logger: Logger = options.logger;
  const suspects = await checkAtStart(options);
  const probation = suspects > 0;
  if (probation)
    logger.warn(
      { suspects },
      `${suspects} run(s) of the task queue were in flight when a worker died, again and again; this worker ` +
        'starts in probation (one workflow task at a time) until they complete, so that the run that ' +
        'crashes it, if any, is found alone and terminated, and the others go on',
    );
  let worker = await options.create(
    probation ? { identity: probationIdentity(`${process.pid}@${os.hostname()}`, Date.now()) } : undefined,
  );
  let running = worker.run();
  let stopping = false;
  /** The probation worker being replaced: its end is no failure. */
  let retired: Worker | undefined;
  let failed!: () => void;
  const stopped = new Promise<void>((resolve) => (failed = resolve));
  const watch = (run: Promise<void>, w: Worker) =>
    run.then(
      () => {
        if (!stopping && w !== retired) failed();
      },
      (error: unknown) => {
        logger.fatal({ err: error }, 'The worker stopped');
        failed();
      },
    );
  void watch(running, worker);

  let timer: NodeJS.Timeout | undefined;
  let seen: CrashLoopOutcome['inFlight'] | undefined;
  const recheck = async (): Promise<void> => {
    timer = undefined;
    if (stopping) return;
    const outcome = await check(options, seen);
    seen = outcome?.inFlight;
    const left = outcome?.suspects;
    if (stopping) return;
    if (left !== 0) {
      timer = setTimeout(() => void recheck(), options.recheckMs ?? 5_000);
      return;
    }
    logger.info('No run left that may crash the worker: replacing the probation worker by a normal one');
    retired = worker;
    worker.shutdown();
    await running.catch(() => undefined);
    if (stopping) return;
    try {
      const next = await options.create(undefined);
      if (stopping) return;
      worker = next;
      running = worker.run();
    } catch (error) {
      // As when a worker stops by itself: the process exits and its supervisor starts it again.
      logger.fatal({ err: error }, 'Could not start the normal worker after probation');
      failed();
      return;
    }
    void watch(running, worker);
    logger.info('Worker out of probation');
  };
  if (probation) timer = setTimeout(() => void recheck(), options.recheckMs ?? 5_000);

  return {
    get current() {
      return worker;
    },
    stopped,
    async stop() {
      stopping = true;
      if (timer) clearTimeout(timer);
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running.catch(() => undefined);
    },
  };
}
