/**
 * The bulk runner (docs/operations.md#bulk-operations): every API process runs one, as it runs the event
 * dispatcher. A created operation is a row with the executions it matched (platform/store/bulk-operations.ts);
 * a runner claims a running operation with a lease (so processes share operations, never one), acts on its
 * executions a few at a time (src/bulk/act.ts), records each outcome, and marks it completed when none is
 * left. A runner that dies leaves its lease to run out; the next claim goes on where it stopped, acting again
 * on the executions it was acting on (every action is safe to repeat).
 *
 * Rate-limited so that it never starves live traffic: at most `actionsPerSecond` actions per process, and
 * one operation at a time per process. A canceled operation stops before its next batch.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../platform/logger';
import {
  claimOperation,
  finishOperation,
  recordOutcome,
  renewLease,
  takeItems,
  type ClaimedOperation,
} from '../../platform/store/bulk-operations';
import type { Services } from '../services';
import { Sweeper } from '../background/sweeper';
import { applyAction } from './act';

export interface BulkRunnerOptions {
  /** How often an idle runner looks for operations (the request that creates one kicks it at once). */
  sweepMs: number;
  /** How long a claim holds an operation; renewed with each batch. */
  leaseMs: number;
  /** Executions acted on at once. */
  batch: number;
  /** Actions per second at most (BULK_ACTIONS_PER_SECOND). */
  actionsPerSecond: number;
}

export const DEFAULT_BULK_RUNNER_OPTIONS: BulkRunnerOptions = {
  sweepMs: 5_000,
  leaseMs: 60_000,
  batch: 10,
  actionsPerSecond: 20,
};

export class BulkRunner extends Sweeper {
  private readonly logger: Logger;
  private readonly options: BulkRunnerOptions;

  constructor(
    private readonly services: Services,
    options: Partial<BulkRunnerOptions> = {},
  ) {
    const settings = { ...DEFAULT_BULK_RUNNER_OPTIONS, ...options };
    super(settings.sweepMs);
    this.options = settings;
    this.logger = services.logger.child({ component: 'bulk' });
  }

  protected async pass(): Promise<void> {
    try {
      while (!this.stopped) {
        const op = await claimOperation(this.services.db, this.options.leaseMs);
        if (!op) return;
        await this.run(op);
      }
    } catch (error) {
      // The database or Temporal away: the sweep tries again; the lease runs out meanwhile.
      this.logger.warn({ err: error }, 'A bulk operation could not go on; the next sweep tries again');
    }
  }

  private async run(op: ClaimedOperation): Promise<void> {
    const { db } = this.services;
    const { batch, leaseMs, actionsPerSecond } = this.options;
    const log = this.logger.child({ workspaceId: op.workspace_id, operationId: op.id, action: op.action });
    log.info('Bulk operation runs');
    while (!this.stopped) {
      if (!(await renewLease(db, op, leaseMs))) {
        log.info('Bulk operation stopped: it was canceled');
        return;
      }
      const items = await takeItems(db, op, batch);
      if (items.length === 0) {
        if (await finishOperation(db, op.workspace_id, op.id, 'completed'))
          log.info('Bulk operation completed');
        return;
      }
      const began = performance.now();
      await Promise.all(
        items.map(async (item) => {
          const outcome = await applyAction(this.services, op, item.execution_id, item.resumed);
          await recordOutcome(db, op, item.execution_id, outcome);
        }),
      );
      // Paced: a batch of n actions takes at least n / actionsPerSecond seconds.
      const due = (items.length / actionsPerSecond) * 1000 - (performance.now() - began);
      if (due > 0) await sleep(due);
    }
  }
}
