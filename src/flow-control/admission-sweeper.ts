/**
 * The admission sweeper (docs/flow-control.md, ARCHITECTURE.md#flow-control): every API process runs one,
 * beside the event dispatcher. Runs take and give back their places themselves (workers/activities/
 * admission.ts); the sweeper repairs what a crash or an operator left behind:
 *
 * - a granted place whose run was not told (a release that died between its commit and its signal):
 *   signaled again after a few seconds;
 * - a key with free places and queued runs (a release that never ran, a limit raised by a new version):
 *   its places granted;
 * - slowly, in turn, rows whose run closed without releasing (terminated from Temporal UI, timed out):
 *   described, and released when the run is gone or closed.
 *
 * It repairs the places of workspaces' caps on open executions (platform/store/workspace-admissions.ts)
 * the same three ways, under the workspace's limit in effect.
 *
 * Every repair takes the key's (or the workspace's) lock like the runs do (platform/store/admissions.ts),
 * so sweepers of several processes and the runs themselves never open more than the limit.
 */
import type { Logger } from '../../platform/logger';
import {
  grantKey,
  keysWithQueue,
  releaseAdmission,
  takeRowsToCheck,
  unsignaledAdmissions,
} from '../../platform/store/admissions';
import {
  grantWorkspace,
  releaseWorkspacePlace,
  takeWorkspaceRowsToCheck,
  unsignaledWorkspaceAdmissions,
  workspacesWithQueue,
} from '../../platform/store/workspace-admissions';
import { signalAdmitted, signalWorkspaceAdmitted } from '../../platform/temporal/admission-signals';
import { isWorkflowRunning } from '../../platform/temporal/run-open';
import type { Services } from '../services';
import { Sweeper } from '../background/sweeper';

export interface AdmissionSweeperOptions {
  sweepMs: number;
  /** How long a granted row may stay untold, or a key's queue wait with places free, before a repair. */
  graceMs: number;
  /** How often rows are checked against their runs, and how long a row waits between two checks. */
  checkEveryMs: number;
  /** Rows checked per pass at most (one describe each). */
  checkBatch: number;
}

export const DEFAULT_ADMISSION_SWEEPER_OPTIONS: AdmissionSweeperOptions = {
  sweepMs: 5_000,
  graceMs: 5_000,
  checkEveryMs: 60_000,
  checkBatch: 50,
};

/** Rows and keys one pass repairs at most. */
const PASS_BATCH = 200;

export class AdmissionSweeper extends Sweeper {
  private readonly logger: Logger;
  private readonly options: AdmissionSweeperOptions;
  private lastCheck = 0;

  constructor(
    private readonly services: Services,
    options: Partial<AdmissionSweeperOptions> = {},
  ) {
    const settings = { ...DEFAULT_ADMISSION_SWEEPER_OPTIONS, ...options };
    super(settings.sweepMs);
    this.options = settings;
    this.logger = services.logger.child({ component: 'admission' });
  }

  protected async pass(): Promise<void> {
    const { db } = this.services;
    const { client } = this.services.temporal;
    const { graceMs } = this.options;
    try {
      const untold = await unsignaledAdmissions(db, graceMs, PASS_BATCH);
      if (untold.length > 0) await signalAdmitted(db, client, untold);
      for (const key of await keysWithQueue(db, graceMs, PASS_BATCH)) {
        if (this.stopped) return;
        const granted = await grantKey(db, key);
        if (granted.length > 0) await signalAdmitted(db, client, granted);
      }
      await this.repairWorkspaces();
      if (Date.now() - this.lastCheck >= this.options.checkEveryMs) {
        this.lastCheck = Date.now();
        await this.checkRuns();
      }
    } catch (error) {
      // The database or Temporal away: the next pass tries again.
      this.logger.warn({ err: error }, 'Admission repairs could not finish; the next sweep tries again');
    }
  }

  /** A workspace's `open_executions` limit in effect. */
  private readonly capOf = (workspaceId: string) =>
    this.services.reads.workspaceLimit(
      workspaceId,
      'open_executions',
      this.services.config.workspaceLimits.open_executions,
    );

  /** The workspaces' caps: untold grants told again, queues with free places granted. */
  private async repairWorkspaces(): Promise<void> {
    const { db } = this.services;
    const { client } = this.services.temporal;
    const { graceMs } = this.options;
    const untold = await unsignaledWorkspaceAdmissions(db, graceMs, PASS_BATCH);
    if (untold.length > 0) await signalWorkspaceAdmitted(db, client, untold, this.capOf);
    for (const workspaceId of await workspacesWithQueue(db, graceMs, PASS_BATCH)) {
      if (this.stopped) return;
      const granted = await grantWorkspace(db, workspaceId, await this.capOf(workspaceId));
      if (granted.length > 0) await signalWorkspaceAdmitted(db, client, granted, this.capOf);
    }
  }

  /** Rows whose run is gone or closed are released (what their run could not do), of both tables. */
  private async checkRuns(): Promise<void> {
    const { db } = this.services;
    const { client } = this.services.temporal;
    const { checkEveryMs, checkBatch } = this.options;
    for (const row of await takeRowsToCheck(db, checkEveryMs, checkBatch)) {
      if (this.stopped) return;
      if (await this.runIsOpen(row.execution_id)) continue;
      const granted = await releaseAdmission(db, row.execution_id, row.seq);
      if (granted.length > 0) await signalAdmitted(db, client, granted);
    }
    for (const row of await takeWorkspaceRowsToCheck(db, checkEveryMs, checkBatch)) {
      if (this.stopped) return;
      if (await this.runIsOpen(row.execution_id)) continue;
      const granted = await releaseWorkspacePlace(db, {
        ...row,
        limit: await this.capOf(row.workspace_id),
      });
      if (granted.length > 0) await signalWorkspaceAdmitted(db, client, granted, this.capOf);
    }
  }

  /** Whether the run of a row is still open; false (logged) when it is gone or closed. */
  private async runIsOpen(executionId: string): Promise<boolean> {
    if (await isWorkflowRunning(this.services.temporal, executionId)) return true;
    this.logger.info({ executionId }, 'Released the place of a run that closed without releasing it');
    return false;
  }
}
