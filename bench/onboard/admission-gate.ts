/**
 * The tight floor's admission gate (bench/onboard/floor-service.ts): at most `limit` runs in flight, a
 * run being in flight from its admission until its first workflow task is done; further triggers wait
 * their turn, first come first served. It keeps the worker's queue short, so a run's latency stays near
 * its work rather than its wait behind others.
 */
export class AdmissionGate {
  private readonly inFlight = new Set<string>();
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  /** Resolves once `runId` may start; it counts as in flight until release(runId). */
  async admit(runId: string): Promise<void> {
    while (this.inFlight.size >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.inFlight.add(runId);
  }

  /** Ends `runId`'s turn (once: a second release of the same run does nothing) and lets the next one in. */
  release(runId: string): void {
    if (this.inFlight.delete(runId)) this.waiting.shift()?.();
  }
}
