/**
 * Containers as `GET /v1/executions/{id}` and the runs list show them (src/executions/step-lists.ts,
 * src/executions/runs.ts), from histories written here event by event: the states a real run passes
 * through too briefly to catch (items in flight, pending ones, a cancel in the middle of a map). Whole runs
 * against the service: test/integration/composition-reads.test.ts.
 */
import { expect } from 'chai';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { msNumberToTs, optionalTsToDate } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import type {
  ApprovalDecision,
  ControlResult,
  ExecutionInput,
  RunPath,
  StepRecord,
} from '../../core/execution-types';
import { decodeHistory, mapExecution, type HistorySource } from '../../src/executions/history-mapper';
import { EncryptionCodec } from '../../platform/temporal/encryption-codec';
import { stepRuns } from '../../src/executions/runs';
import type { RunView, StepView } from '../../src/executions/views';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const EventType = temporal.api.enums.v1.EventType;

const T0 = Date.parse('2026-11-26T08:00:00.000Z');
const iso = (ms: number) => new Date(T0 + ms).toISOString();
const payloads = (value: unknown) => ({ payloads: [defaultPayloadConverter.toPayload(value)] });

/** A history under construction: each event a millisecond after the one before. */
class History {
  readonly events: HistoryEvent[] = [];
  private clock = 0;

  constructor(steps: unknown[], input: unknown = {}) {
    const execution: ExecutionInput = {
      workspaceId: 'ws',
      workflow: {
        id: 'wf',
        version: 1,
        definition: { id: 'wf', name: 'wf', steps } as never,
      },
      trigger: { type: 'api' },
      input,
    };
    this.add(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, {
      workflowExecutionStartedEventAttributes: { input: payloads(execution) },
    });
  }

  private add(eventType: temporal.api.enums.v1.EventType, attrs: HistoryEvent = {}): this {
    this.clock += 1;
    this.events.push({ eventType, eventTime: msNumberToTs(T0 + this.clock), ...attrs });
    return this;
  }

  private marker(activityType: string, result: unknown): this {
    return this.add(EventType.EVENT_TYPE_MARKER_RECORDED, {
      markerRecordedEventAttributes: {
        markerName: 'core_local_activity',
        details: { data: payloads({ activity_type: activityType }), result: payloads(result) },
      },
    });
  }

  /** A container entered (in the list at `path`). */
  enter(step: string, found: Omit<ControlResult, 'at' | 'of'> = {}, path: RunPath = []): this {
    const of = { purpose: 'enter' as const, step, ...(path.length > 0 && { path }) };
    return this.marker('evaluate_control', { at: iso(this.clock), of, ...found });
  }

  /** A loop iteration's `until` (asked in the iteration's run). */
  until(step: string, path: RunPath, done: boolean): this {
    return this.marker('evaluate_control', {
      at: iso(this.clock),
      of: { purpose: 'until', step, path },
      done,
    });
  }

  /** A successful rules step at `path`. */
  ran(id: string, path: RunPath, output: unknown, status: StepRecord['status'] = 'success'): this {
    const record: StepRecord = {
      id,
      status,
      started_at: iso(this.clock),
      finished_at: status === 'waiting' ? null : iso(this.clock),
      attempts: 1,
      input: null,
      output,
      error: status === 'failed' ? { code: 'rule_failed', message: `${id} failed` } : null,
      ...(path.length > 0 && { path }),
    };
    return this.marker('run_steps', { records: [record], next: { kind: 'continue' }, bytes: 0 });
  }

  decide(step: string, run: string | undefined, decision: ApprovalDecision): this {
    const updateId = `u${this.events.length}`;
    this.add(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED, {
      workflowExecutionUpdateAcceptedEventAttributes: {
        acceptedRequest: {
          meta: { updateId },
          input: {
            name: 'decide',
            args: payloads({
              step,
              decision: 'approve',
              comment: null,
              decided_by: 'k',
              ...(run && { run }),
            }),
          },
        },
      },
    });
    return this.add(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED, {
      workflowExecutionUpdateCompletedEventAttributes: {
        meta: { updateId },
        outcome: { success: payloads(decision) },
      },
    });
  }

  canceled(): this {
    return this.add(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED);
  }

  /** A sleep step at `path` began: its record, then its timer (named by the step's key, as sleep.ts does). */
  slept(
    id: string,
    path: RunPath,
    until: string,
    summary: Payload = summaryOf([...path, id].join('/')),
  ): this {
    const record: StepRecord = {
      id,
      status: 'waiting',
      started_at: iso(this.clock),
      finished_at: null,
      attempts: 1,
      input: { until },
      output: null,
      error: null,
      waiting_for: { type: 'timer', until },
      ...(path.length > 0 && { path }),
    };
    this.marker('run_steps', {
      records: [record],
      next: { kind: 'sleep', until, delay_ms: 60_000 },
      bytes: 0,
    });
    return this.add(EventType.EVENT_TYPE_TIMER_STARTED, {
      timerStartedEventAttributes: { timerId: String(this.events.length) },
      userMetadata: { summary },
    });
  }

  /** The timer of the sleep that began `startedEvent` events ago fired (or was canceled). */
  timerEnded(startedEvent: number, how: 'fired' | 'canceled' = 'fired'): this {
    const timerId = this.events[startedEvent]!.timerStartedEventAttributes!.timerId!;
    return how === 'fired'
      ? this.add(EventType.EVENT_TYPE_TIMER_FIRED, { timerFiredEventAttributes: { timerId } })
      : this.add(EventType.EVENT_TYPE_TIMER_CANCELED, { timerCanceledEventAttributes: { timerId } });
  }

  source(): HistorySource {
    return { events: this.events, now: new Date(T0 + this.clock + 1000) };
  }
}

const summaryOf = (key: string): Payload => defaultPayloadConverter.toPayload(key);
const rules = (id: string) => ({ id, kind: 'rules', rules: [{ when: 'true', output: 1 }] });
const mapStep = (extra: Record<string, unknown> = {}, steps: unknown[] = [rules('each_step')]) => ({
  id: 'each',
  kind: 'map',
  items: 'input.list',
  steps,
  ...extra,
});
const stepOf = (steps: StepView[], id: string) => steps.find((step) => step.id === id)!;
const statuses = (runs: RunView[] | undefined) => (runs ?? []).map((run) => run.status);

describe('container reads: runs from history', () => {
  it('a map runs `concurrency` items at once: those begun run, the others are pending', () => {
    const history = new History([mapStep({ concurrency: 2 })], { list: [1, 2, 3, 4, 5] })
      .enter('each', { items: [1, 2, 3, 4, 5] })
      .ran('each_step', ['each', '0'], 10)
      .ran('each_step', ['each', '1'], 20);
    const each = stepOf(mapExecution('ex', history.source()).steps, 'each');
    expect(each.status).to.equal('running');
    expect(each.runs_total).to.equal(5);
    // Two items ended, so two more started (their first batch has not landed yet).
    expect(statuses(each.runs)).to.deep.equal(['success', 'success', 'running', 'running', 'pending']);
    expect(each.runs![2]!.steps.map((step) => [step.id, step.status])).to.deep.equal([
      ['each_step', 'running'],
    ]);
    expect(each.runs![4]!.steps).to.deep.equal([]);
  });

  it('a cancel in the middle of a map cancels the items in flight and the ones it never started', () => {
    const history = new History([mapStep({ concurrency: 2 })], { list: [1, 2, 3, 4] })
      .enter('each', { items: [1, 2, 3, 4] })
      .ran('each_step', ['each', '0'], 10)
      .canceled();
    const each = stepOf(mapExecution('ex', history.source()).steps, 'each');
    expect(each.status).to.equal('canceled');
    expect(statuses(each.runs)).to.deep.equal(['success', 'canceled', 'canceled', 'canceled']);
    expect(each.runs![3]).to.include({ started_at: null, finished_at: null });
  });

  it('a loop has one run per iteration begun: the one after an `until` that did not hold runs', () => {
    const loop = { id: 'poll', kind: 'loop', until: 'false', max_iterations: 5, steps: [rules('check')] };
    const history = new History([loop])
      .enter('poll')
      .ran('check', ['poll', '0'], 1)
      .until('poll', ['poll', '0'], false)
      .ran('check', ['poll', '1'], 2)
      .until('poll', ['poll', '1'], false);
    const poll = stepOf(mapExecution('ex', history.source()).steps, 'poll');
    expect(poll.status).to.equal('running');
    expect(poll.runs!.map((run) => [run.key, run.status])).to.deep.equal([
      ['0', 'success'],
      ['1', 'success'],
      ['2', 'running'],
    ]);
    history.ran('check', ['poll', '2'], 3).until('poll', ['poll', '2'], true);
    const done = stepOf(mapExecution('ex', history.source()).steps, 'poll');
    expect(done).to.include({ status: 'success', runs_total: 3 });
    expect(done.output).to.deep.equal({ iterations: 3, output: 3 });
  });

  it('a loop whose `until` never held by max_iterations failed with loop_limit_exceeded', () => {
    const loop = { id: 'poll', kind: 'loop', until: 'false', max_iterations: 1, steps: [rules('check')] };
    const history = new History([loop])
      .enter('poll')
      .ran('check', ['poll', '0'], 1)
      .until('poll', ['poll', '0'], false);
    const poll = stepOf(mapExecution('ex', history.source()).steps, 'poll');
    expect(poll.status).to.equal('failed');
    expect(poll.error?.code).to.equal('loop_limit_exceeded');
    expect(poll.runs_total).to.equal(1);
  });

  it('a decision that names its run decides the approval waiting in that map item only', () => {
    const approval = { id: 'review', kind: 'approval', message: 'ok?' };
    const decision: ApprovalDecision = {
      decision: 'approved',
      decided_by: 'k',
      comment: null,
      decided_at: iso(50),
    };
    const history = new History([mapStep({}, [approval])], { list: ['a', 'b'] })
      .enter('each', { items: ['a', 'b'] })
      .ran('review', ['each', '0'], null, 'waiting')
      .ran('review', ['each', '1'], null, 'waiting')
      .decide('review', '1', decision);
    const each = stepOf(mapExecution('ex', history.source()).steps, 'each');
    expect(each.runs!.map((run) => run.steps[0]!.status)).to.deep.equal(['waiting', 'success']);
    expect(each.runs![1]!.steps[0]!.output).to.deep.equal(decision);
    expect(statuses(each.runs)).to.deep.equal(['waiting', 'success']);
  });

  it('a branch that fails with on_error "continue" fails its run, not the parallel step (its entry is null)', () => {
    const parallel = {
      id: 'both',
      kind: 'parallel',
      branches: [
        { id: 'left', steps: [rules('l')] },
        { id: 'right', on_error: 'continue', steps: [rules('r')] },
      ],
    };
    const history = new History([parallel])
      .enter('both')
      .ran('l', ['both', 'left'], 'L')
      .ran('r', ['both', 'right'], null, 'failed');
    const both = stepOf(mapExecution('ex', history.source()).steps, 'both');
    expect(statuses(both.runs)).to.deep.equal(['success', 'failed']);
    expect(both.status).to.equal('success');
    expect(both.output).to.deep.equal({ left: 'L', right: null });
  });

  it('a read shows the first 20 runs of every container, nested ones too; runs_total counts them all', () => {
    const list = Array.from({ length: 25 }, (_, i) => i);
    const inner = { id: 'inner', kind: 'map', items: 'input.list', steps: [rules('leaf')] };
    const history = new History([mapStep({}, [inner])], { list }).enter('each', { items: list });
    history.enter('inner', { items: list }, ['each', '0']);
    for (const i of list) history.ran('leaf', ['each', '0', 'inner', String(i)], i);
    const each = stepOf(mapExecution('ex', history.source()).steps, 'each');
    expect(each.runs).to.have.length(20);
    expect(each.runs_total).to.equal(25);
    const nested = stepOf(each.runs![0]!.steps, 'inner');
    expect(nested.runs).to.have.length(20);
    expect(nested).to.include({ runs_total: 25, status: 'success' });
  });

  it("the runs list holds a nested container's runs in every outer run, outer run first", () => {
    const loop = { id: 'retry_loop', kind: 'loop', until: 'false', max_iterations: 2, steps: [rules('try')] };
    const history = new History([mapStep({}, [loop])], { list: ['a', 'b'] }).enter('each', {
      items: ['a', 'b'],
    });
    for (const item of ['1', '0']) {
      history.enter('retry_loop', {}, ['each', item]);
      history
        .ran('try', ['each', item, 'retry_loop', '0'], 0)
        .until('retry_loop', ['each', item, 'retry_loop', '0'], true);
    }
    const runs = stepRuns('ex', 'retry_loop', history.source());
    expect(runs.map(({ run }) => run.path)).to.deep.equal([
      ['each', '0', 'retry_loop', '0'],
      ['each', '1', 'retry_loop', '0'],
    ]);
    expect(runs.map(({ position }) => position)).to.deep.equal([
      [0, 0],
      [1, 0],
    ]);
  });

  it('the runs list refuses a step the definition lacks, and one that holds no steps, with 404 step_not_found', () => {
    const history = new History([mapStep()], { list: [] }).enter('each', { items: [] });
    for (const id of ['nope', 'each_step']) {
      expect(() => stepRuns('ex', id, history.source()))
        .to.throw()
        .that.includes({ status: 404, code: 'step_not_found' });
    }
  });
});

describe('sleep reads: a sleep step from its record and its timer', () => {
  const sleep = (id: string) => ({ id, kind: 'sleep', until: '{{ input.at }}' });
  const at = iso(60_000);
  /** The index of the last event (a sleep's TimerStarted, right after slept()). */
  const last = (history: History) => history.events.length - 1;

  it('waits with waiting_for until its timer fires, then succeeds with slept_until at the time it fired', () => {
    const history = new History([sleep('pause'), rules('after')]).slept('pause', [], at);
    const timer = last(history);
    const waiting = mapExecution('ex', history.source());
    expect(stepOf(waiting.steps, 'pause')).to.deep.include({
      status: 'waiting',
      waiting_for: { type: 'timer', until: at },
      finished_at: null,
    });
    expect(waiting.steps.map((step) => step.id)).to.deep.equal(['trigger', 'pause']);
    history.timerEnded(timer);
    const fired = history.events[last(history)]!;
    const pause = stepOf(mapExecution('ex', history.source()).steps, 'pause');
    expect(pause).to.deep.include({ status: 'success', output: { slept_until: at } });
    expect(pause.finished_at).to.equal(optionalTsToDate(fired.eventTime)!.toISOString());
    expect(pause).not.to.have.property('waiting_for');
  });

  it('a timer whose summary names another step ends no sleep', () => {
    const history = new History([sleep('pause')]).slept('pause', [], at, summaryOf('other'));
    history.timerEnded(last(history));
    expect(stepOf(mapExecution('ex', history.source()).steps, 'pause').status).to.equal('waiting');
  });

  it('is canceled, without waiting_for, when the execution is canceled while it sleeps; no later step shows', () => {
    const history = new History([sleep('pause'), rules('after')]).slept('pause', [], at).canceled();
    const execution = mapExecution('ex', history.source());
    expect(stepOf(execution.steps, 'pause')).to.include({ status: 'canceled' });
    expect(stepOf(execution.steps, 'pause')).not.to.have.property('waiting_for');
    expect(execution.steps.map((step) => step.id)).to.deep.equal(['trigger', 'pause']);
  });

  it('in a map item: its run waits; a canceled timer (the map halted) cancels it', () => {
    const history = new History([mapStep({}, [sleep('nap')])], { list: ['a', 'b'] })
      .enter('each', { items: ['a', 'b'] })
      .slept('nap', ['each', '0'], at);
    const timer = last(history);
    history.slept('nap', ['each', '1'], at);
    let each = stepOf(mapExecution('ex', history.source()).steps, 'each');
    expect(statuses(each.runs)).to.deep.equal(['waiting', 'waiting']);
    expect(each.runs![1]!.steps[0]!.waiting_for).to.deep.equal({ type: 'timer', until: at });
    history.timerEnded(timer, 'canceled').timerEnded(last(history) - 1);
    each = stepOf(mapExecution('ex', history.source()).steps, 'each');
    expect(each.runs!.map((run) => run.steps[0]!.status)).to.deep.equal(['canceled', 'success']);
  });

  it('reads the step of an encrypted timer summary once the history is decoded', async () => {
    const codec = new EncryptionCodec([{ id: 'k', key: Buffer.alloc(32, 7) }]);
    const [encrypted] = await codec.encode([summaryOf('pause')]);
    const history = new History([sleep('pause')]).slept('pause', [], at, encrypted);
    history.timerEnded(last(history));
    await decodeHistory(history.events, [codec]);
    expect(stepOf(mapExecution('ex', history.source()).steps, 'pause').status).to.equal('success');
  });
});
