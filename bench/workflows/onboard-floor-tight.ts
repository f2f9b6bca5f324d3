/**
 * The onboard scenario's tight floor: the flow as the leanest service on the SDK would write it (its
 * process: bench/onboard/floor-service.ts). The rule inline, then one local activity for the POST, so a
 * run is one workflow task (handed back in the start response when the start is eager).
 *
 * Deterministic workflow code: only @temporalio/workflow, and types of the activities.
 */
import { proxyLocalActivities } from '@temporalio/workflow';
import type { TightFloorActivities } from '../onboard/floor-service-activities';

export const ONBOARD_FLOOR_TIGHT_WORKFLOW_TYPE = 'onboardFloorTight';

export interface OnboardFloorTightInput {
  customer: string;
  plan: string;
  /** With BENCH_FLOOR_PAYLOADS: what our run's input carries besides (its definition's snapshot); unread. */
  run?: unknown;
}

const { notify_onboarded } = proxyLocalActivities<TightFloorActivities>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 3, initialInterval: '1s' },
});

export async function onboardFloorTight(input: OnboardFloorTightInput): Promise<number> {
  const tier = input.plan === 'enterprise' ? 'gold' : 'standard';
  // The plain floor returns the activity's promise itself: no further promise in workflow code.
  if (input.run === undefined) return notify_onboarded({ name: input.customer, tier }) as Promise<number>;
  const answer = await notify_onboarded({ name: input.customer, tier });
  return typeof answer === 'number' ? answer : answer.status;
}
