/**
 * The Temporal timers of sleep steps, from an execution's history: a sleep's timer carries the step's key
 * (its run path and id) as its summary (workers/workflows/sleep.ts), so its TimerStarted event names the
 * step, and its TimerFired or TimerCanceled event says when the sleep ended. Other timers (a retry's
 * interval, an approval's timeout) have no summary and are left out. Pure: events in, timers out.
 */
import { defaultPayloadConverter } from '@temporalio/common';
import { optionalTsToDate } from '@temporalio/common/lib/time';
import type { temporal } from '@temporalio/proto';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** A sleep step's timer: when it fired, or was canceled (a container that halted). */
export interface SleepTimer {
  firedAt?: Date;
  canceledAt?: Date;
}

export class SleepTimers {
  /** By the sleeping step's key. */
  readonly byStep = new Map<string, SleepTimer>();
  private readonly byTimerId = new Map<string, SleepTimer>();

  started(event: HistoryEvent): void {
    const key = summaryOf(event);
    const timerId = event.timerStartedEventAttributes?.timerId;
    if (key === undefined || !timerId) return;
    const timer: SleepTimer = {};
    this.byStep.set(key, timer);
    this.byTimerId.set(timerId, timer);
  }

  fired(event: HistoryEvent): void {
    const timer = this.byTimerId.get(event.timerFiredEventAttributes?.timerId ?? '');
    if (timer) timer.firedAt = optionalTsToDate(event.eventTime);
  }

  canceled(event: HistoryEvent): void {
    const timer = this.byTimerId.get(event.timerCanceledEventAttributes?.timerId ?? '');
    if (timer) timer.canceledAt = optionalTsToDate(event.eventTime);
  }
}

/** The summary an event's user metadata carries (decoded: history-mapper.ts decodeHistory), if a string. */
function summaryOf(event: HistoryEvent): string | undefined {
  const payload = event.userMetadata?.summary;
  if (!payload) return undefined;
  try {
    const summary: unknown = defaultPayloadConverter.fromPayload(payload);
    return typeof summary === 'string' ? summary : undefined;
  } catch {
    return undefined;
  }
}
