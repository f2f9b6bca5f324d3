/**
 * The five_step_e2e scenario's baseline: its five-step workflow written by hand as a plain Temporal
 * workflow, without the definition interpreter. Same activities (`rules`, `connector_http`) in the same
 * order, with the inputs the execution workflow computes for the `bench-five-step` definition (built
 * from FIVE_STEP_RULES below), and the activity options stepActivityOptions gives its steps (activity
 * id = step id, summary, timeout, default retry; heartbeat and cancellation type for connectors).
 *
 * Deterministic workflow code: only @temporalio/workflow, and types of the activities.
 */
import { ActivityCancellationType, proxyActivities, type ActivityOptions } from '@temporalio/workflow';
import type { Activities } from '../../workers/activities';

type RulesInput = Parameters<Activities['rules']>[0];
type HttpResponse = Awaited<ReturnType<Activities['connector_http']>>;

/** Workflow type of the baseline runs. */
export const BASELINE_WORKFLOW_TYPE = 'fiveStepBaseline';

export interface FiveStepInput {
  customer: string;
  plan: string;
}

export interface BaselineInput {
  workspaceId: string;
  /** Base URL of the receiver the connector steps call. */
  receiverUrl: string;
  input: FiveStepInput;
}

/** The rules of the three rules steps; the API's definition uses the very same ones. */
export const FIVE_STEP_RULES: Readonly<Record<'classify' | 'check' | 'summary', Omit<RulesInput, 'data'>>> = {
  classify: {
    rules: [{ when: "input.plan = 'enterprise'", output: { tier: 'high' } }],
    default: { tier: 'standard' },
  },
  check: {
    rules: [
      {
        when: 'steps.crm.output.status = 200',
        output: { synced: true, account: '{{ steps.crm.output.body.id }}' },
      },
    ],
    default: { synced: false, account: null },
  },
  summary: {
    rules: [
      {
        when: 'steps.check.output.synced',
        output: { message: 'Onboarded {{ input.customer }} on the {{ steps.classify.output.tier }} tier' },
      },
    ],
    default: { message: 'Not synced' },
  },
};

/** stepActivityOptions's defaults (DEFAULT_RETRY, DEFAULT_STEP_TIMEOUT, NETWORK_HEARTBEAT_TIMEOUT). */
const RETRY: ActivityOptions['retry'] = {
  maximumAttempts: 3,
  initialInterval: '1s',
  backoffCoefficient: 2,
  maximumInterval: '30s',
};

function rulesStep(id: string) {
  return proxyActivities<Activities>({
    activityId: id,
    summary: id,
    startToCloseTimeout: '10s',
    retry: RETRY,
  });
}

function connectorStep(id: string) {
  return proxyActivities<Activities>({
    activityId: id,
    summary: id,
    startToCloseTimeout: '30s',
    retry: RETRY,
    heartbeatTimeout: '6s',
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  });
}

const succeeded = <T>(output: T) => ({ status: 'success', output });

export async function fiveStepBaseline({ workspaceId, receiverUrl, input }: BaselineInput) {
  const meta = { workspaceId, secretPointers: [] };

  const classify = await rulesStep('classify').rules({ ...FIVE_STEP_RULES.classify, data: { input } });
  const tier = (classify.output as { tier: string }).tier;

  const crm: HttpResponse = await connectorStep('crm').connector_http(
    { method: 'POST', url: `${receiverUrl}/crm`, body: { customer: input.customer, tier } },
    meta,
  );

  const check = await rulesStep('check').rules({
    ...FIVE_STEP_RULES.check,
    data: { steps: { crm: succeeded(crm) } },
  });
  const account = (check.output as { account: unknown }).account;

  await connectorStep('notify').connector_http(
    { method: 'POST', url: `${receiverUrl}/notify`, body: { customer: input.customer, account } },
    meta,
  );

  await rulesStep('summary').rules({
    ...FIVE_STEP_RULES.summary,
    data: { input, steps: { check: succeeded(check.output), classify: succeeded(classify.output) } },
  });
  return { status: 'success' as const };
}
