/** One problem in a request or document: where (a JSON pointer) and what. Part of the contract's error body. */
export interface ErrorDetail {
  /** JSON pointer into the offending document, e.g. "/steps/1/request/url"; "" for the document itself. */
  path: string;
  message: string;
  /** A 409 limit_exceeded: the workspace limit that was reached, and its maximum. */
  limit?: string;
  max?: number;
  /** A 503 worker_unavailable: the worker build that no worker of is running. */
  build_id?: string;
}

/** The error the workflow fails with, also kept in the memo so that lists can show it without history. */
export interface ExecutionError {
  step: string | null;
  /**
   * Where the failed step is: the containers around it with their run keys, then the step id
   * (`["notify_all", "3", "send"]`); for a top-level step, `[step]`. Absent in runs recorded before containers.
   */
  path?: string[];
  /** A child_failed error: the child execution's own error. */
  details?: unknown[];
  code: string;
  message: string;
}
