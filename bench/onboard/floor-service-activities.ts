/**
 * The tight floor's one activity (bench/workflows/onboard-floor-tight.ts), run as a local activity in
 * the floor service's process: POST the customer and tier to the receiver.
 */
import { Context } from '@temporalio/activity';
import { post_json } from '../floor-activities';

export function createTightFloorActivities(options: {
  /** Where to POST. */
  url: string;
  /** Told the workflow id once an attempt of the POST is done: the run's one workflow task then completes. */
  onDone: (workflowId: string) => void;
}) {
  return {
    /** POST the body, answer the status (a 5xx or a network error is retried). */
    async notify_onboarded(body: { name: string; tier: string }): Promise<number> {
      try {
        return await post_json(options.url, body);
      } finally {
        const workflowId = Context.current().info.workflowExecution?.workflowId;
        if (workflowId !== undefined) options.onDone(workflowId);
      }
    },
  };
}

export type TightFloorActivities = ReturnType<typeof createTightFloorActivities>;
