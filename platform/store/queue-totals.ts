/**
 * What flow control holds, per workflow, for the queue gauges of `/metrics` (docs/operations.md#metrics):
 * the runs queued at either gate or waiting for their debounce, and the places open under `concurrency`,
 * counted as the queue endpoint counts them (src/flow-control/queue.ts), for every workflow at once. Read
 * from the tables rather than counted in the process, so that every process reports the same numbers
 * whichever process admitted the runs.
 */
import type { Queryable } from './db';

export interface WorkflowQueueTotals {
  /** Null for the row that sums every workflow past the `top` busiest. */
  workspace_id: string | null;
  workflow_id: string | null;
  queued: number;
  open: number;
}

/**
 * One grouped statement: the `top` busiest workflows (queued and open together), and one row (ids null)
 * for all the others, so that the rows always add up to the totals while their number stays bounded.
 * Workflows with nothing queued or open have no row.
 */
export async function queueTotalsByWorkflow(db: Queryable, top: number): Promise<WorkflowQueueTotals[]> {
  return db.query<WorkflowQueueTotals>(
    `with counts as (
       select workspace_id, workflow_id,
              count(*) filter (where state = 'queued') as queued,
              count(*) filter (where state = 'open') as open
         from admissions group by workspace_id, workflow_id
       union all
       select workspace_id, workflow_id, count(*) as queued, 0 as open
         from throttle_waits where state = 'queued' group by workspace_id, workflow_id
       union all
       select workspace_id, workflow_id, count(*) as queued, 0 as open
         from debounces where state = 'waiting' group by workspace_id, workflow_id
     ), per_workflow as (
       select workspace_id, workflow_id, sum(queued) as queued, sum(open) as open
         from counts group by workspace_id, workflow_id
     ), ranked as (
       select *, row_number() over (order by queued + open desc, workspace_id, workflow_id) as n
         from per_workflow
     )
     select case when n <= $1 then workspace_id end as workspace_id,
            case when n <= $1 then workflow_id end as workflow_id,
            sum(queued)::int as queued, sum(open)::int as open
       from ranked group by 1, 2`,
    [top],
  );
}
