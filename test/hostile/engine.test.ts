/**
 * Workflow definitions that try to break the engine: expressions that never end or allocate without
 * bound (in `if`, rule `when` and templates), templates that build enormous strings, hundreds of steps,
 * and step data larger than Temporal can record. Each must end in a clear, named step error (not a
 * stuck run, not a crashed worker), and the worker must go on running other executions afterwards.
 */
import { expect } from 'chai';
import {
  createWorkflow,
  definition,
  expectError,
  FAST_RETRY,
  httpStep,
  rulesStep,
  stepOf,
  trigger,
  waitForExecution,
  type ExecutionBody,
  type StepSpec,
} from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { startTestService, type TestService } from '../support/stack';

/** Tail recursion never grows the stack: only a step budget stops it. */
const ENDLESS_LOOP = '($f := function($x){ $f($x + 1) }; $f(0))';
/**
 * How an endless loop is stopped: by the step budget, or, on a machine so loaded that 50,000 steps take
 * longer than a second, by the time backstop (docs/definitions.md#limits).
 */
const ENDLESS_LOOP_STOPPED = /exceeded 50000 steps|took longer than 1000 ms/;
/** Recursion that is not in tail position: the evaluation depth limit stops it. */
const DEEP_RECURSION = '($f := function($x){ $x > 0 ? 1 + $f($x - 1) : 0 }; $f(4000)) > 0';

/** Each level references the one below ten times: 10^8 numbers as JSON, from a few kilobytes of memory. */
const level = (name: string, below: string) =>
  `$${name} := {${Array.from({ length: 10 }, (_, i) => `"${i}": $${below}`).join(', ')}}`;
const SHARED_STRUCTURE = `($a := [1..1000]; ${level('b', 'a')}; ${level('c', 'b')}; ${level('d', 'c')}; ${level('e', 'd')}; ${level('f', 'e')}; $length($string($f)) > 0)`;

describe('hostile definitions @integration', function () {
  let service: TestService;
  let receiver: Receiver;
  before(async function () {
    this.timeout(120_000);
    // An operator may raise steps_per_definition past its default of 200 (docs/operations.md#workspace-limits):
    // the engine must still run such definitions.
    service = await startTestService({ env: { WORKSPACE_MAX_STEPS_PER_DEFINITION: '300' } });
    receiver = await Receiver.start();
  });
  after(async () => {
    await receiver?.stop();
    await service?.stop();
  });

  async function run(steps: StepSpec[], input: unknown = {}, timeoutMs = 60_000): Promise<ExecutionBody> {
    const workflowId = await createWorkflow(service.api(), definition(steps));
    const executionId = await trigger(service.api(), workflowId, input);
    return waitForExecution(service.api(), executionId, undefined, timeoutMs);
  }

  /** The execution failed at `step` with `code`, and the message says why. */
  function expectStepError(execution: ExecutionBody, step: string, code: string, message: RegExp): void {
    expect(execution.status, JSON.stringify(execution.error)).to.equal('failed');
    expect(execution.error, JSON.stringify(execution.error)).to.deep.include({ step, code });
    expect(execution.error!.message).to.match(message);
  }

  /** The worker still runs executions: a one-step workflow succeeds. */
  async function expectWorkerStillRuns(): Promise<void> {
    const execution = await run([rulesStep('ping', [{ when: 'true', output: { pong: true } }])], {}, 30_000);
    expect(execution.status, JSON.stringify(execution.error)).to.equal('success');
    expect(stepOf(execution, 'ping').output).to.deep.equal({ pong: true });
  }

  /** A rules step that runs only when `condition` (evaluated by the workflow itself) holds. */
  const guarded = (condition: string) =>
    rulesStep('guarded', [{ when: 'true', output: { ran: true } }], { if: condition });

  describe('expressions that never end', () => {
    it('an endless loop in `if` fails the step with expression_error (step budget)', async () => {
      const execution = await run([guarded(ENDLESS_LOOP)]);
      expectStepError(execution, 'guarded', 'expression_error', ENDLESS_LOOP_STOPPED);
      await expectWorkerStillRuns();
    });

    it('deep recursion in `if` fails with the depth limit, not a stack overflow', async () => {
      const execution = await run([guarded(DEEP_RECURSION)]);
      expectStepError(execution, 'guarded', 'expression_error', /[Ss]tack overflow|depth/);
      await expectWorkerStillRuns();
    });

    it('an endless loop in a rule `when` fails the step with expression_error, without retries', async () => {
      const execution = await run([
        rulesStep('looping', [{ when: ENDLESS_LOOP, output: 1 }], { retry: FAST_RETRY }),
      ]);
      expectStepError(execution, 'looping', 'expression_error', ENDLESS_LOOP_STOPPED);
      expect(stepOf(execution, 'looping').attempts).to.equal(1);
      await expectWorkerStillRuns();
    });

    it('gives each step a budget of its own: 280 costly `if`s in a row all run', async function () {
      // About 3.7–4.5 ms each (jsonata alone, on the 2-core machines this suite runs on): together well past
      // the 1 s budget of one evaluation, each so far below it that a loaded machine (the suite runs files
      // in parallel) cannot stretch one past it. 280 steps: within the workspace's steps_per_definition.
      // The run takes 12–15 s alone on the slower of those machines, past a minute beside other files.
      this.timeout(240_000);
      const slowFalse = '($f := function($x){ $x >= 300 ? false : $f($x + 1) }; $f(0))';
      const steps = Array.from({ length: 280 }, (_, i) =>
        rulesStep(`s${i}`, [{ when: 'true', output: i }], { if: slowFalse }),
      );
      const execution = await run(steps, {}, 220_000);
      expect(execution.status, JSON.stringify(execution.error)).to.equal('success');
      expect(execution.steps.slice(1).map((step) => step.status)).to.deep.equal(Array(280).fill('skipped'));
    });

    it('a regular expression RE2 cannot run (a backreference) is refused when the workflow is saved', async () => {
      const res = await service
        .api()
        .post('/v1/workflows', definition([guarded("$match('abab', /(ab)\\1/)")]));
      expectError(res, 400, 'invalid_definition');
      expect(res.body.error.details[0]).to.deep.include({ path: '/steps/0/if' });
      expect(res.body.error.details[0].message).to.match(/linear time/);
    });

    it('a lookahead pattern in an input or output schema is refused when saved', async () => {
      const pattern = { type: 'object', properties: { x: { type: 'string', pattern: '^a(?=b)' } } };
      const input = await service
        .api()
        .post('/v1/workflows', definition([guarded('true')], { input_schema: pattern }));
      expectError(input, 400, 'invalid_definition');
      expect(input.body.error.details[0]).to.deep.include({ path: '/input_schema' });
      expect(input.body.error.details[0].message).to.match(/linear time/);
      const output = await service
        .api()
        .post(
          '/v1/workflows',
          definition([{ id: 'write', kind: 'ai', prompt: 'x', output_schema: pattern }]),
        );
      expectError(output, 400, 'invalid_definition');
      expect(output.body.error.details[0]).to.deep.include({ path: '/steps/0/output_schema' });
    });

    it('a regular expression with a backreference built by $eval fails the step', async () => {
      const execution = await run([guarded(`$eval("$match('abab', /(ab)\\\\1/)")`)]);
      expectStepError(execution, 'guarded', 'expression_error', /linear time/);
      await expectWorkerStillRuns();
    });

    it('$distinct over 100000 items runs in linear time instead of stalling the workflow', async () => {
      const execution = await run([guarded('$count($distinct([1..100000])) = 100000')]);
      expect(execution.status, JSON.stringify(execution.error)).to.equal('success');
      expect(stepOf(execution, 'guarded').output).to.deep.equal({ ran: true });
      await expectWorkerStillRuns();
    });
  });

  describe('many hostile runs at once (no definition can abort or starve the worker)', () => {
    /** Every way above to make an evaluation expensive, each in an `if`. */
    const HOSTILE = [
      ENDLESS_LOOP,
      DEEP_RECURSION,
      SHARED_STRUCTURE,
      "($f := function($s, $n){ $n = 0 ? $s : $f($s & $s, $n - 1) }; $length($f('x', 40)) > 0)",
      "$count([1..1000].$pad('', 1000000)) > 0",
      '$count([1..10000000]) > 0',
      `$eval("$match('${'a'.repeat(40)}!', /(a+)+$/)")`,
      '$count($distinct([1..100000])) = 100000',
    ];

    it('runs every hostile definition many times over in one worker, which goes on serving', async function () {
      this.timeout(240_000);
      const workflows = await Promise.all(
        HOSTILE.map((expression) => createWorkflow(service.api(), definition([guarded(expression)]))),
      );
      const ids: string[] = [];
      for (let round = 0; round < 5; round++)
        ids.push(...(await Promise.all(workflows.map((id) => trigger(service.api(), id)))));
      for (const id of ids) {
        const execution = await waitForExecution(service.api(), id, undefined, 120_000);
        expect(execution.status, JSON.stringify(execution.error)).to.be.oneOf(['success', 'failed']);
        if (execution.status === 'failed') expect(execution.error!.code).to.equal('expression_error');
      }
      expect(service.runtime.worker!.getState()).to.equal('RUNNING');
      await expectWorkerStillRuns();
    });

    it('completes a normal run while twenty runs of an endless loop are in flight', async function () {
      this.timeout(120_000);
      const looping = await createWorkflow(service.api(), definition([guarded(ENDLESS_LOOP)]));
      const normal = await createWorkflow(
        service.api(),
        definition([rulesStep('ping', [{ when: 'true', output: { pong: true } }])]),
      );
      const loops = await Promise.all(Array.from({ length: 20 }, () => trigger(service.api(), looping)));
      const done = await waitForExecution(
        service.api(),
        await trigger(service.api(), normal),
        undefined,
        60_000,
      );
      expect(done.status, JSON.stringify(done.error)).to.equal('success');
      const finished = await Promise.all(
        loops.map((id) => waitForExecution(service.api(), id, undefined, 60_000)),
      );
      for (const loop of finished) expectStepError(loop, 'guarded', 'expression_error', ENDLESS_LOOP_STOPPED);
      // It did not queue behind them: some of the loops ended after it did.
      const later = finished.filter((loop) => loop.finished_at! > done.finished_at!);
      expect(later.length, 'loops still running when the normal run finished').to.be.at.least(1);
    });
  });

  describe('expressions that allocate without bound', () => {
    it('string doubling in `if` fails with expression_error naming the size limit', async () => {
      const execution = await run([
        guarded("($f := function($s, $n){ $n = 0 ? $s : $f($s & $s, $n - 1) }; $length($f('x', 40)) > 0)"),
      ]);
      expectStepError(
        execution,
        'guarded',
        'expression_error',
        /string of \d+ characters, more than the limit/,
      );
      await expectWorkerStillRuns();
    });

    it('a huge $pad in `if` fails before allocating', async () => {
      const execution = await run([guarded("$length($pad('', 100000000)) > 0")]);
      expectStepError(execution, 'guarded', 'expression_error', /string of 100000000 characters/);
      await expectWorkerStillRuns();
    });

    it('a huge range in `if` fails with the sequence limit', async () => {
      const execution = await run([guarded('$count([1..10000000]) > 0')]);
      expectStepError(execution, 'guarded', 'expression_error', /sequence/);
      await expectWorkerStillRuns();
    });

    it('many large strings in `if` fail with the work budget', async () => {
      const execution = await run([guarded("$count([1..1000].$pad('', 1000000)) > 0")]);
      expectStepError(execution, 'guarded', 'expression_error', /work budget/);
      await expectWorkerStillRuns();
    });

    it('serializing a shared structure of 10^8 items fails without building it', async () => {
      const execution = await run([guarded(SHARED_STRUCTURE)]);
      expectStepError(
        execution,
        'guarded',
        'expression_error',
        /larger than the limit of \d+ characters as JSON/,
      );
      await expectWorkerStillRuns();
    });

    it('an endless loop in a rule `when` that allocates fails in the activity', async () => {
      const execution = await run([
        rulesStep('growing', [{ when: "($f := function($s){ $f($s & $s) }; $f('x'))", output: 1 }], {
          retry: FAST_RETRY,
        }),
      ]);
      expectStepError(execution, 'growing', 'expression_error', /more than the limit/);
      await expectWorkerStillRuns();
    });
  });

  describe('templates that build enormous values', () => {
    it('$join of a huge array in a connector body fails before the request is sent', async () => {
      const execution = await run([
        httpStep('send', {
          method: 'POST',
          url: `${receiver.url}/never`,
          body: { text: "{{ $join($split($pad('', 100000, 'a'), ''), 'bcdefghijklmnopqrstuvwxyz0123') }}" },
        }),
      ]);
      expectStepError(execution, 'send', 'expression_error', /string of 3000000 characters/);
      expect(receiver.requestsTo('/never')).to.have.length(0);
      await expectWorkerStillRuns();
    });

    it('a template producing an enormous string in an approval message fails the step', async () => {
      const execution = await run([
        { id: 'review', kind: 'approval', message: "Approve {{ $pad('', 50000000, 'x') }}?" },
      ]);
      expectStepError(execution, 'review', 'expression_error', /string of 50000000 characters/);
      await expectWorkerStillRuns();
    });

    it('templates that together exceed the size limit inside one string fail the step', async () => {
      const execution = await run([
        {
          id: 'write',
          kind: 'ai',
          prompt: "{{ $pad('', 1500000, 'a') }} and {{ $pad('', 1500000, 'b') }}",
        },
      ]);
      expectStepError(execution, 'write', 'expression_error', /template text grew to \d+ characters/);
      await expectWorkerStillRuns();
    });
  });

  describe('hundreds of steps', () => {
    it('300 rules steps run to success and the execution reads back with every step', async () => {
      const steps = Array.from({ length: 300 }, (_, i) =>
        rulesStep(`s${i}`, [
          { when: 'true', output: { n: i === 0 ? 0 : `{{ steps.s${i - 1}.output.n + 1 }}` } },
        ]),
      );
      const execution = await run(steps, {}, 110_000);
      expect(execution.status, JSON.stringify(execution.error)).to.equal('success');
      expect(execution.steps).to.have.length(301);
      expect(stepOf(execution, 's299').output).to.deep.equal({ n: 299 });
      const res = await service.api().get(`/v1/executions/${execution.execution_id}`);
      expect(res.status).to.equal(200);
      expect(res.body.steps).to.have.length(301);
      await expectWorkerStillRuns();
    }).timeout(180_000);
  });

  describe('step data larger than Temporal can record', () => {
    /** About 0.9 MB of text: three copies are past Temporal's 2 MiB payload limit. */
    const LARGE_TEXT = 'x'.repeat(900_000);

    it('a rules default that templates into more than 2 MiB fails with output_too_large', async () => {
      const execution = await run([
        rulesStep('big', [{ when: 'false', output: 1 }], {
          default: { a: "{{ $pad('', 1200000, 'a') }}", b: "{{ $pad('', 1200000, 'b') }}" },
          retry: FAST_RETRY,
        }),
      ]);
      expectStepError(execution, 'big', 'output_too_large', /more than the limit of \d+ bytes/);
      expect(stepOf(execution, 'big').attempts).to.equal(1);
      await expectWorkerStillRuns();
    });

    it('a rules output copying a connector response past 2 MiB fails with output_too_large', async () => {
      receiver.replyOnceTo('/large', { status: 200, body: LARGE_TEXT });
      const body = '{{ steps.fetch.output.body }}';
      const execution = await run([
        httpStep('fetch', { url: `${receiver.url}/large` }),
        rulesStep('copy', [{ when: 'true', output: { a: body, b: body, c: body } }], { retry: FAST_RETRY }),
      ]);
      expectStepError(execution, 'copy', 'output_too_large', /more than the limit/);
      expect(stepOf(execution, 'fetch').status).to.equal('success');
      await expectWorkerStillRuns();
    });

    it('a connector request templated past 2 MiB fails with input_too_large before it is sent', async () => {
      receiver.replyOnceTo('/large-source', { status: 200, body: LARGE_TEXT });
      const body = '{{ steps.fetch.output.body }}';
      const execution = await run([
        httpStep('fetch', { url: `${receiver.url}/large-source` }),
        httpStep('send', {
          method: 'POST',
          url: `${receiver.url}/large-sink`,
          body: { a: body, b: body, c: body },
        }),
      ]);
      expectStepError(execution, 'send', 'input_too_large', /more than the limit/);
      expect(receiver.requestsTo('/large-sink')).to.have.length(0);
      await expectWorkerStillRuns();
    });

    it('a connector response nested 5000 deep fails the step clearly, and the execution reads back', async () => {
      const deep = '['.repeat(5_000) + ']'.repeat(5_000);
      receiver.replyOnceTo('/deep', {
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: deep,
      });
      const execution = await run([
        httpStep('fetch', { url: `${receiver.url}/deep` }, { retry: FAST_RETRY }),
      ]);
      expectStepError(execution, 'fetch', 'output_too_large', /nested deeper than \d+ levels/);
      expect(stepOf(execution, 'fetch').attempts).to.equal(1);
      expect((await service.api().get(`/v1/executions/${execution.execution_id}`)).status).to.equal(200);
      await expectWorkerStillRuns();
    });

    it('a rules output an expression nests 3000 deep fails the step clearly', async () => {
      const nest = '($f := function($x, $n){ $n = 0 ? $x : $f({"a": $x}, $n - 1) }; $f(1, 3000))';
      const execution = await run([
        rulesStep('nest', [{ when: 'true', output: `{{ ${nest} }}` }], { retry: FAST_RETRY }),
      ]);
      // On a machine too loaded for 3000 levels within a second, the time backstop stops it first.
      expectStepError(
        execution,
        'nest',
        'expression_error',
        /value nested deeper than \d+ levels|took longer than 1000 ms/,
      );
      const res = await service.api().get(`/v1/executions/${execution.execution_id}`);
      expect(res.status).to.equal(200);
      await expectWorkerStillRuns();
    });

    it('a rules step reads earlier outputs that add up past 2 MiB (recorded once, as their outputs)', async () => {
      const half = "{{ $pad('', 1100000, 'z') }}";
      const execution = await run([
        rulesStep('one', [{ when: 'true', output: half }]),
        rulesStep('two', [{ when: 'true', output: half }]),
        rulesStep('both', [
          { when: '$length(steps.one.output) + $length(steps.two.output) > 2000000', output: true },
        ]),
      ]);
      expect(execution.status, JSON.stringify(execution.error)).to.equal('success');
      expect(stepOf(execution, 'both').output).to.equal(true);
      const read = (stepOf(execution, 'both').input as { data: { steps: Record<string, unknown> } }).data;
      expect(Object.keys(read.steps)).to.deep.equal(['one', 'two']);
      await expectWorkerStillRuns();
    });
  });
});
