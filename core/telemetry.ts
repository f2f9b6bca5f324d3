/**
 * What the API, the workflow code and the activities agree on for observability
 * (docs/operations.md#metrics): where a run's request id travels, and the sink
 * through which workflow code reports how an execution ended (recorded by the worker, never during replay).
 */

/** The memo field holding the id of the request that started the run (absent on scheduled runs). */
export const REQUEST_ID_MEMO = 'request_id';

/** The activity header that carries that request id from the workflow to each activity. */
export const REQUEST_ID_HEADER = 'switchyard-request-id';

/** Final statuses the workflow can see itself (a terminated or timed-out run never runs code again). */
export type ClosedStatus = 'success' | 'failed' | 'canceled';

// A type alias, not an interface: proxySinks() needs its index signature.
export type MetricsSinks = {
  switchyardMetrics: {
    executionClosed(status: ClosedStatus, workspace: string, workflow: string): void;
  };
};
