/**
 * `npm run record-histories [-- group ...]`: records the replay corpus (test/replay/README.md).
 *
 * It starts a stack of its own with the integration suites' helpers (a Temporal dev server in a temporary
 * folder; one service process, API + worker on the task queue `switchyard`, over an embedded PGlite
 * database; a local receiver and the fake AI provider), runs representative cases through the REST API,
 * waits until each run is in the state it stands for, and writes its history as JSON (the form
 * `temporal workflow show -o json` writes and the SDK's replayer reads) to test/replay/histories/, with a
 * row in the corpus table of test/replay/README.md naming the commit that recorded it.
 *
 * Histories are added, never replaced: the old ones stand for runs that may still be in flight. A case
 * whose file exists is written as `<case>-<commit>.json`; one this commit recorded already is left as it is.
 */
import { temporal } from '@temporalio/proto';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { historyToJSON, type History } from '@temporalio/common/lib/proto-utils';
import * as prettier from 'prettier';
import { housekeepingScheduleId } from '../workers/housekeeping-schedule';
import { deliveryWorkflowId } from '../core/event-types';
import { DELIVERY_WORKFLOW_TYPE, type DeliveryWorkflowInput, type EventPayload } from '../core/event-types';
import { createLogger } from '../platform/logger';
import { projectRoot } from '../platform/paths';
import {
  createWorkflow,
  definition,
  httpStep,
  rulesStep,
  trigger,
  waitForExecution,
  type ExecutionBody,
  type StepSpec,
} from '../test/support/fixtures';
import { Receiver, type ReceivedRequest } from '../test/support/receiver';
import {
  startTestService,
  stopSharedTemporal,
  type ApiClient,
  type TestService,
} from '../test/support/stack';
import { waitFor } from '../test/support/wait';
import { setLimitOverrides } from '../platform/store/workspace-limits';
import { FakeAiProvider } from './fake-ai-provider';

const HISTORIES = path.join(projectRoot, 'test', 'replay', 'histories');
const MANIFEST = path.join(projectRoot, 'test', 'replay', 'README.md');
/** What decides the commands a run writes: a history recorded with changes here belongs to no commit. */
const WORKFLOW_CODE = ['workers/workflows', 'core'];

/** A mistake of the caller's: its message is all there is to say. */
class UsageError extends Error {}

interface Stack {
  service: TestService;
  api: ApiClient;
  client: Client;
  receiver: Receiver;
  ai: FakeAiProvider;
}

/** One history to write: the case it shows, and what it covers (the manifest's words). */
interface Recorded {
  name: string;
  covers: string;
  history: History;
}

interface Group {
  name: string;
  record(stack: Stack): Promise<Recorded[]>;
}

const GROUPS: Group[] = [
  { name: 'kinds', record: recordStepKinds },
  { name: 'approvals', record: recordApprovals },
  { name: 'failures', record: recordFailures },
  { name: 'retry-twice', record: recordRetryTwice },
  { name: 'housekeeping', record: recordHousekeeping },
  { name: 'webhooks', record: recordWebhooks },
  { name: 'outbox', record: recordUnrecordedDelivery },
  { name: 'deferral', record: recordDeferrals },
  { name: 'composition', record: recordComposition },
  { name: 'container-retry', record: recordContainerRetries },
  { name: 'composition-more', record: recordMoreComposition },
  { name: 'sleep', record: recordSleeps },
  { name: 'event-trigger', record: recordEventTrigger },
  { name: 'wait-for-event', record: recordEventWaits },
  { name: 'error-code', record: recordErrorCode },
  { name: 'flow-control', record: recordFlowControl },
  { name: 'throttle', record: recordThrottle },
  { name: 'debounce', record: recordDebounce },
  { name: 'workspace-cap', record: recordWorkspaceCap },
];

const NO_RETRY = { max_attempts: 1 };
/** Two attempts: the first inside the steps' local activity, the second as an activity after a timer. */
const ONE_RETRY = { max_attempts: 2, initial_interval: '100ms', backoff: 1, max_interval: '100ms' };

/** A run that goes to its end by itself, or after `whileWaiting` (a decision) once it waits. */
interface ExecutionCase {
  name: string;
  covers: string;
  steps: StepSpec[];
  input?: unknown;
  whileWaiting?: (stack: Stack, executionId: string) => Promise<void>;
  status: string;
}

async function recordStepKinds(stack: Stack): Promise<Recorded[]> {
  const url = stack.receiver.url;
  return recordCases(stack, [
    {
      name: 'execution-rules',
      covers:
        'two rules steps, the second reading the output of the first: one local activity, one workflow task',
      steps: [
        rulesStep('route', [{ when: "input.plan = 'enterprise'", output: { tier: 'high' } }], {
          default: { tier: 'standard' },
        }),
        rulesStep('label', [{ when: 'true', output: 'tier {{ steps.route.output.tier }}' }]),
      ],
      input: { plan: 'enterprise' },
      status: 'success',
    },
    {
      name: 'execution-connector',
      covers: 'a rules step, then a connector step POSTing to a local receiver that answers 200 at once',
      steps: [
        rulesStep('route', [{ when: 'true', output: { tier: 'gold' } }]),
        httpStep('crm', {
          method: 'POST',
          url: `${url}/customers`,
          body: { name: '{{ input.customer }}', tier: '{{ steps.route.output.tier }}' },
        }),
      ],
      input: { customer: 'Ada' },
      status: 'success',
    },
    {
      name: 'execution-ai',
      covers: 'an ai step answered by the fake provider, then a rules step reading its text',
      steps: [
        { id: 'welcome', kind: 'ai', prompt: 'Write a one-line welcome for {{ input.customer }}.' },
        rulesStep('done', [{ when: 'true', output: '{{ steps.welcome.output.text }}' }]),
      ],
      input: { customer: 'Ada' },
      status: 'success',
    },
    {
      name: 'execution-skipped-step',
      covers: 'a connector step whose `if` is false (skipped), between two rules steps',
      steps: [
        rulesStep('route', [{ when: 'true', output: { tier: 'high' } }]),
        httpStep('discount', { url: `${url}/discount` }, { if: "steps.route.output.tier = 'standard'" }),
        rulesStep('done', [{ when: 'true', output: '{{ steps.discount.status }}' }]),
      ],
      status: 'success',
    },
  ]);
}

/** prepare (rules) → review (approval) → after (rules, reading the decision). */
function approvalSteps(timeout?: string): StepSpec[] {
  return [
    rulesStep('prepare', [{ when: 'true', output: { amount: '{{ input.amount }}' } }]),
    {
      id: 'review',
      kind: 'approval',
      message: 'Approve {{ input.amount }} EUR?',
      ...(timeout ? { timeout } : {}),
    },
    rulesStep('after', [{ when: 'true', output: '{{ steps.review.output.decision }}' }]),
  ];
}

const decide =
  (decision: 'approve' | 'reject', comment: string) =>
  async (stack: Stack, executionId: string): Promise<void> => {
    await post(stack.api, `/v1/executions/${executionId}/steps/review/${decision}`, 200, { comment });
  };

async function recordApprovals(stack: Stack): Promise<Recorded[]> {
  const recorded = await recordCases(stack, [
    {
      name: 'execution-approval-approved',
      covers: 'an approval without a timeout, approved through the `decide` Update; the run goes on',
      steps: approvalSteps(),
      input: { amount: 120 },
      whileWaiting: decide('approve', 'looks fine'),
      status: 'success',
    },
    {
      name: 'execution-approval-rejected',
      covers: 'an approval with a timeout, rejected before it: the run fails with `approval_rejected`',
      steps: approvalSteps('72h'),
      input: { amount: 120 },
      whileWaiting: decide('reject', 'too much'),
      status: 'failed',
    },
    {
      name: 'execution-approval-timed-out',
      covers:
        'an approval whose `1s` timeout passes: the timer fires, the run fails with `approval_timed_out`',
      steps: [{ id: 'review', kind: 'approval', timeout: '1s' }],
      status: 'failed',
    },
  ]);

  // One waiting run, recorded while it waits (a run in flight), then canceled; another one terminated.
  const workflowId = await createWorkflow(stack.api, definition(approvalSteps('72h')));
  const canceled = await waitingRun(stack, workflowId);
  recorded.push(
    await captureExecution(
      stack,
      'execution-approval-waiting',
      'in flight: an approval with a `72h` timeout waiting (its timer started, the history ends there)',
      canceled,
    ),
  );
  await post(stack.api, `/v1/executions/${canceled}/cancel`, 202);
  await expectEnd(stack, canceled, 'canceled');
  recorded.push(
    await captureExecution(
      stack,
      'execution-canceled-waiting',
      'the same waiting run canceled through the API: the cancellation, `execution.canceled`, the run ends canceled',
      canceled,
    ),
  );
  const terminated = await waitingRun(stack, workflowId);
  await stack.client.workflow.getHandle(terminated).terminate('replay corpus: terminated while waiting');
  await expectEnd(stack, terminated, 'terminated');
  recorded.push(
    await captureExecution(
      stack,
      'execution-terminated-waiting',
      'a waiting approval terminated with the Temporal client (the history ends with the termination)',
      terminated,
    ),
  );
  return recorded;
}

async function recordFailures(stack: Stack): Promise<Recorded[]> {
  const recorded = await recordCases(stack, [
    {
      name: 'execution-failed-rule',
      covers: 'a rules step whose matching rule says `fail`: the run fails with `rule_failed`',
      steps: [
        rulesStep('check', [{ when: "input.plan = 'banned'", action: 'fail', message: 'plan not allowed' }]),
        rulesStep('after', [{ when: 'true', output: 1 }]),
      ],
      input: { plan: 'banned' },
      status: 'failed',
    },
  ]);
  const path = '/failing';
  stack.receiver.replyOnceTo(path, { status: 500, body: 'down' }, { status: 500, body: 'down' });
  const { executionId, runId } = await failingRun(stack, path, ONE_RETRY);
  recorded.push(
    await captureExecution(
      stack,
      'execution-failed-connector',
      'a connector answering 500 twice: the first attempt in the local activity, the timer, the retrying activity; the run fails',
      executionId,
    ),
  );
  recorded.push(
    await retriedToSuccess(
      stack,
      { executionId, afterRun: runId, body: { input: { customer: 'Grace' } } },
      'execution-retry-succeeded',
      'the retry of execution-failed-connector with a corrected input: a new run of the same id, carried records, resumed at the failed step',
    ),
  );
  return recorded;
}

/**
 * Steps deferred past their workspace's share of the worker's local calls (the recording stack allows
 * one: WORKER_LOCAL_CALL_SLOTS_PER_WORKSPACE): a run's connector call is held at the receiver, and the
 * same workspace's next runs find the share taken, so their connector steps run as activities.
 */
async function recordDeferrals(stack: Stack): Promise<Recorded[]> {
  const url = stack.receiver.url;
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  stack.receiver.replyOnceTo('/hold', { status: 200, body: { held: true }, until: held });
  const holder = await createWorkflow(
    stack.api,
    definition([httpStep('hold', { method: 'POST', url: `${url}/hold` })]),
  );
  const holding = await trigger(stack.api, holder);
  await waitFor(async () => stack.receiver.requestsTo('/hold').length > 0 || undefined, {
    what: 'the held call',
  });
  const recorded: Recorded[] = [];
  try {
    recorded.push(
      ...(await recordCases(stack, [
        {
          name: 'execution-deferred-connector',
          covers:
            'a rules step, then a connector step deferred unattempted (its workspace held its share of the local calls): the activity with all its attempts at once, answered 200',
          steps: [
            rulesStep('route', [{ when: 'true', output: { tier: 'gold' } }]),
            httpStep(
              'crm',
              { method: 'POST', url: `${url}/deferred`, body: { tier: '{{ steps.route.output.tier }}' } },
              { retry: ONE_RETRY },
            ),
            rulesStep('after', [{ when: 'true', output: '{{ steps.crm.output.status }}' }]),
          ],
          status: 'success',
        },
      ])),
    );
    stack.receiver.replyOnceTo(
      '/deferred-failing',
      { status: 500, body: 'down' },
      { status: 500, body: 'down' },
    );
    recorded.push(
      ...(await recordCases(stack, [
        {
          name: 'execution-deferred-failed',
          covers:
            'a connector step deferred unattempted whose two attempts (both in the activity) answer 500: the run fails',
          steps: [
            httpStep('check', { method: 'POST', url: `${url}/deferred-failing` }, { retry: ONE_RETRY }),
          ],
          status: 'failed',
        },
      ])),
    );
  } finally {
    release();
  }
  await expectEnd(stack, holding, 'success');
  for (const { history } of recorded) {
    const deferred = (history.events ?? []).some((event) => event.activityTaskScheduledEventAttributes);
    if (!deferred)
      throw new Error('A deferral case ran its step in the local activity: nothing was deferred');
  }
  return recorded;
}

async function recordRetryTwice(stack: Stack): Promise<Recorded[]> {
  const path = '/failing-twice';
  stack.receiver.replyOnceTo(path, { status: 500 }, { status: 500 });
  const first = await failingRun(stack, path, NO_RETRY);
  const id = first.executionId;
  const recorded = [
    await captureExecution(
      stack,
      'execution-retry-twice-1-failed',
      'a connector with one attempt answering 500: the run fails in its first workflow task',
      id,
    ),
  ];
  await retry(stack, id);
  const second = await expectEnd(stack, id, 'failed', { afterRun: first.runId });
  recorded.push(
    await captureExecution(
      stack,
      'execution-retry-twice-2-failed-again',
      'its retry (a run resumed at the failed step) failing again',
      id,
    ),
  );
  recorded.push(
    await retriedToSuccess(
      stack,
      { executionId: id, afterRun: second.runId },
      'execution-retry-twice-3-succeeded',
      'the retry of that retry succeeding: its input carries the records of the first run',
    ),
  );
  return recorded;
}

async function recordHousekeeping(stack: Stack): Promise<Recorded[]> {
  const schedule = stack.client.schedule.getHandle(
    housekeepingScheduleId(stack.service.config.temporal.taskQueue),
  );
  const before = (await schedule.describe()).info.numActionsTaken;
  await schedule.trigger(ScheduleOverlapPolicy.ALLOW_ALL);
  const action = await waitFor(
    async () => {
      const info = (await schedule.describe()).info;
      return info.numActionsTaken > before && info.recentActions.at(-1);
    },
    { what: 'the triggered housekeeping run to start' },
  );
  const { workflowId, firstExecutionRunId } = action.action.workflow;
  const handle = stack.client.workflow.getHandle(workflowId, firstExecutionRunId);
  await handle.result();
  return [
    {
      name: 'housekeeping',
      covers: 'the housekeeping job started by its schedule: one activity purging expired rows',
      history: await handle.fetchHistory(),
    },
  ];
}

/**
 * A workspace subscribed to `execution.started` and `execution.completed`: the execution emits both (local
 * activities starting delivery workflows), and its deliveries are recorded, one answered at once, one after
 * a 500.
 */
async function recordWebhooks(stack: Stack): Promise<Recorded[]> {
  const workspace = await stack.service.newWorkspace(['admin']);
  const api = stack.service.api(workspace.key);
  const { receiver } = stack;
  const flaky = new Set<string>();
  const answered = new Set<string>();
  receiver.replyAlways((request: ReceivedRequest) => {
    if (request.path !== '/events') return { status: 200, body: { ok: true } };
    const event = request.json as { event: string; execution_id: string; workflow: string };
    const key = `${event.execution_id}:${event.event}`;
    // The flaky workflow's completion is refused once, then accepted.
    if (event.event === 'execution.completed' && flaky.has(event.workflow) && !answered.has(key)) {
      answered.add(key);
      return { status: 500, body: 'try again' };
    }
    return { status: 204 };
  });
  await post(api, '/v1/webhooks', 201, {
    url: `${receiver.url}/events`,
    events: ['execution.started', 'execution.completed'],
  });

  const steps = [
    rulesStep('route', [{ when: 'true', output: { tier: 'gold' } }]),
    httpStep('crm', {
      method: 'POST',
      url: `${receiver.url}/customers`,
      body: { tier: '{{ steps.route.output.tier }}' },
    }),
  ];
  const steady = await createWorkflow(api, definition(steps));
  const flakyWorkflow = await createWorkflow(api, definition(steps));
  flaky.add(flakyWorkflow);

  const delivered = await trigger(api, steady);
  await expectEnd(stack, delivered, 'success', { api });
  const retried = await trigger(api, flakyWorkflow);
  await expectEnd(stack, retried, 'success', { api });
  return [
    await captureExecution(
      stack,
      'execution-events-emitted',
      'a rules and a connector step in a workspace subscribed to `execution.started` and `.completed`: both emitted',
      delivered,
    ),
    await captureDelivery(
      stack,
      delivered,
      'delivery-delivered',
      '`execution.completed` answered 204 at once: the close-wait and the first attempt as local activities',
    ),
    await captureDelivery(
      stack,
      retried,
      'delivery-retried',
      '`execution.completed` answered 500 first: the timer, then the retrying activity from attempt 2 (answered 204)',
    ),
  ];
}

/**
 * A delivery workflow as emit_event starts it while PostgreSQL is away: the event alone, its deliveries
 * recorded by the workflow (record_deliveries) before it delivers. Started here directly, for the event
 * of a finished run, with the database up: the workflow's commands are the same as after an outage.
 */
async function recordUnrecordedDelivery(stack: Stack): Promise<Recorded[]> {
  const workspace = await stack.service.newWorkspace(['admin']);
  const api = stack.service.api(workspace.key);
  stack.receiver.replyAlways({ status: 204 });
  await post(api, '/v1/webhooks', 201, {
    url: `${stack.receiver.url}/events`,
    events: ['execution.completed'],
  });
  const executionId = await trigger(
    api,
    await createWorkflow(api, definition([rulesStep('route', [{ when: 'true', output: 'gold' }])])),
  );
  await expectEnd(stack, executionId, 'success', { api });
  const payload: EventPayload = {
    id: `evt_${crypto.randomUUID().replace(/-/g, '')}`,
    event: 'execution.completed',
    created_at: new Date().toISOString(),
    execution_id: executionId,
    workflow: 'outbox',
    workflow_version: 1,
    status: 'success',
    error: null,
  };
  const input: DeliveryWorkflowInput = {
    event: {
      payload,
      workspace_id: workspace.workspaceId,
      run_id: (await stack.client.workflow.getHandle(executionId).describe()).runId,
    },
    delivery_ids: [],
    max_attempts: 8,
    local_first_attempt: true,
    deliveries_unrecorded: true,
  };
  const handle = await stack.client.workflow.start(DELIVERY_WORKFLOW_TYPE, {
    taskQueue: stack.service.config.temporal.taskQueue,
    workflowId: deliveryWorkflowId(payload.id),
    args: [input],
  });
  const summary = (await handle.result()) as { delivered: number };
  if (summary.delivered !== 1) throw new Error(`Delivery of ${payload.id}: ${JSON.stringify(summary)}`);
  return [
    {
      name: 'delivery-deliveries-unrecorded',
      covers:
        'an event handed to Temporal while the database was away (`deliveries_unrecorded`): `record_deliveries`, then the close-wait and the first attempt (answered 204)',
      history: await handle.fetchHistory(),
    },
  ];
}

/** Each case's workflow created, triggered and followed to its end; its history captured. */
/** Steps that hold steps (docs/definitions.md#composition): each container kind, a large map's chunk, a child execution. */
async function recordComposition(stack: Stack): Promise<Recorded[]> {
  const url = stack.receiver.url;
  const child = await createWorkflow(
    stack.api,
    definition([rulesStep('bill', [{ when: 'true', output: '{{ input.customer & " billed" }}' }])]),
  );
  const recorded = await recordCases(stack, [
    {
      name: 'execution-parallel',
      covers:
        'a parallel step: a connector branch and a rules branch at once, then a step reading its output',
      steps: [
        {
          id: 'enrich',
          kind: 'parallel',
          branches: [
            { id: 'crm', steps: [httpStep('crm_get', { method: 'GET', url: `${url}/crm` })] },
            { id: 'score', steps: [rulesStep('score_it', [{ when: 'true', output: 42 }])] },
          ],
        },
        rulesStep('after', [{ when: 'true', output: '{{ steps.enrich.output.score }}' }]),
      ],
      status: 'success',
    },
    {
      name: 'execution-map-inline',
      covers: 'a map over 3 items, 2 at once, each running a rules step with item and index',
      steps: [
        {
          id: 'double',
          kind: 'map',
          items: 'input.numbers',
          concurrency: 2,
          steps: [rulesStep('times_two', [{ when: 'true', output: '{{ item * 2 + index }}' }])],
        },
      ],
      input: { numbers: [1, 2, 3] },
      status: 'success',
    },
    {
      name: 'execution-switch-loop',
      covers: 'a switch choosing a case, then a loop of three iterations ended by until',
      steps: [
        {
          id: 'by_plan',
          kind: 'switch',
          cases: [
            {
              id: 'gold',
              when: "input.plan = 'pro'",
              steps: [rulesStep('g', [{ when: 'true', output: 1 }])],
            },
          ],
          default: [rulesStep('d', [{ when: 'true', output: 0 }])],
        },
        {
          id: 'count',
          kind: 'loop',
          max_iterations: 10,
          until: 'steps.tick.output >= 3',
          steps: [rulesStep('tick', [{ when: 'true', output: '{{ iteration + 1 }}' }])],
        },
      ],
      input: { plan: 'pro' },
      status: 'success',
    },
    {
      name: 'execution-map-item-failed',
      covers: 'a map whose second item fails a rule: the execution fails with the path of the item',
      steps: [
        {
          id: 'each',
          kind: 'map',
          items: 'input.list',
          steps: [
            rulesStep('check', [{ when: 'item = 2', action: 'fail', message: 'two' }], { default: 'ok' }),
          ],
        },
      ],
      input: { list: [1, 2, 3] },
      status: 'failed',
    },
    {
      name: 'execution-workflow-step',
      covers: 'a workflow step starting another workflow as a child execution and waiting for its output',
      steps: [
        {
          id: 'call',
          kind: 'workflow',
          workflow: child,
          input: { customer: '{{ input.name }}' },
        },
      ],
      input: { name: 'Ada' },
      status: 'success',
    },
    {
      name: 'execution-map-chunked',
      covers: 'a map over 150 items: two chunks of 100, each a child workflow (map_chunk)',
      steps: [
        {
          id: 'square',
          kind: 'map',
          items: 'input.numbers',
          concurrency: 2,
          steps: [rulesStep('sq', [{ when: 'true', output: '{{ item * item }}' }])],
        },
      ],
      input: { numbers: Array.from({ length: 150 }, (_, i) => i) },
      status: 'success',
    },
  ]);
  // The children of the last two cases: the child execution, and a chunk of the large map.
  const children: Recorded[] = [];
  for (const [parent, name, covers] of [
    [
      'execution-workflow-step',
      'execution-child',
      'the child execution a workflow step started (trigger type workflow, with its parent)',
    ],
    ['execution-map-chunked', 'map-chunk', 'one chunk of a large map: 100 items run one after another'],
  ] as const) {
    const history = recorded.find((r) => r.name === parent)!.history;
    const started = (history.events ?? []).find(
      (e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED,
    );
    const execution = started!.childWorkflowExecutionStartedEventAttributes!.workflowExecution!;
    await stack.client.workflow.getHandle(execution.workflowId!, execution.runId!).result();
    children.push({
      name,
      covers,
      history: await stack.client.workflow.getHandle(execution.workflowId!, execution.runId!).fetchHistory(),
    });
  }
  return [...recorded, ...children];
}

/**
 * Retries that keep what succeeded (docs/definitions.md#retrying-a-container): a map whose item 1 failed,
 * retried with the other items kept; a large map whose item 120 failed, retried with each chunk reading its
 * previous run's result.
 */
async function recordContainerRetries(stack: Stack): Promise<Recorded[]> {
  const url = stack.receiver.url;
  const recorded: Recorded[] = [];
  for (const [name, count, failing, covers] of [
    [
      'execution-map-retry-kept',
      3,
      1,
      'the retry of a map whose item 1 failed: items 0 and 2 kept from the resume point, item 1 runs again',
    ],
    [
      'execution-map-chunked-retry',
      150,
      120,
      'the retry of a map over 150 items whose item 120 failed: each chunk starts again with its previous run',
    ],
  ] as const) {
    const path = `/retry-${name}`;
    stack.receiver.replyOnceTo(`${path}/${failing}`, { status: 500, body: 'down' });
    const workflowId = await createWorkflow(
      stack.api,
      definition([
        {
          id: 'each',
          kind: 'map',
          items: 'input.ids',
          steps: [httpStep('send', { method: 'POST', url: `${url}${path}/{{ item }}` }, { retry: NO_RETRY })],
        },
      ]),
    );
    const executionId = await trigger(stack.api, workflowId, {
      ids: Array.from({ length: count }, (_, i) => i),
    });
    const failed = await expectEnd(stack, executionId, 'failed');
    recorded.push(await retriedToSuccess(stack, { executionId, afterRun: failed.runId }, name, covers));
  }
  // The retry's chunk that held the failed item: it read its previous run's result and ran what failed there.
  const history = recorded[1]!.history;
  const chunk = (history.events ?? [])
    .filter(
      (e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED,
    )
    .map((e) => e.childWorkflowExecutionStartedEventAttributes!.workflowExecution!)
    .find((execution) => execution.workflowId!.endsWith('chunk-1'))!;
  recorded.push({
    name: 'map-chunk-retry',
    covers:
      'a chunk of a retried large map: its previous run read by a local activity, only item 120 run again',
    history: await stack.client.workflow.getHandle(chunk.workflowId!, chunk.runId!).fetchHistory(),
  });
  return recorded;
}

/**
 * More paths through containers: a parallel step in each item of a map, a loop that reaches its
 * max_iterations, and a workflow step whose child fails (the parent fails with child_failed) retried once
 * the child's workflow is fixed (a new child, and the parent succeeds).
 */
async function recordMoreComposition(stack: Stack): Promise<Recorded[]> {
  const recorded = await recordCases(stack, [
    {
      name: 'execution-map-nested-parallel',
      covers:
        'a map over 3 items, each running a parallel step of a connector branch and a rules branch, then a step reading the map',
      steps: [
        {
          id: 'each',
          kind: 'map',
          items: 'input.ids',
          concurrency: 2,
          steps: [
            {
              id: 'both',
              kind: 'parallel',
              branches: [
                {
                  id: 'fetch',
                  steps: [httpStep('get', { method: 'GET', url: `${stack.receiver.url}/nested/{{ item }}` })],
                },
                {
                  id: 'label',
                  steps: [rulesStep('name_it', [{ when: 'true', output: 'item {{ index }}' }])],
                },
              ],
            },
          ],
        },
        rulesStep('count', [{ when: 'true', output: '{{ $count(steps.each.output) }}' }]),
      ],
      input: { ids: ['a', 'b', 'c'] },
      status: 'success',
    },
    {
      name: 'execution-loop-limit-exceeded',
      covers:
        'a loop whose until never holds: three iterations, then the run fails with `loop_limit_exceeded`',
      steps: [
        {
          id: 'forever',
          kind: 'loop',
          max_iterations: 3,
          until: 'steps.tick.output > 10',
          steps: [rulesStep('tick', [{ when: 'true', output: '{{ iteration }}' }])],
        },
      ],
      status: 'failed',
    },
  ]);

  // A child that fails: the parent fails with child_failed; a new version of the child's workflow fixes it,
  // and the parent's retry starts a new child and succeeds.
  const child = definition([]);
  const childVersion = (fails: boolean) => ({
    ...child,
    steps: [
      rulesStep('bill', fails ? [{ when: 'true', action: 'fail', message: 'no credit line' }] : [], {
        default: '{{ input.customer & " billed" }}',
      }),
    ],
  });
  await createWorkflow(stack.api, childVersion(true));
  const parent = await createWorkflow(
    stack.api,
    definition([
      { id: 'call', kind: 'workflow', workflow: child['id'], input: { customer: '{{ input.name }}' } },
    ]),
  );
  const executionId = await trigger(stack.api, parent, { name: 'Ada' });
  const failed = await expectEnd(stack, executionId, 'failed');
  const childError = failed.execution.error as unknown as {
    code: string;
    details: { execution_id: string }[];
  };
  if (childError.code !== 'child_failed')
    throw new Error(`Expected child_failed: ${JSON.stringify(childError)}`);
  recorded.push(
    await captureExecution(
      stack,
      'execution-child-failed-parent',
      'a workflow step whose child fails a rule: the parent fails with `child_failed`, the child error in details',
      executionId,
    ),
    await captureExecution(
      stack,
      'execution-child-failed',
      'the child of execution-child-failed-parent: a rules step fails it',
      childError.details[0]!.execution_id,
    ),
  );
  const fixed = await stack.api.put(`/v1/workflows/${String(child['id'])}`, childVersion(false));
  if (fixed.status !== 200)
    throw new Error(`PUT the child's workflow: ${fixed.status} ${JSON.stringify(fixed.body)}`);
  recorded.push(
    await retriedToSuccess(
      stack,
      { executionId, afterRun: failed.runId },
      'execution-child-failed-retry',
      "the retry of execution-child-failed-parent once the child's workflow is fixed: a new child, the parent succeeds",
    ),
  );
  return recorded;
}

async function recordSleeps(stack: Stack): Promise<Recorded[]> {
  const after = rulesStep('after', [{ when: 'true', output: '{{ steps.pause.output.slept_until }}' }]);
  const recorded = await recordCases(stack, [
    {
      name: 'execution-sleep',
      covers:
        'a rules step, a `1s` sleep (its timer, named by the step, and the waiting search attribute set and cleared), a rules step',
      steps: [
        rulesStep('before', [{ when: 'true', output: 1 }]),
        { id: 'pause', kind: 'sleep', duration: '1s' },
        after,
      ],
      status: 'success',
    },
    {
      name: 'execution-sleep-past',
      covers: 'a sleep whose `until` template gives a past time: no timer, the run goes on at once',
      steps: [{ id: 'pause', kind: 'sleep', until: '{{ input.at }}' }, after],
      input: { at: '2020-01-01T00:00:00Z' },
      status: 'success',
    },
    {
      name: 'execution-sleep-loop',
      covers: 'a loop whose iterations sleep `500ms` while `if` holds (a sleep in a container, twice)',
      steps: [
        {
          id: 'poll',
          kind: 'loop',
          max_iterations: 5,
          until: 'iteration >= 2',
          steps: [
            rulesStep('check', [{ when: 'true', output: '{{ iteration }}' }]),
            { id: 'nap', kind: 'sleep', duration: '500ms', if: 'steps.check.output < 2' },
          ],
        },
      ],
      status: 'success',
    },
    {
      name: 'execution-sleep-halted',
      covers:
        'a parallel step: one branch sleeps `1h`, the other fails after `500ms`; the sleep stops (its timer canceled), the run fails',
      steps: [
        {
          id: 'both',
          kind: 'parallel',
          branches: [
            { id: 'slow', steps: [{ id: 'nap', kind: 'sleep', duration: '1h' }] },
            {
              id: 'bad',
              steps: [
                { id: 'wait_a_bit', kind: 'sleep', duration: '500ms' },
                rulesStep('boom', [{ when: 'true', action: 'fail', message: 'no' }]),
              ],
            },
          ],
        },
      ],
      status: 'failed',
    },
  ]);

  // One sleeping run, recorded while it sleeps (a run in flight), then canceled.
  const workflowId = await createWorkflow(
    stack.api,
    definition([{ id: 'pause', kind: 'sleep', duration: '3d' }, after]),
  );
  const sleeping = await trigger(stack.api, workflowId);
  await waitForExecution(stack.api, sleeping, (e) => e.status === 'waiting');
  recorded.push(
    await captureExecution(
      stack,
      'execution-sleep-waiting',
      'in flight: a `3d` sleep sleeping (its timer started, the history ends there)',
      sleeping,
    ),
  );
  await post(stack.api, `/v1/executions/${sleeping}/cancel`, 202);
  await expectEnd(stack, sleeping, 'canceled');
  recorded.push(
    await captureExecution(
      stack,
      'execution-sleep-canceled',
      'the same sleeping run canceled through the API: its timer canceled, `execution.canceled`, the run ends canceled',
      sleeping,
    ),
  );
  return recorded;
}

/** A failed run that sets its SwitchyardErrorCode search attribute as it fails (behind ERROR_CODE_PATCH). */
async function recordErrorCode(stack: Stack): Promise<Recorded[]> {
  return recordCases(stack, [
    {
      name: 'execution-failed-error-code',
      covers:
        'a rules step that fails the run: the `error-code-search-attribute` patch marker, then SwitchyardErrorCode upserted with `rule_failed`',
      steps: [rulesStep('check', [{ when: 'true', action: 'fail', message: 'refused' }])],
      status: 'failed',
    },
  ]);
}

/**
 * Flow control (docs/flow-control.md): with `concurrency` of 1, a run held by the receiver keeps the place;
 * one run queued behind it is admitted when it ends, another is canceled while queued.
 */
async function recordFlowControl(stack: Stack): Promise<Recorded[]> {
  const url = stack.receiver.url;
  let release!: () => void;
  const until = new Promise<void>((resolve) => (release = resolve));
  stack.receiver.replyOnceTo('/flow/blocker', { status: 200, body: { held: true }, until });
  const workflowId = await createWorkflow(
    stack.api,
    definition(
      [httpStep('call', { method: 'POST', url: `${url}/flow/{{ input.who }}` }, { retry: NO_RETRY })],
      {
        concurrency: { limit: 1, key: 'input.group' },
        priority: 'input.p',
      },
    ),
  );
  const queuedWith = (status: string) => (e: ExecutionBody) => e.status === status;
  const blocker = await trigger(stack.api, workflowId, { who: 'blocker', group: 'g', p: 0 });
  await waitFor(async () => stack.receiver.requestsTo('/flow/blocker').length === 1, {
    what: 'the blocker to call the receiver',
  });
  const admitted = await trigger(stack.api, workflowId, { who: 'admitted', group: 'g', p: 5 });
  await waitForExecution(stack.api, admitted, queuedWith('queued'));
  const canceled = await trigger(stack.api, workflowId, { who: 'canceled', group: 'g', p: 0 });
  await waitForExecution(stack.api, canceled, queuedWith('queued'));
  await post(stack.api, `/v1/executions/${canceled}/cancel`, 202);
  await expectEnd(stack, canceled, 'canceled');
  release();
  await expectEnd(stack, blocker, 'success');
  await expectEnd(stack, admitted, 'success');
  return [
    await captureExecution(
      stack,
      'execution-flow-control-admitted',
      '`concurrency` 1 and a priority (its input says `gates_in_batch`): the first `run_steps` answers the key queued and runs no step, SwitchyardQueued upserted true, the `admitted` signal, `run_steps` again: the workspace cap open, the connector step, the places given back; SwitchyardQueued false',
      admitted,
    ),
    await captureExecution(
      stack,
      'execution-flow-control-canceled-queued',
      'a run queued behind the same key, canceled while queued: `execution.canceled`, `release_admission` in a non-cancellable scope, no step',
      canceled,
    ),
  ];
}

/**
 * A throttle after a concurrency gate (docs/flow-control.md#throttle): with one start per 2 s, the second run
 * takes its concurrency place at once, then waits for its throttle's window.
 */
async function recordThrottle(stack: Stack): Promise<Recorded[]> {
  const url = stack.receiver.url;
  const workflowId = await createWorkflow(
    stack.api,
    definition(
      [httpStep('call', { method: 'POST', url: `${url}/throttle/{{ input.who }}` }, { retry: NO_RETRY })],
      { concurrency: { limit: 2 }, throttle: { limit: 1, period: '2s' } },
    ),
  );
  const first = await trigger(stack.api, workflowId, { who: 'first' });
  await waitFor(async () => stack.receiver.requestsTo('/throttle/first').length === 1, {
    what: 'the first run to call the receiver',
  });
  const second = await trigger(stack.api, workflowId, { who: 'second' });
  await waitForExecution(stack.api, second, (e: ExecutionBody) => e.status === 'queued');
  await expectEnd(stack, first, 'success');
  await expectEnd(stack, second, 'success');
  return [
    await captureExecution(
      stack,
      'execution-throttle-waited',
      '`concurrency` 2 and `throttle` 1 per 2s (its input says `gates_in_batch`), the run after another: the first `run_steps` answers the key open and the throttle queued, no step; SwitchyardQueued true, the `throttle_admitted` signal, `run_steps` again: the workspace cap open, the connector step, the places given back; SwitchyardQueued false',
      second,
    ),
  ];
}

/**
 * Debounce (docs/flow-control.md#debounce): three triggers 600 ms apart with a period of 1 s make one run,
 * whose first question finds the key not quiet yet; a debounced run behind a concurrency gate whose step
 * fails; a debounced run canceled while it waits.
 */
async function recordDebounce(stack: Stack): Promise<Recorded[]> {
  const url = stack.receiver.url;
  const call = httpStep(
    'call',
    { method: 'POST', url: `${url}/debounce/{{ input.who }}` },
    { retry: NO_RETRY },
  );
  const coalescing = await createWorkflow(stack.api, definition([call], { debounce: { period: '1s' } }));
  const coalesced = await trigger(stack.api, coalescing, { who: 'coalesced', n: 1 });
  for (const n of [2, 3]) {
    await new Promise((resolve) => setTimeout(resolve, 600));
    if ((await trigger(stack.api, coalescing, { who: 'coalesced', n })) !== coalesced)
      throw new Error('A trigger within the period made another execution');
  }
  await expectEnd(stack, coalesced, 'success');

  stack.receiver.replyOnceTo('/debounce/failing', { status: 500, body: { down: true } });
  const gated = await createWorkflow(
    stack.api,
    definition([call], { debounce: { period: '1s' }, concurrency: { limit: 1 } }),
  );
  const failing = await trigger(stack.api, gated, { who: 'failing' });
  await expectEnd(stack, failing, 'failed');

  const waiting = await createWorkflow(stack.api, definition([call], { debounce: { period: '30s' } }));
  const canceled = await trigger(stack.api, waiting, { who: 'canceled' });
  await post(stack.api, `/v1/executions/${canceled}/cancel`, 202);
  await expectEnd(stack, canceled, 'canceled');
  return [
    await captureExecution(
      stack,
      'execution-debounce-coalesced',
      '`debounce` 1s, three triggers 600 ms apart: started queued (SwitchyardQueued true), a timer, `end_debounce` waiting, another timer, `end_debounce` started with the last input and coalesced 3, SwitchyardQueued false, the connector step, `close_debounce`',
      coalesced,
    ),
    await captureExecution(
      stack,
      'execution-debounce-concurrency-failed',
      '`debounce` then `concurrency` 1, the step answered 500: the timer, `end_debounce` started, `acquire_admission` open, SwitchyardQueued false, the failed step, the run failed with `release_admission` and `close_debounce` after its end was decided',
      failing,
    ),
    await captureExecution(
      stack,
      'execution-debounce-canceled',
      'a debounced run canceled while it waits for its period: the timer canceled, `execution.canceled`, `close_debounce` in a non-cancellable scope, no step',
      canceled,
    ),
  ];
}

/**
 * The workspace's cap on open executions (docs/flow-control.md#workspace-cap): in a workspace of its own whose
 * cap an operator set to 1, a plain workflow's run held by the receiver keeps the place; the next run queues
 * on the cap, and one more is canceled while queued.
 */
async function recordWorkspaceCap(stack: Stack): Promise<Recorded[]> {
  const url = stack.receiver.url;
  const { workspaceId, key } = await stack.service.newWorkspace(['admin']);
  await setLimitOverrides(stack.service.runtime.services.db, workspaceId, new Map([['open_executions', 1]]));
  const api = stack.service.api(key);
  let release!: () => void;
  const until = new Promise<void>((resolve) => (release = resolve));
  stack.receiver.replyOnceTo('/cap/blocker', { status: 200, body: { held: true }, until });
  const workflowId = await createWorkflow(
    api,
    definition([
      httpStep('call', { method: 'POST', url: `${url}/cap/{{ input.who }}` }, { retry: NO_RETRY }),
    ]),
  );
  const queued = (e: ExecutionBody) => e.status === 'queued';
  const blocker = await trigger(api, workflowId, { who: 'blocker' });
  await waitFor(async () => stack.receiver.requestsTo('/cap/blocker').length === 1, {
    what: 'the blocker to call the receiver',
  });
  const admitted = await trigger(api, workflowId, { who: 'admitted' });
  await waitForExecution(api, admitted, queued);
  const canceled = await trigger(api, workflowId, { who: 'canceled' });
  await waitForExecution(api, canceled, queued);
  await post(api, `/v1/executions/${canceled}/cancel`, 202);
  await expectEnd(stack, canceled, 'canceled', { api });
  release();
  await expectEnd(stack, blocker, 'success', { api });
  await expectEnd(stack, admitted, 'success', { api });
  // A definition with a gate of its own: one batch passes its key, then the workspace's cap.
  const keyed = await createWorkflow(api, {
    ...definition([httpStep('call', { method: 'POST', url: `${url}/cap/keyed` }, { retry: NO_RETRY })]),
    concurrency: { limit: 1 },
  });
  const gated = await trigger(api, keyed, {});
  await expectEnd(stack, gated, 'success', { api });
  // A run whose first step is a container asks for its place in an activity of its own.
  const container = await createWorkflow(
    api,
    definition([
      {
        id: 'both',
        kind: 'parallel',
        branches: [
          { id: 'a', steps: [httpStep('a', { method: 'POST', url: `${url}/cap/a` }, { retry: NO_RETRY })] },
          { id: 'b', steps: [httpStep('b', { method: 'POST', url: `${url}/cap/b` }, { retry: NO_RETRY })] },
        ],
      },
    ]),
  );
  const contained = await trigger(api, container, {});
  await expectEnd(stack, contained, 'success', { api });
  return [
    await captureExecution(
      stack,
      'execution-workspace-cap-open',
      'a plain workflow in a workspace with a cap of 1, the first run (its input says `workspace_cap`): its one `run_steps` asks for the place (open), runs the connector step held by the receiver, and gives the place back',
      blocker,
    ),
    await captureExecution(
      stack,
      'execution-workspace-cap-queued',
      'the next run of that workspace: its first `run_steps` answers the place queued and runs no step, SwitchyardQueued true, the `workspace_admitted` signal, SwitchyardQueued false, `run_steps` again: the connector step, the place given back',
      admitted,
    ),
    await captureExecution(
      stack,
      'execution-workspace-cap-canceled-queued',
      'a run queued on the workspace cap, canceled while queued: `execution.canceled`, `release_admission` in a non-cancellable scope, no step',
      canceled,
    ),
    await captureExecution(
      stack,
      'execution-workspace-cap-keyed',
      'a workflow with `concurrency` in that workspace (its input says `gates_in_batch`): its one `run_steps` passes the key (open), then the workspace cap (open), runs the step and gives both back',
      gated,
    ),
    await captureExecution(
      stack,
      'execution-workspace-cap-container',
      'a workflow whose first step is a `parallel` in that workspace: `acquire_workspace_place` (open) in an activity of its own, the branches, `release_admission` with the workspace',
      contained,
    ),
  ];
}

/** wait_for_event steps (docs/events.md#waiting-for-an-event): woken, timed out with each policy, in a map, canceled. */
async function recordEventWaits(stack: Stack): Promise<Recorded[]> {
  const name = `order.paid.replay.${Date.now()}`;
  const wait = (extra: Record<string, unknown> = {}): StepSpec => ({
    id: 'payment',
    kind: 'wait_for_event',
    event: name,
    match: 'event.data.order_id = input.order_id',
    timeout: '1h',
    ...extra,
  });
  const after = rulesStep('after', [{ when: 'true', output: '{{ steps.payment.output }}' }]);
  const send = (data: Record<string, unknown>) => post(stack.api, '/v1/events', 202, { name, data });
  const recorded = await recordCases(stack, [
    {
      name: 'execution-event-wait-matched',
      covers:
        'a wait_for_event woken by the second event (the first does not match): its timer, the `event_woke` signal, `end_event_wait` with the event, a rules step after',
      steps: [wait(), after],
      input: { order_id: 'o-1' },
      whileWaiting: async () => {
        await send({ order_id: 'o-2' });
        await send({ order_id: 'o-1', amount: 42 });
      },
      status: 'success',
    },
    {
      name: 'execution-event-wait-timed-out',
      covers:
        'a wait_for_event whose `1s` timeout passes (on_timeout fail): the run fails with event_timed_out',
      steps: [wait({ timeout: '1s' }), after],
      input: { order_id: 'never' },
      status: 'failed',
    },
    {
      name: 'execution-event-wait-continue',
      covers:
        'a wait_for_event whose `1s` timeout passes with on_timeout continue: output null, the run goes on',
      steps: [wait({ timeout: '1s', on_timeout: 'continue' }), after],
      input: { order_id: 'never' },
      status: 'success',
    },
    {
      name: 'execution-event-wait-map',
      covers:
        'a map of two items, each waiting for the event of its own order; the events arrive in reverse order',
      steps: [
        {
          id: 'orders',
          kind: 'map',
          items: 'input.orders',
          as: 'order',
          steps: [wait({ match: 'event.data.order_id = order' })],
        },
      ],
      input: { orders: ['m-1', 'm-2'] },
      whileWaiting: async () => {
        // The run is waiting once its first item waits: give the second its moment to begin waiting too.
        await new Promise((resolve) => setTimeout(resolve, 1000));
        await send({ order_id: 'm-2' });
        await send({ order_id: 'm-1' });
      },
      status: 'success',
    },
  ]);

  // One waiting run, recorded while it waits (a run in flight), then canceled.
  const workflowId = await createWorkflow(stack.api, definition([wait(), after]));
  const waiting = await trigger(stack.api, workflowId, { order_id: 'o-3' });
  await waitForExecution(stack.api, waiting, (e) => e.status === 'waiting');
  recorded.push(
    await captureExecution(
      stack,
      'execution-event-wait-waiting',
      'in flight: a wait_for_event waiting (its timer started, the history ends there)',
      waiting,
    ),
  );
  await post(stack.api, `/v1/executions/${waiting}/cancel`, 202);
  await expectEnd(stack, waiting, 'canceled');
  recorded.push(
    await captureExecution(
      stack,
      'execution-event-wait-canceled',
      'the same waiting run canceled through the API: `end_event_wait` in a scope the cancel cannot interrupt, the run ends canceled',
      waiting,
    ),
  );
  return recorded;
}

/** An execution an event trigger started (docs/events.md#event-triggers): its trigger names the event. */
async function recordEventTrigger(stack: Stack): Promise<Recorded[]> {
  const workflowId = await createWorkflow(stack.api, {
    ...definition([
      rulesStep('welcome', [{ when: "input.plan = 'pro'", output: '{{ "Welcome " & input.name }}' }]),
    ]),
    trigger: { type: 'event', event: 'user.signup', if: "data.plan = 'pro'" },
  });
  const eventId = `evt_replay_${Date.now()}`;
  await post(stack.api, '/v1/events', 202, {
    name: 'user.signup',
    id: eventId,
    data: { name: 'Ada', plan: 'pro' },
  });
  const started = await waitFor(
    async () => {
      const res = await stack.api.get(`/v1/events/${eventId}`);
      return (res.body as { started?: string[] }).started?.[0];
    },
    { what: `the execution event ${eventId} started for ${workflowId}` },
  );
  await expectEnd(stack, started, 'success');
  return [
    await captureExecution(
      stack,
      'execution-event-triggered',
      'an execution started by an event trigger (`user.signup` with `if`): trigger type event, the event in its input',
      started,
    ),
  ];
}

async function recordCases(stack: Stack, cases: ExecutionCase[]): Promise<Recorded[]> {
  const recorded: Recorded[] = [];
  for (const c of cases) {
    const workflowId = await createWorkflow(stack.api, definition(c.steps));
    const executionId = await trigger(stack.api, workflowId, c.input ?? {});
    if (c.whileWaiting) {
      await waitForExecution(stack.api, executionId, (e) => e.status === 'waiting');
      await c.whileWaiting(stack, executionId);
    }
    await expectEnd(stack, executionId, c.status);
    recorded.push(await captureExecution(stack, c.name, c.covers, executionId));
  }
  return recorded;
}

async function waitingRun(stack: Stack, workflowId: string): Promise<string> {
  const executionId = await trigger(stack.api, workflowId, { amount: 120 });
  await waitForExecution(stack.api, executionId, (e) => e.status === 'waiting');
  return executionId;
}

/** before (connector) → check (connector at `path`, with `retry`) → after (rules); fails at check. */
async function failingRun(
  stack: Stack,
  path: string,
  retryPolicy: Record<string, unknown>,
): Promise<{ executionId: string; runId: string }> {
  const workflowId = await createWorkflow(
    stack.api,
    definition(
      [
        httpStep('before', { method: 'POST', url: `${stack.receiver.url}${path}-before` }),
        httpStep(
          'check',
          { method: 'POST', url: `${stack.receiver.url}${path}`, body: { customer: '{{ input.customer }}' } },
          { retry: retryPolicy },
        ),
        rulesStep('after', [{ when: 'true', output: '{{ input.customer }}' }]),
      ],
      {
        input_schema: {
          type: 'object',
          required: ['customer'],
          properties: { customer: { type: 'string' } },
        },
      },
    ),
  );
  const executionId = await trigger(stack.api, workflowId, { customer: 'Ada' });
  const failed = await expectEnd(stack, executionId, 'failed');
  return { executionId, runId: failed.runId };
}

async function retry(stack: Stack, executionId: string, body?: unknown): Promise<void> {
  await post(stack.api, `/v1/executions/${executionId}/retry`, 202, body);
}

/** Retries a failed execution (with `body`), follows the new run after `afterRun` to success, captures it. */
async function retriedToSuccess(
  stack: Stack,
  { executionId, afterRun, body }: { executionId: string; afterRun: string; body?: unknown },
  name: string,
  covers: string,
): Promise<Recorded> {
  await retry(stack, executionId, body);
  await expectEnd(stack, executionId, 'success', { afterRun });
  return captureExecution(stack, name, covers, executionId);
}

/** A POST through the API that must answer `status` (a case that went otherwise would record something else). */
async function post(api: ApiClient, url: string, status: number, body?: unknown): Promise<void> {
  const res = await api.post(url, body);
  if (res.status !== status)
    throw new Error(`POST ${url} answered ${res.status}: ${JSON.stringify(res.body)}`);
}

/**
 * Waits until the execution has ended and checks it ended with `status` (a case that ended otherwise would
 * record something else than it says); with `afterRun`, that a new run has (a retry's).
 */
async function expectEnd(
  stack: Stack,
  executionId: string,
  status: string,
  { afterRun, api = stack.api }: { afterRun?: string; api?: ApiClient } = {},
): Promise<{ execution: ExecutionBody; runId: string }> {
  const execution = await waitForExecution(api, executionId);
  const { runId } = await stack.client.workflow.getHandle(executionId).describe();
  if (execution.status !== status || runId === afterRun) {
    throw new Error(
      `Execution ${executionId} (run ${runId}) ended ${execution.status}, expected ${status}` +
        `${afterRun ? ` in a run after ${afterRun}` : ''}: ${JSON.stringify(execution)}`,
    );
  }
  return { execution, runId };
}

/** The history of the execution's latest run, as it is now. */
async function captureExecution(
  stack: Stack,
  name: string,
  covers: string,
  executionId: string,
): Promise<Recorded> {
  const { runId } = await stack.client.workflow.getHandle(executionId).describe();
  return { name, covers, history: await stack.client.workflow.getHandle(executionId, runId).fetchHistory() };
}

/** The finished delivery workflow of the execution's `execution.completed` event. */
async function captureDelivery(
  stack: Stack,
  executionId: string,
  name: string,
  covers: string,
): Promise<Recorded> {
  const request = await waitFor(
    async () =>
      stack.receiver.requests.find((r) => {
        const event = r.json as { event?: string; execution_id?: string } | undefined;
        return event?.event === 'execution.completed' && event.execution_id === executionId;
      }),
    { what: `the execution.completed event of ${executionId}` },
  );
  const handle = stack.client.workflow.getHandle(`dlv_${(request.json as { id: string }).id}`);
  const summary = (await handle.result()) as { delivered: number };
  if (summary.delivered !== 1) throw new Error(`Delivery of ${executionId}: ${JSON.stringify(summary)}`);
  return { name, covers, history: await handle.fetchHistory() };
}

/** The short commit of HEAD; refuses when the workflow code has uncommitted changes. */
function recordingCommit(allowUncommitted: boolean): string {
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: projectRoot, encoding: 'utf8' }).trimEnd();
  const commit = git('rev-parse', '--short', 'HEAD');
  const changed = git('status', '--porcelain', '--', ...WORKFLOW_CODE);
  if (!changed) return commit;
  if (!allowUncommitted) {
    throw new UsageError(
      `The workflow code has uncommitted changes, so these histories would belong to no commit:\n${changed}\n` +
        'Commit them first (or pass --allow-uncommitted to record them as "<commit>+uncommitted").',
    );
  }
  return `${commit}+uncommitted`;
}

/** `<name>.json`, or `<name>-<commit>.json` when that exists; undefined when both exist. */
function freeFileName(name: string, commit: string): string | undefined {
  return [`${name}.json`, `${name}-${commit.replace('+', '-')}.json`].find(
    (file) => !fs.existsSync(path.join(HISTORIES, file)),
  );
}

async function writeFormatted(file: string, text: string): Promise<void> {
  const options = (await prettier.resolveConfig(file)) ?? {};
  fs.writeFileSync(file, await prettier.format(text, { ...options, filepath: file }));
}

/** Adds one row per new history to the corpus table of test/replay/README.md. */
async function addToManifest(rows: { file: string; workflow: string; commit: string; covers: string }[]) {
  const lines = fs.readFileSync(MANIFEST, 'utf8').split('\n');
  const header = lines.findIndex((line) => line.startsWith('| history'));
  if (header < 0) throw new Error(`No corpus table (a row starting "| history") in ${MANIFEST}`);
  let end = header;
  while (lines[end + 1]?.startsWith('|')) end++;
  lines.splice(
    end + 1,
    0,
    ...rows.map(
      (r) => `| \`${r.file}\` | \`${r.workflow}\` | \`${r.commit}\` | ${r.covers.replace(/\|/g, '/')} |`,
    ),
  );
  await writeFormatted(MANIFEST, lines.join('\n'));
}

async function startStack(): Promise<Stack> {
  const receiver = await Receiver.start();
  const ai = await FakeAiProvider.start();
  const service = await startTestService({
    env: {
      TEMPORAL_TASK_QUEUE: 'switchyard',
      AI_BASE_URL: ai.baseUrl,
      AI_MODEL: 'fake-model',
      // One retry, a second after the first attempt.
      WEBHOOK_RETRY_SCHEDULE: '1',
      // One connector or ai call of a workspace at a time in the local activity: the deferral group holds
      // it to record deferred steps; the other groups run one execution at a time, so never defer.
      WORKER_LOCAL_CALL_SLOTS_PER_WORKSPACE: '1',
    },
    logger: createLogger('error'),
  });
  return { service, api: service.api(), client: service.runtime.services.temporal.client, receiver, ai };
}

async function stopStack(stack: Stack): Promise<void> {
  await stack.service.stop();
  await stopSharedTemporal();
  await stack.ai.stop();
  await stack.receiver.stop();
}

const say = (line: string) => process.stdout.write(`${line}\n`);

async function main(args: string[]): Promise<void> {
  const allowUncommitted = args.includes('--allow-uncommitted');
  const names = args.filter((arg) => arg !== '--allow-uncommitted');
  const unknown = names.filter((name) => !GROUPS.some((group) => group.name === name));
  if (unknown.length > 0) {
    throw new UsageError(
      `Unknown group(s) ${unknown.join(', ')}. Usage: npm run record-histories [-- [--allow-uncommitted] ` +
        `[group ...]], groups: ${GROUPS.map((g) => g.name).join(', ')} (all by default).`,
    );
  }
  const commit = recordingCommit(allowUncommitted);
  const groups = names.length > 0 ? GROUPS.filter((group) => names.includes(group.name)) : GROUPS;
  say(`Recording ${groups.map((g) => g.name).join(', ')} at ${commit}: starting a dev server and a service…`);
  const stack = await startStack();
  const recorded: Recorded[] = [];
  try {
    for (const group of groups) {
      say(`- ${group.name}`);
      recorded.push(...(await group.record(stack)));
    }
  } finally {
    await stopStack(stack);
  }

  const rows = [];
  for (const { name, covers, history } of recorded) {
    const file = freeFileName(name, commit);
    if (!file) {
      say(`  ${name}: kept (recorded at ${commit} already)`);
      continue;
    }
    const workflow =
      history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? 'unknown';
    await writeFormatted(path.join(HISTORIES, file), historyToJSON(history));
    rows.push({ file, workflow, commit, covers });
    say(`  ${file}: ${history.events?.length ?? 0} events`);
  }
  if (rows.length > 0) await addToManifest(rows);
  say(
    `${rows.length} histor${rows.length === 1 ? 'y' : 'ies'} written to ${path.relative(projectRoot, HISTORIES)} ` +
      `and listed in ${path.relative(projectRoot, MANIFEST)}.`,
  );
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (error: unknown) => {
    const text = error instanceof UsageError ? error.message : error instanceof Error ? error.stack : error;
    process.stderr.write(`${String(text)}\n`);
    process.exit(1);
  },
);
