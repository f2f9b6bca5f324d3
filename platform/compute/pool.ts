/**
 * Compute threads: where work whose cost a workspace controls runs when it could hold a thread for long
 * (compiling and running its JSON Schemas, evaluating its regular expressions), so that it never holds the
 * event loop that serves the API and every other workspace's steps.
 *
 * - Each task has a time limit, counted from the moment a thread that is ready takes it (a thread's own
 *   start, loading its modules, never counts), as the thread's CPU time where the platform reads it
 *   (thread-cpu.ts): a machine busy with other processes, or this process's event loop busy when the
 *   answer arrives, never fails a task that ran within it. A thread that outruns it is killed and
 *   replaced: a synchronous match or validation cannot be interrupted any other way.
 * - Each thread has a heap limit: a task that needs more fails, the process does not grow.
 * - Tasks queue per workspace and the workspaces are served in turn (fair-queue.ts), so a workspace that
 *   floods the threads delays another's next task by at most one task per thread.
 * - Threads start on first use and stop after a minute without work.
 */
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { FairQueue } from './fair-queue';
import type { ComputeResults, ComputeTask } from './tasks';
import { threadCpuClockOf } from './thread-cpu';

/** How long evaluating one of a workspace's expressions may take (docs/definitions.md#limits). */
export const EVALUATION_TIME_LIMIT_MS = 1000;
/**
 * How long compiling a workspace's JSON Schema, or checking an input against it, may take. Compiling a
 * schema at the size limit takes about a second of CPU; the margin is for a busy machine.
 */
export const SCHEMA_TIME_LIMIT_MS = 5000;

/**
 * A task's wall-clock time at most, as a multiple of its time limit, where its CPU time is what counts:
 * a thread that waits without running (never for long in these tasks) is not waited for without end.
 */
const WALL_CLOCK_LIMIT_FACTOR = 10;
/** The least time before the CPU time of a task that is still within its limit is looked at again. */
const RECHECK_MS = 20;

/** A thread with no task for this long stops (ComputePoolOptions.idleMs sets another). */
const IDLE_MS = 60_000;
const DEFAULT_HEAP_MB = 256;

export interface ComputePoolOptions {
  /** Threads at most (COMPUTE_THREADS). */
  threads: number;
  /** How long one task may run, in ms, by kind. */
  timeLimitsMs?: Partial<Record<ComputeTask['kind'], number>>;
  /** Heap of one thread, in MB. */
  maxHeapMb?: number;
  /** How long a thread waits for its next task before it stops (IDLE_MS). */
  idleMs?: number;
}

const TIME_LIMITS_MS: Record<ComputeTask['kind'], number> = {
  evaluate: EVALUATION_TIME_LIMIT_MS,
  compile_schema: SCHEMA_TIME_LIMIT_MS,
  validate: SCHEMA_TIME_LIMIT_MS,
};

/** A task ran out of time (its thread was killed) or of memory. */
export class ComputeLimitError extends Error {
  constructor(
    message: string,
    readonly limit: 'time' | 'memory',
  ) {
    super(message);
    this.name = 'ComputeLimitError';
  }
}

/** What a thread posts back (thread.ts). */
export type ThreadMessage =
  | { ready: true; tid: number | undefined }
  | { result: unknown }
  | { error: { name: string; message: string } };

/** One thread: ready once it has loaded its modules, running one task at a time. */
class ComputeThread {
  readonly ready: Promise<void>;
  /** Settles the task under way with what the thread posts, or how it died. */
  private settle: ((message: ThreadMessage | { died: Error }) => void) | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  /** The thread's CPU clock, once it said which thread it is (Linux). */
  private cpu: ReturnType<typeof threadCpuClockOf>;
  dead = false;

  constructor(
    private readonly worker: Worker,
    private readonly onDeath: (thread: ComputeThread) => void,
  ) {
    this.ready = new Promise<void>((resolve, reject) => {
      worker.on('message', (message: ThreadMessage) => {
        if ('ready' in message) {
          if (message.tid !== undefined) this.cpu = threadCpuClockOf(message.tid);
          resolve();
        } else this.settle?.(message);
      });
      worker.once('error', (error) => {
        reject(error);
        this.die(error);
      });
      worker.once('exit', (code) => {
        const error = new Error(`The compute thread exited (code ${code}).`);
        reject(error);
        this.die(error);
      });
    });
    // A thread that fails to start is reported by the task waiting for it.
    this.ready.catch(() => undefined);
  }

  /** Runs one task, killing the thread once the task ran for `timeLimitMs`. */
  run(task: ComputeTask, timeLimitMs: number, maxHeapMb: number): Promise<unknown> {
    clearTimeout(this.idleTimer);
    return new Promise((resolve, reject) => {
      const cpu = this.cpu;
      const cpuAtStart = cpu?.read();
      const startedAt = performance.now();
      const check = () => {
        const ran = cpu ? cpu.read() - cpuAtStart! : timeLimitMs;
        if (ran < timeLimitMs && performance.now() - startedAt < timeLimitMs * WALL_CLOCK_LIMIT_FACTOR) {
          timer = setTimeout(check, Math.max(timeLimitMs - ran, RECHECK_MS));
          return;
        }
        this.settle = undefined;
        reject(new ComputeLimitError(`took longer than ${timeLimitMs} ms`, 'time'));
        void this.kill();
      };
      let timer = setTimeout(check, timeLimitMs);
      this.settle = (message) => {
        clearTimeout(timer);
        this.settle = undefined;
        if ('died' in message) {
          const outOfMemory = (message.died as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY';
          reject(
            outOfMemory ? new ComputeLimitError(`needed more than ${maxHeapMb} MB`, 'memory') : message.died,
          );
        } else if ('error' in message) {
          reject(Object.assign(new Error(message.error.message), { name: message.error.name }));
        } else if ('result' in message) {
          resolve(message.result);
        }
      };
      this.worker.postMessage(task);
    });
  }

  /**
   * Stops the thread after `idleMs` without a task, and takes it off the pool's idle threads: a stopped
   * thread given a task would never answer, and the task would fail on its time limit.
   */
  idle(idleMs: number): void {
    this.idleTimer = setTimeout(() => {
      void this.kill();
      this.onDeath(this);
    }, idleMs);
    this.idleTimer.unref();
  }

  async kill(): Promise<void> {
    clearTimeout(this.idleTimer);
    this.dead = true;
    this.cpu?.close();
    await this.worker.terminate();
  }

  private die(error: Error): void {
    this.cpu?.close();
    this.settle?.({ died: error });
    if (this.dead) return;
    this.dead = true;
    this.onDeath(this);
  }
}

export class ComputePool {
  private readonly queue: FairQueue;
  private readonly idle: ComputeThread[] = [];
  private closed = false;

  constructor(private readonly options: ComputePoolOptions) {
    this.queue = new FairQueue(options.threads);
  }

  /** Runs `task` for workspace `key` on a thread; throws ComputeLimitError past its time or memory. */
  run<K extends ComputeTask['kind']>(
    key: string,
    task: Extract<ComputeTask, { kind: K }>,
  ): Promise<ComputeResults[K]> {
    return this.queue.run(key, async () => {
      if (this.closed) throw new Error('The compute pool is closed.');
      const thread = this.takeIdle() ?? this.spawn();
      await thread.ready;
      try {
        const timeLimitMs = this.options.timeLimitsMs?.[task.kind] ?? TIME_LIMITS_MS[task.kind];
        return (await thread.run(task, timeLimitMs, this.heapMb)) as ComputeResults[K];
      } finally {
        // The queue lets at most `threads` tasks run, so at most that many threads are ever kept.
        if (this.closed) void thread.kill();
        else if (!thread.dead) {
          thread.idle(this.options.idleMs ?? IDLE_MS);
          this.idle.push(thread);
        }
      }
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.idle.splice(0).map((thread) => thread.kill()));
  }

  /** The newest idle thread still alive (a thread that died while idle is dropped). */
  private takeIdle(): ComputeThread | undefined {
    for (let thread = this.idle.pop(); thread; thread = this.idle.pop()) if (!thread.dead) return thread;
    return undefined;
  }

  private get heapMb(): number {
    return this.options.maxHeapMb ?? DEFAULT_HEAP_MB;
  }

  private spawn(): ComputeThread {
    const worker = new Worker(path.join(__dirname, 'thread.js'), {
      resourceLimits: { maxOldGenerationSizeMb: this.heapMb },
    });
    // A thread does not keep the process alive: one left idle would hold a stopping process up.
    worker.unref();
    return new ComputeThread(worker, (dead) => {
      const at = this.idle.indexOf(dead);
      if (at >= 0) this.idle.splice(at, 1);
    });
  }
}
