/**
 * Sleeps of days (docs/definitions.md#sleep) and a wait_for_event's 24 h timeout (docs/events.md) on
 * Temporal's time-skipping test server: the real workflow
 * code and activities, Temporal's own timers, and a clock that jumps ahead while every run sleeps (see
 * test/support/time-skipping.ts). What a read shows (src/executions/history-mapper.ts) is read from each
 * run's history, as `GET /v1/executions/{id}` reads it.
 */
import { expect } from 'chai';
import type { WorkflowHandle } from '@temporalio/client';
import { optionalTsToDate, tsToMs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import type { Step } from '../../core/definitions/schema';
import { EXECUTION_WORKFLOW_TYPE, type ExecutionInput } from '../../core/execution-types';
import { executionSearchAttributes, WAITING_ATTRIBUTE } from '../../core/search-attributes';
import { mapExecution } from '../../src/executions/history-mapper';
import type { ExecutionView, StepView } from '../../src/executions/views';
import { definitionChecks } from '../support/definitions';
import { startTimeSkippingStack, type TimeSkippingStack } from '../support/time-skipping';
import { waitFor } from '../support/wait';

const DAY = 86_400_000;
const EventType = temporal.api.enums.v1.EventType;
const { parseDefinition } = definitionChecks();

describe('sleeps and event waits of days on the time-skipping test server @integration', function () {
  this.timeout(180_000);
  let stack: TimeSkippingStack;
  before(async () => {
    stack = await startTimeSkippingStack();
  });
  after(async () => stack?.stop());

  let count = 0;
  /** Starts an execution of a definition of `steps`, as the API's trigger does (its search attributes too). */
  async function start(steps: unknown[]): Promise<WorkflowHandle> {
    const definition = await parseDefinition({ id: 'reminder', steps });
    const input: ExecutionInput = {
      workspaceId: 'default',
      workflow: { id: definition.id, version: 1, definition },
      trigger: { type: 'api' },
      input: {},
      emit_started: false,
    };
    return stack.env.client.workflow.start(EXECUTION_WORKFLOW_TYPE, {
      args: [input],
      taskQueue: stack.taskQueue,
      workflowId: `ex_time_skipping_${++count}`,
      typedSearchAttributes: executionSearchAttributes(input),
    });
  }

  /** The execution as GET /v1/executions/{id} shows it, from its history and its search attributes. */
  async function read(handle: WorkflowHandle): Promise<ExecutionView> {
    const [history, description] = await Promise.all([handle.fetchHistory(), handle.describe()]);
    return mapExecution(handle.workflowId, {
      events: history.events ?? [],
      waiting: description.typedSearchAttributes.get(WAITING_ATTRIBUTE) === true,
      now: new Date(await stack.env.currentTimeMs()),
    });
  }

  const stepOf = (steps: StepView[], id: string) => steps.find((step) => step.id === id)!;

  it('a sleep of 3 days: waiting with until 3 days ahead, then it wakes 3 days later and the run goes on', async () => {
    const steps = [
      { id: 'pause', kind: 'sleep', duration: '3d' },
      { id: 'remind', kind: 'rules', rules: [], default: 'reminder sent' },
    ];
    const handle = await start(steps);
    const asleep = await waitFor(
      async () => {
        const view = await read(handle);
        return stepOf(view.steps, 'pause')?.waiting_for ? view : undefined;
      },
      { what: 'the sleep to begin' },
    );
    expect(asleep.status).to.equal('waiting');
    const pause = stepOf(asleep.steps, 'pause');
    const until = pause.waiting_for!.until;
    expect(Date.parse(until) - Date.parse(pause.started_at!)).to.equal(3 * DAY);
    const timer = (await handle.fetchHistory()).events!.find(
      (event) => event.eventType === EventType.EVENT_TYPE_TIMER_STARTED,
    )!;
    const fireIn = tsToMs(timer.timerStartedEventAttributes!.startToFireTimeout);
    expect(fireIn, "the timer's startToFireTimeout").to.be.within(3 * DAY - 5000, 3 * DAY);

    const wallClock = Date.now();
    expect(await handle.result()).to.deep.equal({ status: 'success', output: 'reminder sent' });
    expect(Date.now() - wallClock, 'ms of real time the 3 days took').to.be.below(60_000);

    const done = await read(handle);
    expect(done.status).to.equal('success');
    const woke = stepOf(done.steps, 'pause');
    expect(woke.status).to.equal('success');
    expect(woke.output).to.deep.equal({ slept_until: until });
    const fired = (await handle.fetchHistory()).events!.find(
      (event) => event.eventType === EventType.EVENT_TYPE_TIMER_FIRED,
    )!;
    expect(woke.finished_at).to.equal(optionalTsToDate(fired.eventTime)!.toISOString());
    expect(Date.parse(woke.finished_at!), 'woke before its until').to.be.at.least(Date.parse(until));
    expect(stepOf(done.steps, 'remind').output).to.equal('reminder sent');
  });

  it('a loop that sleeps a day between reminders: three reminders, a day apart', async () => {
    const steps: Step[] = [
      {
        id: 'daily',
        kind: 'loop',
        max_iterations: 3,
        until: 'iteration >= 2',
        steps: [
          { id: 'remind', kind: 'rules', rules: [], default: 'reminder {{ iteration + 1 }}' },
          { id: 'wait_a_day', kind: 'sleep', duration: '1d', if: 'iteration < 2' },
        ],
      },
    ];
    const handle = await start(steps);
    const result = await handle.result();
    expect(result).to.deep.equal({ status: 'success', output: { iterations: 3, output: 'reminder 3' } });
    const runs = stepOf((await read(handle)).steps, 'daily').runs!;
    const sleeps = runs.map((run) => stepOf(run.steps, 'wait_a_day'));
    expect(sleeps.map((sleep) => sleep.status)).to.deep.equal(['success', 'success', 'skipped']);
    // On the server's clock, the one that jumps (activities, which time steps' starts, keep the real one):
    // each timer fired a day after it started, and the second started after the first fired.
    const events = (await handle.fetchHistory()).events!;
    const at = (event: (typeof events)[number]) => optionalTsToDate(event.eventTime)!.getTime();
    const started = events.filter((event) => event.eventType === EventType.EVENT_TYPE_TIMER_STARTED);
    const fired = events.filter((event) => event.eventType === EventType.EVENT_TYPE_TIMER_FIRED);
    expect([started.length, fired.length]).to.deep.equal([2, 2]);
    for (const [i, timer] of started.entries())
      expect(at(fired[i]!) - at(timer), 'ms a sleep took').to.be.within(DAY - 5000, DAY + 5000);
    expect(at(started[1]!)).to.be.at.least(at(fired[0]!));
    expect(sleeps.slice(0, 2).map((sleep) => sleep.finished_at)).to.deep.equal(
      fired.map((event) => optionalTsToDate(event.eventTime)!.toISOString()),
    );
  });

  it('a wait_for_event with a 24h timeout and no event: the run fails with event_timed_out a day later', async () => {
    const handle = await start([
      { id: 'payment', kind: 'wait_for_event', event: 'payment.succeeded', timeout: '24h' },
    ]);
    const waiting = await waitFor(
      async () => {
        const view = await read(handle);
        return stepOf(view.steps, 'payment')?.waiting_for ? view : undefined;
      },
      { what: 'the wait to begin' },
    );
    expect(waiting.status).to.equal('waiting');
    const payment = stepOf(waiting.steps, 'payment');
    expect(payment.waiting_for).to.deep.include({ type: 'event', event: 'payment.succeeded' });
    expect(Date.parse(payment.waiting_for!.until) - Date.parse(payment.started_at!)).to.equal(DAY);

    const wallClock = Date.now();
    const failure = await handle.result().then(
      () => undefined,
      (error: Error) => error,
    );
    expect(failure, 'the run fails').to.not.equal(undefined);
    expect(Date.now() - wallClock, 'ms of real time the day took').to.be.below(60_000);
    const done = await read(handle);
    expect(done.status).to.equal('failed');
    expect(done.error).to.include({ step: 'payment', code: 'event_timed_out' });
    const events = (await handle.fetchHistory()).events!;
    const timer = events.find((event) => event.eventType === EventType.EVENT_TYPE_TIMER_STARTED)!;
    const fired = events.find((event) => event.eventType === EventType.EVENT_TYPE_TIMER_FIRED)!;
    const took = optionalTsToDate(fired.eventTime)!.getTime() - optionalTsToDate(timer.eventTime)!.getTime();
    expect(took, 'ms the wait took on the server clock').to.be.within(DAY - 5000, DAY + 5000);
  });

  it('a wait_for_event with a 24h timeout and on_timeout continue: the run goes on with output null', async () => {
    const handle = await start([
      {
        id: 'payment',
        kind: 'wait_for_event',
        event: 'payment.succeeded',
        timeout: '24h',
        on_timeout: 'continue',
      },
      { id: 'remind', kind: 'rules', rules: [{ when: 'steps.payment.output = null', output: 'unpaid' }] },
    ]);
    expect(await handle.result()).to.deep.equal({ status: 'success', output: 'unpaid' });
    const payment = stepOf((await read(handle)).steps, 'payment');
    expect(payment).to.include({ status: 'success', output: null });
  });
});
