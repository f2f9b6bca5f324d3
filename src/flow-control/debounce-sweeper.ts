/**
 * The debounce sweeper (docs/flow-control.md#debounce, ARCHITECTURE.md#flow-control): every API process runs
 * one. It repairs what a death left behind, so that no trigger a debounce accepted is lost:
 * - a row whose run was never started (the trigger's process died between committing the row and
 *   Temporal's start) is started from the row's `start`, under the execution's id (a start that did happen
 *   meanwhile is refused by Temporal, and then counts as done);
 * - a waiting row long past its due time belongs to a run that ended without closing it (terminated in
 *   Temporal UI, or timed out by the definition's `timeout`): once Temporal says the run is closed or gone,
 *   the row goes, so that the key's next trigger makes a new execution instead of joining a closed one.
 */
import type { Logger } from '../../platform/logger';
import { closeDebounce, overdueDebounces, unstartedDebounces } from '../../platform/store/debounces';
import type { ExecutionInput } from '../../core/execution-types';
import type { Services } from '../services';
import { Sweeper } from '../background/sweeper';
import { startExecutionWorkflow } from '../executions/trigger';
import { startOrClose } from './debounce';
import { isWorkflowRunning } from '../../platform/temporal/run-open';

export interface DebounceSweeperOptions {
  sweepMs: number;
  /** How long after its row a run may still be being started by its trigger. */
  startGraceMs: number;
  /** How long past its due time a waiting row may be before its run is checked. */
  lateMs: number;
}

export const DEFAULT_DEBOUNCE_SWEEPER_OPTIONS: DebounceSweeperOptions = {
  sweepMs: 2_000,
  startGraceMs: 10_000,
  lateMs: 60_000,
};

/** Rows one pass handles at most. */
const PASS_BATCH = 100;

export class DebounceSweeper extends Sweeper {
  private readonly logger: Logger;
  private readonly options: DebounceSweeperOptions;

  constructor(
    private readonly services: Services,
    options: Partial<DebounceSweeperOptions> = {},
  ) {
    const settings = { ...DEFAULT_DEBOUNCE_SWEEPER_OPTIONS, ...options };
    super(settings.sweepMs);
    this.options = settings;
    this.logger = services.logger.child({ component: 'debounce' });
  }

  protected async pass(): Promise<void> {
    const { db } = this.services;
    try {
      for (const row of await unstartedDebounces(db, this.options.startGraceMs, PASS_BATCH)) {
        if (this.stopped) return;
        await startOrClose(this.services, row.execution_id, () =>
          startExecutionWorkflow(this.services, row.execution_id, row.start as ExecutionInput),
        );
        this.logger.info(
          { executionId: row.execution_id },
          'Started a debounced run its trigger left unstarted',
        );
      }
      for (const executionId of await overdueDebounces(db, this.options.lateMs, PASS_BATCH)) {
        if (this.stopped) return;
        if (await isWorkflowRunning(this.services.temporal, executionId)) continue;
        await closeDebounce(db, executionId);
        this.logger.info({ executionId }, 'Closed the debounce of a run that ended without closing it');
      }
    } catch (error) {
      // The database or Temporal away: the next pass tries again.
      this.logger.warn({ err: error }, 'Debounce repairs could not finish; the next sweep tries again');
    }
  }
}
