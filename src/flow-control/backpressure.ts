/**
 * Backpressure (docs/operations.md#backpressure): when the workers fall behind, the trigger endpoints stop
 * accepting new executions instead of queueing them without bound (and every run's latency with them).
 *
 * The measure is Temporal's own: the approximate age of the oldest workflow task waiting on the
 * execution task queue (DescribeTaskQueue with stats), the same for every API process, whatever the
 * number of workers. Past BACKLOG_LIMIT_MS, POST /v1/workflows/{id}/trigger and /v1/hooks/{id} answer
 * 429 `rate_limited` with Retry-After; nothing accepted is ever dropped. The stats are refreshed in the
 * background at most every CHECK_EVERY_MS while triggers arrive, so a trigger never waits for them;
 * when Temporal cannot say, triggers are accepted (the start itself answers 503 if Temporal is down).
 */
import { temporal } from '@temporalio/proto';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import { AppError } from '../../platform/errors';
import { refusalFor } from '../../platform/observability/metrics';
import type { Config } from '../../platform/config';
import type { Logger } from '../../platform/logger';
import type { TemporalConnection } from '../../platform/temporal/connection';

const CHECK_EVERY_MS = 500;
const MAX_RETRY_AFTER_SECONDS = 10;

export interface BacklogState {
  /** Age of the oldest waiting workflow task, ms (0: none). */
  ageMs: number;
  count: number;
  at: number;
}

export class ExecutionBacklog {
  private state: BacklogState | undefined;
  private refreshing: Promise<void> | undefined;

  constructor(
    private readonly services: { temporal: TemporalConnection; config: Config; logger: Logger },
    private readonly limitMs: number,
  ) {}

  /** Throws 429 rate_limited while the backlog is past the limit; refreshes the figures when due. */
  admit(): void {
    if (this.limitMs <= 0) return;
    if (!this.state || Date.now() - this.state.at > CHECK_EVERY_MS) this.refresh();
    const state = this.state;
    if (!state || state.ageMs < this.limitMs) return;
    const retryAfter = Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, Math.ceil(state.ageMs / 2000)));
    throw refusalFor(
      new AppError(
        429,
        'rate_limited',
        `The service is behind: new executions wait ${(state.ageMs / 1000).toFixed(1)} s to start (${state.count} waiting). Retry in ${retryAfter} s.`,
        { headers: { 'Retry-After': String(retryAfter) } },
      ),
      'backpressure',
    );
  }

  private refresh(): void {
    this.refreshing ??= this.read()
      .then((state) => {
        this.state = state;
      })
      .catch((error: unknown) => {
        this.state = undefined;
        this.services.logger.debug({ err: error }, 'Could not read the execution task queue backlog');
      })
      .finally(() => {
        this.refreshing = undefined;
      });
  }

  private async read(): Promise<BacklogState> {
    const { connection, namespace } = this.services.temporal;
    const response = await connection.withDeadline(Date.now() + 2000, () =>
      connection.workflowService.describeTaskQueue({
        namespace,
        taskQueue: { name: this.services.config.temporal.taskQueue },
        taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
        reportStats: true,
      }),
    );
    const stats = response.stats;
    return {
      ageMs: optionalTsToMs(stats?.approximateBacklogAge) ?? 0,
      count: Number(stats?.approximateBacklogCount ?? 0),
      at: Date.now(),
    };
  }
}
