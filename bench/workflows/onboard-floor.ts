/**
 * The onboard scenario's floor: the same flow hand-written on the raw SDK, as a developer would write
 * it without Switchyard — the rule evaluated inline in workflow code, one activity for the HTTP POST.
 *
 * Deterministic workflow code: only @temporalio/workflow, and types of the activities.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { FloorActivities } from '../floor-activities';

export const ONBOARD_FLOOR_WORKFLOW_TYPE = 'onboardFloor';

export interface OnboardFloorInput {
  customer: string;
  plan: string;
  /** Where to POST the result. */
  url: string;
}

const { post_json } = proxyActivities<FloorActivities>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 3, initialInterval: '1s' },
});

export async function onboardFloor(input: OnboardFloorInput): Promise<number> {
  const tier = input.plan === 'enterprise' ? 'gold' : 'standard';
  return post_json(input.url, { name: input.customer, tier });
}
