/**
 * Jobs of many keys (workspaces) sharing a few slots: each key has its own line, and the lines are served
 * in turn, one job each, so a key with a thousand jobs waiting delays another key's next job by at most
 * one job per slot. Jobs of one key keep their order.
 */
export class FairQueue {
  /** Lines by key, in the order they are served next (a served line goes to the back). */
  private readonly lines = new Map<string, (() => Promise<void>)[]>();
  private running = 0;

  constructor(private readonly slots: number) {}

  /** Jobs waiting for a slot, of one key or in all. */
  waiting(key?: string): number {
    if (key !== undefined) return this.lines.get(key)?.length ?? 0;
    let total = 0;
    for (const line of this.lines.values()) total += line.length;
    return total;
  }

  /** Runs `job` when a slot is free and it is `key`'s turn; settles as the job does. */
  run<T>(key: string, job: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const line = this.lines.get(key) ?? [];
      line.push(() => job().then(resolve, reject));
      this.lines.set(key, line);
      this.pump();
    });
  }

  private pump(): void {
    while (this.running < this.slots) {
      const next = this.lines.entries().next();
      if (next.done) return;
      const [key, line] = next.value;
      const job = line.shift()!;
      this.lines.delete(key);
      if (line.length > 0) this.lines.set(key, line);
      this.running += 1;
      void job().finally(() => {
        this.running -= 1;
        this.pump();
      });
    }
  }
}
