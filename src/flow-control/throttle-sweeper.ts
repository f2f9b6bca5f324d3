/**
 * The throttle sweeper (docs/flow-control.md#throttle, ARCHITECTURE.md#flow-control): every API process runs
 * one. A throttle's queue waits for its window to free a start; the grant that filled the window wrote when
 * that happens (`throttle_keys.next_at`), and this sweeper, every `sweepMs` (a quarter of a second: the
 * precision of a throttle), grants the keys whose time came and signals the runs granted. It also signals
 * again the granted runs that were not told (a grant that died between its commit and its signal), and
 * forgets granted rows a day old (their runs took their start long ago).
 *
 * Grants take the key's lock (platform/store/throttles.ts), so sweepers of several processes never grant
 * more than the window allows.
 */
import type { Logger } from '../../platform/logger';
import {
  dueThrottleKeys,
  forgetOldThrottleWaits,
  grantThrottleKey,
  unsignaledThrottleWaits,
} from '../../platform/store/throttles';
import { signalThrottleAdmitted } from '../../platform/temporal/admission-signals';
import type { Services } from '../services';
import { Sweeper } from '../background/sweeper';

export interface ThrottleSweeperOptions {
  sweepMs: number;
  /** How long a granted row may stay untold before it is signaled again. */
  graceMs: number;
}

export const DEFAULT_THROTTLE_SWEEPER_OPTIONS: ThrottleSweeperOptions = { sweepMs: 250, graceMs: 5_000 };

/** Keys and rows one pass handles at most. */
const PASS_BATCH = 200;
/** How often granted rows a day old are forgotten. */
const FORGET_EVERY_MS = 60_000;

export class ThrottleSweeper extends Sweeper {
  private readonly logger: Logger;
  private readonly options: ThrottleSweeperOptions;
  private lastUntold = 0;
  private lastForget = 0;

  constructor(
    private readonly services: Services,
    options: Partial<ThrottleSweeperOptions> = {},
  ) {
    const settings = { ...DEFAULT_THROTTLE_SWEEPER_OPTIONS, ...options };
    super(settings.sweepMs);
    this.options = settings;
    this.logger = services.logger.child({ component: 'throttle' });
  }

  protected async pass(): Promise<void> {
    const { db } = this.services;
    const { client } = this.services.temporal;
    try {
      for (const key of await dueThrottleKeys(db, PASS_BATCH)) {
        if (this.stopped) return;
        const granted = await grantThrottleKey(db, key.key_id, key.workspace_id);
        if (granted.length > 0) await signalThrottleAdmitted(db, client, granted);
      }
      const now = Date.now();
      if (now - this.lastUntold >= this.options.graceMs) {
        this.lastUntold = now;
        const untold = await unsignaledThrottleWaits(db, this.options.graceMs, PASS_BATCH);
        if (untold.length > 0) await signalThrottleAdmitted(db, client, untold);
      }
      if (now - this.lastForget >= FORGET_EVERY_MS) {
        this.lastForget = now;
        await forgetOldThrottleWaits(db);
      }
    } catch (error) {
      // The database or Temporal away: the next pass tries again.
      this.logger.warn({ err: error }, 'Throttle grants could not finish; the next sweep tries again');
    }
  }
}
