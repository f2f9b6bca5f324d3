/**
 * Admission of new executions in a process that runs the worker too (`npm start`): at most `limit`
 * executions this process accepted have not begun their steps yet; a further trigger waits for one of
 * them to begin (first in, first out), and after `maxWaitMs` answers 429 `rate_limited` with
 * Retry-After. So callers are paced by how fast the worker takes runs up, instead of filling a backlog
 * that every later run would wait behind: a new run waits for at most `limit` others, whatever the
 * load. Runs whose steps are slow (a third party taking its time) do not count: they have begun.
 * Nothing accepted is ever dropped; a refused trigger started nothing.
 *
 * An execution leaves when its first batch of steps begins (the step local activity, in this very
 * process, says so: `release`), or after `holdMs` at the latest (a run that another process took up
 * must not block the gate). API processes without a worker have no such signal: they rely on
 * Temporal's task-queue backlog instead (backpressure.ts).
 */
import { AppError } from '../errors';
import { refusalFor } from '../observability/metrics';

export interface AdmissionOptions {
  /** Accepted executions whose steps have not begun, at most. */
  limit: number;
  /** How long a trigger may wait for its turn before it is refused. */
  maxWaitMs: number;
  /** Longest an execution holds its place. @default 10000 */
  holdMs?: number;
}

interface Waiter {
  /** Takes the freed place now (not a microtask later, where a new trigger could take it too). */
  admit: () => void;
  timer: NodeJS.Timeout;
}

export class AdmissionGate {
  private readonly holding = new Map<string, NodeJS.Timeout>();
  private readonly queue: Waiter[] = [];

  constructor(private readonly options: AdmissionOptions) {}

  /** Executions holding a place now. */
  get inFlight(): number {
    return this.holding.size;
  }

  /**
   * Takes a place for `executionId`, waiting for one if need be; throws 429 after maxWaitMs. False when
   * the execution holds one already (a repeated request).
   */
  async admit(executionId: string): Promise<boolean> {
    if (this.holding.size < this.options.limit && this.queue.length === 0) return this.hold(executionId);
    if (this.holding.has(executionId)) return false;
    return new Promise<boolean>((resolve, reject) => {
      const waiter: Waiter = {
        admit: () => {
          clearTimeout(waiter.timer);
          const took = this.hold(executionId);
          // A repeated request that waited in line behind its own first one takes no place: pass it on.
          if (!took) this.queue.shift()?.admit();
          resolve(took);
        },
        timer: setTimeout(() => {
          this.queue.splice(this.queue.indexOf(waiter), 1);
          reject(this.refusal());
        }, this.options.maxWaitMs),
      };
      this.queue.push(waiter);
    });
  }

  /** The execution's steps began (or it will not start): its place goes to the next. */
  release(executionId: string): void {
    const timer = this.holding.get(executionId);
    if (!timer) return;
    clearTimeout(timer);
    this.holding.delete(executionId);
    this.queue.shift()?.admit();
  }

  /** False when the execution holds a place already. */
  private hold(executionId: string): boolean {
    if (this.holding.has(executionId)) return false;
    const timer = setTimeout(() => this.release(executionId), this.options.holdMs ?? 10_000);
    timer.unref();
    this.holding.set(executionId, timer);
    return true;
  }

  private refusal(): AppError {
    const seconds = Math.max(1, Math.ceil(this.options.maxWaitMs / 2000));
    return refusalFor(
      new AppError(
        429,
        'rate_limited',
        `The service is busy: this execution waited ${(this.options.maxWaitMs / 1000).toFixed(1)} s for its turn to start. Retry in ${seconds} s.`,
        { headers: { 'Retry-After': String(seconds) } },
      ),
      'backpressure',
    );
  }
}
