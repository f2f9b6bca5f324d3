/**
 * The demo workflow seeded on first start: routes a new customer by plan and composes a welcome
 * message. Rules steps only, so it succeeds offline; `plan: "banned"` shows a failed run.
 */
import type { Definition } from '../core/definitions/schema';

export const CUSTOMER_ONBOARDING: Definition = {
  id: 'customer-onboarding',
  name: 'Customer onboarding',
  description:
    'Demo: routes a new customer by plan, then composes a welcome message. Try plan "enterprise", "starter" or "banned".',
  trigger: { type: 'api' },
  input_schema: {
    type: 'object',
    required: ['customer', 'plan'],
    properties: {
      customer: { type: 'string', minLength: 1 },
      plan: { type: 'string', minLength: 1 },
    },
  },
  steps: [
    {
      id: 'route',
      name: 'Route by plan',
      kind: 'rules',
      rules: [
        { when: "input.plan = 'enterprise'", output: { tier: 'high', account_manager: true } },
        { when: "input.plan = 'banned'", action: 'fail', message: 'plan not allowed' },
      ],
      default: { tier: 'standard', account_manager: false },
    },
    {
      id: 'welcome',
      name: 'Compose welcome message',
      kind: 'rules',
      rules: [
        {
          when: 'steps.route.output.account_manager',
          output: {
            message: 'Welcome aboard, {{ input.customer }}! Your account manager will call you today.',
          },
        },
      ],
      default: { message: 'Welcome, {{ input.customer }}! You are on the {{ input.plan }} plan.' },
    },
  ],
};
