/** Workflows the console's browser tests share. */
import { uniqueId } from '../support/fixtures';

/** A workflow that fails at its first step for plan "banned" and asks for an approval for "enterprise". */
export function onboardingDefinition(id = uniqueId('onboard')): Record<string, unknown> {
  return {
    id,
    name: 'Onboarding',
    input_schema: {
      type: 'object',
      required: ['customer', 'plan'],
      properties: {
        customer: { type: 'string', minLength: 1 },
        plan: { type: 'string', enum: ['starter', 'pro', 'enterprise', 'banned'] },
      },
    },
    steps: [
      {
        id: 'route',
        name: 'Route by plan',
        kind: 'rules',
        rules: [
          { when: 'input.plan = "banned"', action: 'fail', message: 'plan not allowed' },
          { when: 'input.plan = "enterprise"', output: { tier: 'high' } },
        ],
        default: { tier: 'standard' },
      },
      {
        id: 'review',
        kind: 'approval',
        if: 'steps.route.output.tier = "high"',
        message: 'Approve {{ input.customer }}?',
        timeout: '1h',
      },
      { id: 'welcome', kind: 'rules', rules: [], default: { message: 'Welcome aboard' } },
    ],
  };
}
