/** docs/api.md#executions: executions as the API shows them, for running, finished and failed runs. */
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
} from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { startTestService, type TestService } from '../support/stack';
import { waitFor } from '../support/wait';

describe('executions @integration', function () {
  let service: TestService;
  let receiver: Receiver;
  before(async function () {
    this.timeout(120_000);
    service = await startTestService();
    receiver = await Receiver.start();
  });
  after(async () => {
    await receiver?.stop();
    await service?.stop();
  });

  async function run(steps: Parameters<typeof definition>[0], input: unknown = {}): Promise<ExecutionBody> {
    const workflowId = await createWorkflow(service.api(), definition(steps));
    return waitForExecution(service.api(), await trigger(service.api(), workflowId, input));
  }

  describe('a finished execution', () => {
    let execution: ExecutionBody;
    before(async () => {
      execution = await run(
        [
          rulesStep('route', [{ when: "input.plan = 'pro'", output: { tier: 'high' } }], { name: 'Route' }),
          httpStep('crm', {
            method: 'POST',
            url: `${receiver.url}/customers`,
            body: { name: '{{ input.customer }}', tier: '{{ steps.route.output.tier }}' },
          }),
        ],
        { customer: 'Ada', plan: 'pro' },
      );
    });

    it('has status success, timings and no error', () => {
      expect(execution.status).to.equal('success');
      expect(execution.error).to.equal(null);
      expect(Date.parse(execution.finished_at!)).to.be.at.least(Date.parse(execution.started_at));
      expect(execution.duration_ms).to.equal(
        Date.parse(execution.finished_at!) - Date.parse(execution.started_at),
      );
    });

    it('lists the trigger step first, then the definition steps in order', () => {
      expect(execution.steps.map((s) => s.id)).to.deep.equal(['trigger', 'route', 'crm']);
    });

    it("shows each step's name, kind, status, timings and attempts", () => {
      const route = stepOf(execution, 'route');
      expect(route).to.include({ name: 'Route', kind: 'rules', status: 'success', attempts: 1, error: null });
      expect(route.duration_ms).to.equal(Date.parse(route.finished_at!) - Date.parse(route.started_at!));
      expect(stepOf(execution, 'crm')).to.include({
        name: 'crm',
        kind: 'connector',
        status: 'success',
        attempts: 1,
      });
    });

    it('shows the rules output as the step output', () => {
      expect(stepOf(execution, 'route').output).to.deep.equal({ tier: 'high' });
    });

    it('shows the resolved request as the connector input', () => {
      expect(stepOf(execution, 'crm').input).to.deep.include({
        method: 'POST',
        url: `${receiver.url}/customers`,
        body: { name: 'Ada', tier: 'high' },
      });
    });

    it('shows status, headers and parsed JSON body as the connector output', () => {
      const output = stepOf(execution, 'crm').output as {
        status: number;
        headers: Record<string, string>;
        body: unknown;
      };
      expect(output.status).to.equal(200);
      expect(output.headers['content-type']).to.equal('application/json');
      expect(output.body).to.deep.equal({ ok: true });
    });

    it('sent the resolved body to the connector destination', () => {
      const sent = receiver
        .requestsTo('/customers')
        .find((r) => (r.json as { name?: string })?.name === 'Ada');
      expect(sent?.json).to.deep.equal({ name: 'Ada', tier: 'high' });
      expect(sent?.headers['content-type']).to.equal('application/json');
    });
  });

  describe('a running execution', () => {
    it('shows status running and the running step with its attempt', async () => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      receiver.replyOnce({ status: 200, body: { done: true }, until: held });
      const workflowId = await createWorkflow(
        service.api(),
        definition([httpStep('slow', { url: `${receiver.url}/slow` })]),
      );
      const id = await trigger(service.api(), workflowId);
      try {
        const running = await waitForExecution(service.api(), id, (e) =>
          e.steps.some((s) => s.id === 'slow'),
        );
        expect(running.status).to.equal('running');
        expect(running.finished_at).to.equal(null);
        expect(running.duration_ms).to.be.at.least(0);
        const slow = stepOf(running, 'slow');
        expect(slow.status).to.equal('running');
        expect(slow.started_at).to.be.a('string');
        expect(slow.finished_at).to.equal(null);
        // The first attempt's record (its resolved request among it) lands when the attempt ends.
        expect(slow.input).to.equal(null);
      } finally {
        release();
      }
      const done = await waitForExecution(service.api(), id);
      expect(done.status).to.equal('success');
      expect(stepOf(done, 'slow').input).to.deep.include({ url: `${receiver.url}/slow` });
    });
  });

  describe('connector failures', () => {
    it('fails the execution after the last attempt, naming the step, a code and the message', async () => {
      receiver.replyOnce(
        { status: 500, body: 'boom' },
        { status: 500, body: 'boom' },
        { status: 500, body: 'boom' },
      );
      const execution = await run([
        httpStep('crm', { url: `${receiver.url}/fail500` }, { retry: FAST_RETRY }),
      ]);
      expect(execution.status).to.equal('failed');
      expect(execution.error).to.deep.include({ step: 'crm', code: 'http_error' });
      expect(execution.error!.message).to.include('answered 500');
      const crm = stepOf(execution, 'crm');
      expect(crm).to.include({ status: 'failed', attempts: 3 });
      expect(crm.error).to.deep.include({ code: 'http_error' });
      expect(receiver.requestsTo('/fail500')).to.have.length(3);
    });

    it('fails at once, without retrying, on a 4xx other than 429', async () => {
      receiver.replyOnce({ status: 404, body: { error: 'no such customer' } });
      const execution = await run([
        httpStep('crm', { url: `${receiver.url}/missing` }, { retry: FAST_RETRY }),
      ]);
      expect(execution.status).to.equal('failed');
      expect(stepOf(execution, 'crm')).to.include({ status: 'failed', attempts: 1 });
      expect(execution.error!.message).to.include('answered 404');
      expect(receiver.requestsTo('/missing')).to.have.length(1);
    });

    it('retries a 503 and succeeds on a later attempt', async () => {
      receiver.replyOnce({ status: 503 }, { status: 200, body: { ok: 'second' } });
      const execution = await run([httpStep('crm', { url: `${receiver.url}/flaky` }, { retry: FAST_RETRY })]);
      expect(execution.status).to.equal('success');
      expect(stepOf(execution, 'crm')).to.include({ status: 'success', attempts: 2 });
    });

    it('retries a 429 after its Retry-After', async () => {
      receiver.replyOnce({ status: 429, headers: { 'Retry-After': '1' } }, { status: 200, body: {} });
      const execution = await run([httpStep('crm', { url: `${receiver.url}/busy` }, { retry: FAST_RETRY })]);
      expect(execution.status).to.equal('success');
      const [first, second] = receiver.requestsTo('/busy');
      expect(second!.at - first!.at).to.be.at.least(900);
    });

    it('shows a failing step still being retried with its attempt and last error', async () => {
      receiver.replyOnce({ status: 500, body: 'first' });
      const retry = { max_attempts: 2, initial_interval: '3s', backoff: 1, max_interval: '3s' };
      const workflowId = await createWorkflow(
        service.api(),
        definition([httpStep('crm', { url: `${receiver.url}/later` }, { retry })]),
      );
      const id = await trigger(service.api(), workflowId);
      const retrying = await waitForExecution(service.api(), id, (e) =>
        e.steps.some((s) => s.id === 'crm' && s.error !== null),
      );
      const crm = stepOf(retrying, 'crm');
      expect(crm).to.include({ status: 'running' });
      expect(crm.attempts).to.be.at.least(1);
      expect(crm.error!.message).to.include('answered 500');
      expect(crm.next_attempt_at).to.be.a('string');
      expect((await waitForExecution(service.api(), id)).status).to.equal('success');
    });

    it('fails a step whose request URL is not valid', async () => {
      const execution = await run([httpStep('crm', { url: 'not a url' })]);
      expect(execution.status).to.equal('failed');
      expect(execution.error!.step).to.equal('crm');
    });
  });

  describe('rules', () => {
    it('uses the first matching rule', async () => {
      const execution = await run(
        [
          rulesStep('r', [
            { when: 'input.n > 1', output: 'big' },
            { when: 'true', output: 'any' },
          ]),
        ],
        { n: 5 },
      );
      expect(stepOf(execution, 'r').output).to.equal('big');
    });

    it('uses default when nothing matches', async () => {
      const execution = await run(
        [rulesStep('r', [{ when: 'input.n > 10', output: 'big' }], { default: 'small' })],
        { n: 5 },
      );
      expect(stepOf(execution, 'r').output).to.equal('small');
    });

    it('fails the execution with the message of a fail rule, code rule_failed', async () => {
      const execution = await run(
        [
          rulesStep('gate', [
            { when: "input.plan = 'banned'", action: 'fail', message: 'plan {{ input.plan }} not allowed' },
          ]),
          rulesStep('after', [{ when: 'true', output: 1 }]),
        ],
        { plan: 'banned' },
      );
      expect(execution.status).to.equal('failed');
      expect(execution.error).to.deep.equal({
        step: 'gate',
        path: ['gate'],
        code: 'rule_failed',
        message: 'plan banned not allowed',
      });
      expect(stepOf(execution, 'gate')).to.deep.include({
        status: 'failed',
        error: { code: 'rule_failed', message: 'plan banned not allowed' },
      });
      expect(execution.steps.map((s) => s.id)).to.deep.equal(['trigger', 'gate']);
    });

    it('ends the execution with success on a stop rule, later steps skipped', async () => {
      const execution = await run([
        rulesStep('gate', [{ when: 'true', action: 'stop', output: 'stopped' }]),
        httpStep('never', { url: `${receiver.url}/never` }),
      ]);
      expect(execution.status).to.equal('success');
      expect(stepOf(execution, 'gate').output).to.equal('stopped');
      expect(stepOf(execution, 'never')).to.include({ status: 'skipped', attempts: 0, started_at: null });
      expect(receiver.requestsTo('/never')).to.have.length(0);
    });

    it('fails with expression_error when an expression fails at run time', async () => {
      const execution = await run([rulesStep('r', [{ when: '$number("abc") > 1', output: 1 }])]);
      expect(execution.status).to.equal('failed');
      expect(execution.error).to.deep.include({ step: 'r', code: 'expression_error' });
    });
  });

  describe('if', () => {
    it('skips a step whose if is false and runs the next', async () => {
      const execution = await run(
        [
          rulesStep('a', [{ when: 'true', output: 1 }]),
          rulesStep('b', [{ when: 'true', output: 2 }], { if: 'input.flag' }),
          rulesStep('c', [{ when: 'true', output: '{{ steps.b.status }}' }]),
        ],
        { flag: false },
      );
      expect(execution.steps.map((s) => [s.id, s.status])).to.deep.equal([
        ['trigger', 'success'],
        ['a', 'success'],
        ['b', 'skipped'],
        ['c', 'success'],
      ]);
      expect(stepOf(execution, 'c').output).to.equal('skipped');
    });

    it('runs a step whose if is true', async () => {
      const execution = await run([rulesStep('b', [{ when: 'true', output: 2 }], { if: 'input.flag' })], {
        flag: true,
      });
      expect(stepOf(execution, 'b').status).to.equal('success');
    });
  });

  describe('reading', () => {
    it('answers 404 execution_not_found for an unknown id', async () => {
      expectError(
        await service.api().get('/v1/executions/ex_doesnotexist000000000000'),
        404,
        'execution_not_found',
      );
    });

    it('answers 404 for an id that is not an execution id', async () => {
      expectError(await service.api().get('/v1/executions/..%2F..%2Fetc'), 404, 'execution_not_found');
    });
  });

  describe('listing', () => {
    let workflowId: string;
    const ids: string[] = [];
    before(async function () {
      this.timeout(60_000);
      workflowId = await createWorkflow(
        service.api(),
        definition([
          rulesStep('gate', [{ when: 'input.bad', action: 'fail', message: 'bad' }], { default: 'ok' }),
        ]),
      );
      for (const bad of [false, true, false]) ids.push(await trigger(service.api(), workflowId, { bad }));
      for (const id of ids) await waitForExecution(service.api(), id);
      await waitFor(
        async () => {
          const res = await service.api().get(`/v1/executions?workflow=${workflowId}&limit=100`);
          return res.body.data.filter((e: { status: string }) => e.status !== 'running').length === 3;
        },
        { what: 'visibility to show the three finished executions' },
      );
    });

    it('filters by workflow', async () => {
      const res = await service.api().get(`/v1/executions?workflow=${workflowId}`).expect(200);
      expect(res.body.data.map((e: { execution_id: string }) => e.execution_id).sort()).to.deep.equal(
        [...ids].sort(),
      );
      for (const item of res.body.data) expect(item.workflow).to.equal(workflowId);
    });

    it('filters by status', async () => {
      const res = await service.api().get(`/v1/executions?workflow=${workflowId}&status=failed`).expect(200);
      expect(res.body.data.map((e: { execution_id: string }) => e.execution_id)).to.deep.equal([ids[1]]);
    });

    const listed = async (query: string): Promise<string[]> => {
      const res = await service
        .api()
        .get(`/v1/executions?workflow=${workflowId}&limit=100&${query}`)
        .expect(200);
      return res.body.data.map((e: { execution_id: string }) => e.execution_id);
    };

    it("filters by the failed execution's error code", async () => {
      expect(await listed('error_code=rule_failed')).to.deep.equal([ids[1]]);
      expect(await listed('error_code=step_failed')).to.deep.equal([]);
    });

    it('filters by start time: at or after started_after, before started_before', async () => {
      const res = await service.api().get(`/v1/executions/${ids[1]}`).expect(200);
      const middle = encodeURIComponent(res.body.started_at as string);
      expect((await listed(`started_after=${middle}`)).sort()).to.deep.equal([ids[1], ids[2]].sort());
      expect(await listed(`started_before=${middle}`)).to.deep.equal([ids[0]]);
      const later = encodeURIComponent(new Date(Date.now() + 60_000).toISOString());
      expect(await listed(`started_after=${later}`)).to.deep.equal([]);
    });

    it('rejects an error_code that is not a code and a start bound that is not an RFC 3339 time', async () => {
      const code = await service.api().get('/v1/executions?error_code=Not%20A%20Code');
      expectError(code, 400, 'invalid_request');
      const time = await service.api().get('/v1/executions?started_after=yesterday');
      expectError(time, 400, 'invalid_request');
    });

    it('shows each execution without steps, with the error of a failed one', async () => {
      const res = await service.api().get(`/v1/executions?workflow=${workflowId}&status=failed`).expect(200);
      const [item] = res.body.data;
      expect(item).not.to.have.property('steps');
      expect(item).to.include({ workflow_version: 1, status: 'failed' });
      expect(item.trigger).to.deep.equal({ type: 'api' });
      expect(item.error).to.deep.equal({ step: 'gate', path: ['gate'], code: 'rule_failed', message: 'bad' });
    });

    it('pages with limit and cursor, most recently finished first', async () => {
      const first = await service.api().get(`/v1/executions?workflow=${workflowId}&limit=2`).expect(200);
      expect(first.body.data).to.have.length(2);
      const second = await service
        .api()
        .get(`/v1/executions?workflow=${workflowId}&limit=2&cursor=${first.body.next_cursor}`)
        .expect(200);
      const all = [...first.body.data, ...second.body.data] as {
        execution_id: string;
        finished_at: string;
      }[];
      expect(all.map((e) => e.execution_id).sort()).to.deep.equal([...ids].sort());
      const finished = all.map((e) => Date.parse(e.finished_at));
      expect(finished).to.deep.equal([...finished].sort((a, b) => b - a));
    });

    it('rejects a cursor replayed with other filters', async () => {
      const first = await service.api().get(`/v1/executions?workflow=${workflowId}&limit=1`).expect(200);
      expectError(
        await service.api().get(`/v1/executions?status=failed&limit=1&cursor=${first.body.next_cursor}`),
        400,
        'invalid_request',
      );
    });

    it('rejects an invalid workflow filter', async () => {
      expectError(await service.api().get('/v1/executions?workflow=NOT%20A%20SLUG'), 400, 'invalid_request');
    });

    it('shows open executions with status running', async () => {
      let release!: () => void;
      receiver.replyOnce({ status: 200, until: new Promise<void>((resolve) => (release = resolve)) });
      const slowWorkflow = await createWorkflow(
        service.api(),
        definition([httpStep('slow', { url: `${receiver.url}/held` })]),
      );
      const id = await trigger(service.api(), slowWorkflow);
      try {
        const listed = await waitFor(
          async () => {
            const res = await service.api().get(`/v1/executions?workflow=${slowWorkflow}&status=running`);
            return res.body.data.find((e: { execution_id: string }) => e.execution_id === id);
          },
          { what: 'the running execution in the list' },
        );
        expect(listed).to.include({ status: 'running', finished_at: null });
      } finally {
        release();
      }
    });
  });
});
