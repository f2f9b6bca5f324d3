/**
 * The tight floor's one activity (bench/workflows/onboard-floor-tight.ts), run as a local activity in
 * the floor service's process: POST the customer and tier to the receiver.
 */
import { Context } from '@temporalio/activity';
import { post_json, post_json_answer } from '../floor-activities';

/** What the activity answers with `records`: the status, and the run's step records shaped as ours. */
export interface NotifiedWithRecords {
  status: number;
  records: unknown[];
}

export function createTightFloorActivities(options: {
  /** Where to POST. */
  url: string;
  /** Told the workflow id once an attempt of the POST is done: the run's one workflow task then completes. */
  onDone: (workflowId: string) => void;
  /**
   * Answer the step records our run_steps answers (the rule's and the call's: times, the request, the
   * response's status, headers and body) besides the status (BENCH_FLOOR_PAYLOADS), so that the run's
   * marker carries as much as ours.
   */
  records?: boolean;
}) {
  return {
    /** POST the body, answer the status (a 5xx or a network error is retried). */
    async notify_onboarded(body: { name: string; tier: string }): Promise<number | NotifiedWithRecords> {
      try {
        if (!options.records) return await post_json(options.url, body);
        const started = new Date().toISOString();
        const answer = await post_json_answer(options.url, body);
        const finished = new Date().toISOString();
        const record = { started_at: started, finished_at: started, status: 'success', attempts: 1 };
        return {
          status: answer.status,
          records: [
            { ...record, id: 'route', output: { tier: body.tier }, error: null },
            {
              ...record,
              finished_at: finished,
              id: 'notify',
              input: { method: 'POST', url: options.url, body },
              output: answer,
              error: null,
            },
          ],
        };
      } finally {
        const workflowId = Context.current().info.workflowExecution?.workflowId;
        if (workflowId !== undefined) options.onDone(workflowId);
      }
    },
  };
}

export type TightFloorActivities = ReturnType<typeof createTightFloorActivities>;
