/**
 * Admission of new executions in a process that runs the worker too (`npm start`): at most `limit`
 * executions this process accepted have not begun their steps yet; a further trigger waits for one of
 * them to begin, and after `maxWaitMs` answers 429 `rate_limited` with
 * Retry-After. So callers are paced by how fast the worker takes runs up, instead of filling a backlog
 * that every later run would wait behind: a new run waits for at most `limit` others, whatever the
 * load. Runs whose steps are slow (a third party taking its time) do not count: they have begun.
 * Nothing accepted is ever dropped; a refused trigger started nothing.
 *
 * Waiting triggers queue per workspace, and a freed place goes to the workspaces in turn (round-robin;
 * first in, first out within one workspace): a workspace that floods the service with triggers waits
 * behind its own, while another workspace's trigger takes the next place; and a workspace that holds no
 * place takes one at once, past the limit if need be (docs/operations.md#fair-sharing-of-workers).
 *
 * An execution leaves when its first batch of steps begins (the step local activity, in this very
 * process, says so: `release`), or after `holdMs` at the latest (a run that another process took up
 * must not block the gate). API processes without a worker have no such signal: they rely on
 * Temporal's task-queue backlog instead (backpressure.ts).
 */
import { AppError } from '../../platform/errors';
import { refusalFor } from '../../platform/observability/metrics';

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
  private readonly holding = new Map<string, { timer: NodeJS.Timeout; workspaceId: string }>();
  /** Places held per workspace. */
  private readonly heldBy = new Map<string, number>();
  /** Waiting triggers by workspace; a workspace's turn comes in the map's order (see next()). */
  private readonly queues = new Map<string, Waiter[]>();

  constructor(private readonly options: AdmissionOptions) {}

  /** Executions holding a place now. */
  get inFlight(): number {
    return this.holding.size;
  }

  /**
   * Takes a place for `executionId` of `workspaceId`, waiting for one if need be; throws 429 after
   * maxWaitMs. False when the execution holds one already (a repeated request).
   */
  async admit(executionId: string, workspaceId = ''): Promise<boolean> {
    if (this.holding.size < this.options.limit && this.queues.size === 0)
      return this.hold(executionId, workspaceId);
    if (this.holding.has(executionId)) return false;
    // A workspace that holds no place and waits for none takes one at once, even past the limit: a flood
    // of other workspaces never makes its first run wait (the overshoot is one place per workspace).
    if (!this.heldBy.has(workspaceId) && !this.queues.has(workspaceId))
      return this.hold(executionId, workspaceId);
    return new Promise<boolean>((resolve, reject) => {
      const waiter: Waiter = {
        admit: () => {
          clearTimeout(waiter.timer);
          const took = this.hold(executionId, workspaceId);
          // A repeated request that waited in line behind its own first one takes no place: pass it on.
          if (!took) this.next()?.admit();
          resolve(took);
        },
        timer: setTimeout(() => {
          const queue = this.queues.get(workspaceId);
          if (queue) {
            queue.splice(queue.indexOf(waiter), 1);
            if (queue.length === 0) this.queues.delete(workspaceId);
          }
          reject(this.refusal());
        }, this.options.maxWaitMs),
      };
      const queue = this.queues.get(workspaceId);
      if (queue) queue.push(waiter);
      else this.queues.set(workspaceId, [waiter]);
    });
  }

  /** The next waiting trigger: the first of the workspace whose turn it is, which then goes last. */
  private next(): Waiter | undefined {
    for (const [workspaceId, queue] of this.queues) {
      this.queues.delete(workspaceId);
      const waiter = queue.shift();
      if (queue.length > 0) this.queues.set(workspaceId, queue);
      if (waiter) return waiter;
    }
    return undefined;
  }

  /** The execution's steps began (or it will not start): its place goes to the next. */
  release(executionId: string): void {
    const held = this.holding.get(executionId);
    if (!held) return;
    clearTimeout(held.timer);
    this.holding.delete(executionId);
    const count = (this.heldBy.get(held.workspaceId) ?? 1) - 1;
    if (count > 0) this.heldBy.set(held.workspaceId, count);
    else this.heldBy.delete(held.workspaceId);
    // Past the limit (places taken by workspaces' first runs), a freed place is not handed on.
    if (this.holding.size < this.options.limit) this.next()?.admit();
  }

  /** False when the execution holds a place already. */
  private hold(executionId: string, workspaceId: string): boolean {
    if (this.holding.has(executionId)) return false;
    const timer = setTimeout(() => this.release(executionId), this.options.holdMs ?? 10_000);
    timer.unref();
    this.holding.set(executionId, { timer, workspaceId });
    this.heldBy.set(workspaceId, (this.heldBy.get(workspaceId) ?? 0) + 1);
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
