/**
 * The five_step_e2e scenario's baseline: its five-step workflow written by hand as a plain Temporal
 * workflow, without the definition interpreter: the three rules evaluated inline in workflow code (as a
 * developer writing it on the SDK would), the two HTTP calls as `connector_http` activities with the
 * activity options the service gives a connector step's activity (activity id = step id, summary,
 * timeout, default retry, heartbeat and cancellation type).
 *
 * Deterministic workflow code: only @temporalio/workflow, and types of the activities.
 */
import { ActivityCancellationType, proxyActivities, type ActivityOptions } from '@temporalio/workflow';
import type { Activities } from '../../workers/activities';
import type { RuleSpec } from '../../core/execution-types';

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
export const FIVE_STEP_RULES: Readonly<
  Record<'classify' | 'check' | 'summary', { rules: RuleSpec[]; default: unknown }>
> = {
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

/** The service's defaults for a connector step (DEFAULT_RETRY, DEFAULT_STEP_TIMEOUT, NETWORK_HEARTBEAT_TIMEOUT). */
const RETRY: ActivityOptions['retry'] = {
  maximumAttempts: 3,
  initialInterval: '1s',
  backoffCoefficient: 2,
  maximumInterval: '30s',
};

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

export async function fiveStepBaseline({ workspaceId, receiverUrl, input }: BaselineInput) {
  const meta = { workspaceId, secretPointers: [] };

  // classify, check and summary: FIVE_STEP_RULES, written out as code.
  const tier = input.plan === 'enterprise' ? 'high' : 'standard';

  const crm: HttpResponse = await connectorStep('crm').connector_http(
    { method: 'POST', url: `${receiverUrl}/crm`, body: { customer: input.customer, tier } },
    meta,
  );

  const synced = crm.status === 200;
  const account = synced ? ((crm.body as { id?: unknown } | null)?.id ?? null) : null;

  await connectorStep('notify').connector_http(
    { method: 'POST', url: `${receiverUrl}/notify`, body: { customer: input.customer, account } },
    meta,
  );

  const message = synced ? `Onboarded ${input.customer} on the ${tier} tier` : 'Not synced';
  return { status: 'success' as const, message };
}
