/**
 * The flow users compare with n8n: a signed inbound hook → a `rules` step (enterprise plans
 * get the gold tier) → a `connector` step POSTing the customer and tier to a receiver.
 */
import type { Definition } from '../../core/definitions/schema';
import { CUSTOMER_INPUT_SCHEMA } from '../scenarios/common';

export const ONBOARD_WORKFLOW_ID = 'onboard';

export function onboardDefinition(receiverUrl: string): Definition {
  return {
    id: ONBOARD_WORKFLOW_ID,
    name: 'Onboarding (benchmark)',
    trigger: { type: 'webhook' },
    input_schema: CUSTOMER_INPUT_SCHEMA,
    steps: [
      {
        id: 'route',
        kind: 'rules',
        rules: [{ when: "input.plan = 'enterprise'", output: { tier: 'gold' } }],
        default: { tier: 'standard' },
      },
      {
        id: 'notify',
        kind: 'connector',
        connector: 'http',
        request: {
          method: 'POST',
          url: `${receiverUrl}/onboarded`,
          body: { name: '{{ input.customer }}', tier: '{{ steps.route.output.tier }}' },
        },
      },
    ],
  };
}

export interface OnboardInput {
  customer: string;
  plan: 'enterprise' | 'pro';
}

/** Every other customer is on the enterprise plan: both rule outcomes, in equal numbers. */
export function onboardInput(customer: string, index: number): OnboardInput {
  return { customer, plan: index % 2 === 0 ? 'enterprise' : 'pro' };
}
