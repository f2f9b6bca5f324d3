/** Sleep steps (docs/definitions.md#sleep): a Temporal timer, `waiting` while it runs, cancel, limits. */
import { expect } from 'chai';
import {
  createWorkflow,
  definition,
  expectError,
  rulesStep,
  stepOf,
  trigger,
  waitForExecution,
  type ExecutionBody,
  type StepSpec,
} from '../support/fixtures';
import { startTestService, type TestService } from '../support/stack';
import { waitFor } from '../support/wait';

describe('sleep steps @integration', function () {
  this.timeout(120_000);
  let service: TestService;
  before(async function () {
    service = await startTestService();
  });
  after(async () => service?.stop());

  async function run(steps: StepSpec[], input: unknown = {}): Promise<string> {
    const workflowId = await createWorkflow(service.api(), definition(steps));
    return trigger(service.api(), workflowId, input);
  }

  const asleep = (id: string) => (e: ExecutionBody) => e.status === 'waiting' && hasWaitingFor(e, id);
  const hasWaitingFor = (e: ExecutionBody, id: string) =>
    e.steps.some((s) => s.id === id && s.waiting_for !== undefined);

  it('sleeps for its duration, then the execution goes on', async () => {
    const id = await run([
      { id: 'pause', kind: 'sleep', duration: '2s' },
      rulesStep('after', [{ when: 'true', output: '{{ steps.pause.output.slept_until }}' }]),
    ]);
    const done = await waitForExecution(service.api(), id);
    expect(done.status, JSON.stringify(done.error)).to.equal('success');
    const pause = stepOf(done, 'pause');
    expect(pause).to.include({ status: 'success', kind: 'sleep', attempts: 1 });
    expect(pause.input).to.deep.equal({ duration: '2s' });
    const until = (pause.output as { slept_until: string }).slept_until;
    expect(Date.parse(until) - Date.parse(pause.started_at!)).to.equal(2000);
    // Never early; late only by the moment its workflow task takes to complete (a loaded machine's).
    const lateBy = Date.parse(pause.finished_at!) - Date.parse(until);
    expect(lateBy, 'ms after its until that it woke').to.be.within(0, 2000);
    expect(pause.waiting_for).to.equal(undefined);
    expect(stepOf(done, 'after').output).to.equal(until);
  });

  it('shows the execution and the step waiting, with waiting_for, while it sleeps', async () => {
    const id = await run([{ id: 'pause', kind: 'sleep', duration: '1h', name: 'Cool down' }]);
    const execution = await waitForExecution(service.api(), id, asleep('pause'));
    const pause = stepOf(execution, 'pause');
    expect(pause).to.include({ status: 'waiting', name: 'Cool down', finished_at: null, output: null });
    expect(pause.waiting_for!.type).to.equal('timer');
    expect(Date.parse(pause.waiting_for!.until) - Date.parse(pause.started_at!)).to.equal(3_600_000);
    await service.api().post(`/v1/executions/${id}/cancel`).expect(202);
  });

  it('lists a sleeping execution with status=waiting', async () => {
    const workflowId = await createWorkflow(
      service.api(),
      definition([{ id: 'pause', kind: 'sleep', duration: '1h' }]),
    );
    const id = await trigger(service.api(), workflowId);
    await waitForExecution(service.api(), id, asleep('pause'));
    const listed = await waitFor(
      async () => {
        const res = await service.api().get(`/v1/executions?workflow=${workflowId}&status=waiting`);
        return res.body.data.find((e: { execution_id: string }) => e.execution_id === id);
      },
      { what: 'the sleeping execution in the waiting list' },
    );
    expect(listed.status).to.equal('waiting');
    await service.api().post(`/v1/executions/${id}/cancel`).expect(202);
  });

  it('is canceled within seconds when the execution is canceled while it sleeps', async () => {
    const id = await run([
      { id: 'pause', kind: 'sleep', duration: '365d' },
      rulesStep('never', [{ when: 'true', output: 1 }]),
    ]);
    await waitForExecution(service.api(), id, asleep('pause'));
    const asked = Date.now();
    await service.api().post(`/v1/executions/${id}/cancel`).expect(202);
    const done = await waitForExecution(service.api(), id, undefined, 10_000);
    expect(done.status).to.equal('canceled');
    expect(Date.parse(done.finished_at!) - asked, 'took to cancel').to.be.below(10_000);
    const pause = stepOf(done, 'pause');
    expect(pause.status).to.equal('canceled');
    // The timer's cancel and the run's close are events of one workflow task: a millisecond may separate them.
    const pauseEnded = Date.parse(pause.finished_at!);
    expect(pauseEnded, 'the sleep ended after the cancel was asked').to.be.at.least(asked - 1000);
    expect(pauseEnded, 'the sleep ended by the time the run closed').to.be.at.most(
      Date.parse(done.finished_at!),
    );
    expect(pause.waiting_for).to.equal(undefined);
    expect(done.steps.map((s) => s.id)).to.deep.equal(['trigger', 'pause']);
  });

  it('sleeps until the time its `until` template gives', async () => {
    const sendAt = new Date(Date.now() + 2500).toISOString();
    const id = await run([{ id: 'pause', kind: 'sleep', until: '{{ input.send_at }}' }], {
      send_at: sendAt,
    });
    const waiting = await waitForExecution(service.api(), id, asleep('pause'));
    expect(stepOf(waiting, 'pause').waiting_for).to.deep.equal({ type: 'timer', until: sendAt });
    const done = await waitForExecution(service.api(), id);
    const pause = stepOf(done, 'pause');
    expect(pause.status).to.equal('success');
    expect(pause.input).to.deep.equal({ until: sendAt });
    expect(pause.output).to.deep.equal({ slept_until: sendAt });
    expect(Date.parse(pause.finished_at!)).to.be.at.least(Date.parse(sendAt));
  });

  it('takes any RFC 3339 offset and shows the time in UTC', async () => {
    const local = '2020-01-01T10:00:00.250+02:00';
    const id = await run([{ id: 'pause', kind: 'sleep', until: local }]);
    const done = await waitForExecution(service.api(), id);
    expect(stepOf(done, 'pause').output).to.deep.equal({ slept_until: '2020-01-01T08:00:00.250Z' });
  });

  it('goes on at once when `until` has passed', async () => {
    const past = new Date(Date.now() - 60_000).toISOString();
    const id = await run(
      [
        { id: 'pause', kind: 'sleep', until: '{{ input.at }}' },
        rulesStep('after', [{ when: 'true', output: 1 }]),
      ],
      { at: past },
    );
    const done = await waitForExecution(service.api(), id);
    expect(done.status).to.equal('success');
    const pause = stepOf(done, 'pause');
    expect(pause).to.include({ status: 'success' });
    expect(pause.output).to.deep.equal({ slept_until: past });
    expect(pause.duration_ms, 'slept').to.be.below(1000);
    expect(stepOf(done, 'after').status).to.equal('success');
  });

  it('fails the step with invalid_time when `until` gives something that is not a time', async () => {
    const id = await run([{ id: 'pause', kind: 'sleep', until: '{{ input.at }}' }], { at: 'next tuesday' });
    const done = await waitForExecution(service.api(), id);
    expect(done.status).to.equal('failed');
    expect(done.error).to.include({ step: 'pause', code: 'invalid_time' });
    expect(done.error!.message).to.include('"next tuesday"').and.include('RFC 3339');
    expect(stepOf(done, 'pause')).to.include({ status: 'failed' });
    expect(stepOf(done, 'pause').error!.code).to.equal('invalid_time');
  });

  it('fails the step with sleep_too_long when `until` is more than 365 days ahead', async () => {
    const far = new Date(Date.now() + 366 * 86_400_000).toISOString();
    const id = await run([{ id: 'pause', kind: 'sleep', until: '{{ input.at }}' }], { at: far });
    const done = await waitForExecution(service.api(), id);
    expect(done.status).to.equal('failed');
    expect(done.error).to.include({ step: 'pause', code: 'sleep_too_long' });
  });

  it('is skipped when its `if` does not hold', async () => {
    const id = await run([{ id: 'pause', kind: 'sleep', duration: '1h', if: 'false' }]);
    const done = await waitForExecution(service.api(), id);
    expect(done.status).to.equal('success');
    expect(stepOf(done, 'pause').status).to.equal('skipped');
  });

  it('refuses on save a duration over 365 days, both or neither of duration and until, a written time that is not one', async () => {
    const save = (step: Record<string, unknown>) =>
      service.api().post('/v1/workflows', definition([{ id: 'pause', kind: 'sleep', ...step }]));
    const cases: [Record<string, unknown>, string][] = [
      [{ duration: '366d' }, '/steps/0/duration'],
      [{ duration: '1h', until: '2030-01-01T00:00:00Z' }, '/steps/0'],
      [{}, '/steps/0'],
      [{ until: '2030-02-30T00:00:00Z' }, '/steps/0/until'],
      [{ duration: '1h', retry: { max_attempts: 2 } }, '/steps/0'],
    ];
    for (const [step, path] of cases) {
      const res = await save(step);
      expectError(res, 400, 'invalid_definition');
      expect(
        res.body.error.details.map((d: { path: string }) => d.path),
        JSON.stringify(step),
      ).to.include(path);
    }
    await save({ duration: '365d' }).expect(201);
  });

  it('sleeps in every iteration of a loop, each run showing its own sleep', async () => {
    const id = await run([
      {
        id: 'poll',
        kind: 'loop',
        max_iterations: 5,
        until: 'iteration >= 1',
        steps: [
          rulesStep('check', [{ when: 'true', output: '{{ iteration }}' }]),
          { id: 'pause', kind: 'sleep', duration: '1500ms', if: 'steps.check.output < 1' },
        ],
      },
    ]);
    const waiting = await waitForExecution(service.api(), id, (e) => e.status === 'waiting');
    const first = stepOf(waiting, 'poll').runs![0]!;
    expect(first.status).to.equal('waiting');
    expect(first.steps.find((s) => s.id === 'pause')!.waiting_for!.type).to.equal('timer');
    const done = await waitForExecution(service.api(), id);
    expect(done.status, JSON.stringify(done.error)).to.equal('success');
    const runs = stepOf(done, 'poll').runs!;
    expect(runs.map((r) => r.steps.find((s) => s.id === 'pause')!.status)).to.deep.equal([
      'success',
      'skipped',
    ]);
    const runsPage = await service.api().get(`/v1/executions/${id}/steps/poll/runs`).expect(200);
    expect(runsPage.body.data[0].steps[1].output.slept_until).to.be.a('string');
  });

  it('stops sleeping when another branch of its parallel step fails', async () => {
    const id = await run([
      {
        id: 'both',
        kind: 'parallel',
        branches: [
          { id: 'slow', steps: [{ id: 'pause', kind: 'sleep', duration: '1h' }] },
          {
            id: 'bad',
            steps: [
              { id: 'wait_a_bit', kind: 'sleep', duration: '1s' },
              rulesStep('boom', [{ when: 'true', action: 'fail', message: 'no' }]),
            ],
          },
        ],
      },
    ]);
    const done = await waitForExecution(service.api(), id, undefined, 20_000);
    expect(done.status).to.equal('failed');
    expect(done.error).to.include({ step: 'boom' });
    const slow = stepOf(done, 'both').runs!.find((r) => r.key === 'slow')!;
    expect(slow.status).to.equal('canceled');
    expect(slow.steps[0]).to.include({ id: 'pause', status: 'canceled' });
  });
});
