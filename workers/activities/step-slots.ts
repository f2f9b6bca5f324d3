/**
 * Fair sharing of this worker's step local activities between workspaces (docs/operations.md#fair-sharing-of-workers).
 *
 * A connector or ai step's first attempt runs inside the `run_steps` local activity, and holds one of
 * the worker's local activity slots (WORKER_LOCAL_ACTIVITY_SLOTS) and its run's workflow task slot for
 * as long as the call takes. Without a cap, one workspace flooding slow connector steps would hold them
 * all, and every other workspace's steps would queue behind it. Here each workspace may run at most
 * `perWorkspace` such calls at once in this worker; past that, the step is handed to the workflow
 * unattempted (`next: defer`) and runs as a regular activity on the task queue, where Temporal's
 * fairness keys (the run's workspace) share the worker's activity slots between workspaces.
 *
 * Work-conserving: past its share, a workspace may still take a call while the worker's calls in all
 * (every workspace's) stay under `borrowUpTo`, which the worker sets to half its workflow task or local
 * activity slots (the fewer). A deferral costs the run an activity task and a workflow task more; on a
 * worker that nobody else uses it buys no fairness, so one workspace's burst runs in the local activity.
 * The other half is never borrowed: every other workspace still finds its share free there.
 *
 * The decision is taken in the activity and travels in its result, so it is recorded in the local
 * activity's marker: a replay reads it back and never asks again (workflow code stays deterministic).
 * The count is per process: a deployment of several workers lets a workspace hold `perWorkspace`
 * calls in each.
 */
export class WorkspaceStepSlots {
  private readonly held = new Map<string, number>();
  private total = 0;

  constructor(
    readonly perWorkspace: number,
    readonly borrowUpTo = perWorkspace,
  ) {
    if (!Number.isInteger(perWorkspace) || perWorkspace < 1)
      throw new RangeError(`perWorkspace must be a positive integer, got ${perWorkspace}`);
  }

  /** A slot for one call of `workspaceId`, released by the function returned; undefined when none is free. */
  tryAcquire(workspaceId: string): (() => void) | undefined {
    const held = this.held.get(workspaceId) ?? 0;
    if (held >= this.perWorkspace && this.total >= this.borrowUpTo) return undefined;
    this.held.set(workspaceId, held + 1);
    this.total += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total -= 1;
      const now = (this.held.get(workspaceId) ?? 1) - 1;
      if (now <= 0) this.held.delete(workspaceId);
      else this.held.set(workspaceId, now);
    };
  }

  /** Calls `workspaceId` runs in this worker now. */
  heldBy(workspaceId: string): number {
    return this.held.get(workspaceId) ?? 0;
  }
}
