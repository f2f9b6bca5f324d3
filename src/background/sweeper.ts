/**
 * Background work whose pass runs when kicked (a request stored work for it) and every `sweepMs` as a
 * safety net (work a process that died left behind, or work whose try failed): never two passes at once,
 * and a kick during a pass runs one more after it (the pass may have missed what the kick was for). The
 * event dispatcher (src/events/dispatcher.ts) and the bulk runner (src/bulk/runner.ts) run on one.
 */
export abstract class Sweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private halted = false;

  constructor(private readonly sweepMs: number) {}

  /** One pass of the work; it logs what goes wrong rather than throw. */
  protected abstract pass(): Promise<void>;

  /** Whether stop() was called: a pass checks it between its steps. */
  get stopped(): boolean {
    return this.halted;
  }

  /** Runs a pass now, then every `sweepMs`. */
  start(): void {
    this.kick();
    this.timer = setInterval(() => this.kick(), this.sweepMs);
    this.timer.unref();
  }

  /** Runs a pass now; during one, once more after it. */
  kick(): void {
    if (this.halted) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.pass().finally(() => {
      this.running = undefined;
      if (!this.again) return;
      this.again = false;
      this.kick();
    });
  }

  /** Stops sweeping and waits for the pass in progress. */
  async stop(): Promise<void> {
    this.halted = true;
    clearInterval(this.timer);
    await this.running;
  }
}
