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
 * The decision is taken in the activity and travels in its result, so it is recorded in the local
 * activity's marker: a replay reads it back and never asks again (workflow code stays deterministic).
 * The count is per process: a deployment of several workers lets a workspace hold `perWorkspace`
 * calls in each.
 */
export class WorkspaceStepSlots {
  private readonly held = new Map<string, number>();

  constructor(readonly perWorkspace: number) {
    if (!Number.isInteger(perWorkspace) || perWorkspace < 1)
      throw new RangeError(`perWorkspace must be a positive integer, got ${perWorkspace}`);
  }

  /** A slot for one call of `workspaceId`, released by the function returned; undefined when none is free. */
  tryAcquire(workspaceId: string): (() => void) | undefined {
    const held = this.held.get(workspaceId) ?? 0;
    if (held >= this.perWorkspace) return undefined;
    this.held.set(workspaceId, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
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
