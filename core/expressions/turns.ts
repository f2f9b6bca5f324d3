/**
 * Whose evaluation runs on a thread. Evaluations are chains of promises (JSONata awaits every node), so
 * evaluations started in the same turn of the event loop would otherwise interleave node by node, each
 * one's clock counting all the others' work, and a hundred of them would hold the thread between two
 * looks at the network. Here one evaluation runs at a time, a slice of its steps (limits.ts pauses it
 * every few thousand), and each slice after a pause starts in a later turn of the event loop: the time
 * an evaluation measures is its own, and the thread serves its other work (HTTP requests, Temporal's
 * tasks) between every two slices, however many evaluations wait.
 */
export class EvaluationTurns {
  /** Whether an evaluation holds the thread, or is about to (its turn is scheduled). */
  private held = false;
  /** Evaluations waiting for a turn, in order. */
  private readonly waiting: (() => void)[] = [];

  /** `schedule` runs a function in a later turn of the event loop (setImmediate in Node). */
  constructor(private readonly schedule: (run: () => void) => void) {}

  /** Waits for a turn: none when no evaluation holds the thread or waits for it. */
  take(): Promise<void> | undefined {
    if (!this.held) {
      this.held = true;
      return undefined;
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /**
   * Ends the holder's slice: it goes on once every evaluation waiting before it had a slice, the next in a
   * later turn of the event loop.
   */
  pass(): Promise<void> {
    const resumed = new Promise<void>((resolve) => this.waiting.push(resolve));
    this.schedule(this.handOn());
    return resumed;
  }

  /**
   * Ends the holder's evaluation. The next goes on at once: an evaluation's end is no slice's, and most
   * are short (a step's `if`, a rule), so that those started together end in the same turn of the event
   * loop as they would without turns.
   */
  release(): void {
    this.handOn()();
  }

  /** Who runs next: the first waiting, or nobody (the thread is free). */
  private handOn(): () => void {
    const next = this.waiting.shift();
    if (next === undefined) {
      this.held = false;
      return () => undefined;
    }
    return next;
  }
}
