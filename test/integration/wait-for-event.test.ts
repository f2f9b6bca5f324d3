/**
 * wait_for_event steps (docs/events.md#waiting-for-an-event): a run waits for the first event of a name,
 * received after the step began waiting, whose `match` holds over the step's context plus the event; the
 * output is the event; one event wakes many runs (listed in the event's `woke`); a timeout fails the run
 * or continues with null; a cancel ends the wait; bad definitions are refused with their path.
 */
import { expect } from 'chai';
import {
  createWorkflow,
  definition,
  expectError,
  rulesStep,
  stepOf,
  trigger,
  uniqueId,
  waitForExecution,
  type ExecutionBody,
  type StepSpec,
} from '../support/fixtures';
import { startTestService, type TestService } from '../support/stack';
import { sleep, waitFor } from '../support/wait';

describe('wait_for_event steps @integration', function () {
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

  async function send(name: string, data: Record<string, unknown>): Promise<string> {
    const res = await service.api().post('/v1/events', { name, data }).expect(202);
    return (res.body as { ids: string[] }).ids[0]!;
  }

  const waitingOn = (id: string) => (e: ExecutionBody) =>
    e.status === 'waiting' && e.steps.some((s) => s.id === id && s.waiting_for?.type === 'event');

  /** A fresh event name per test: events of one test never reach another's runs. */
  const eventName = () => `order.paid.${uniqueId()}`;

  const paymentWait = (name: string, extra: Record<string, unknown> = {}): StepSpec => ({
    id: 'payment',
    kind: 'wait_for_event',
    event: name,
    match: 'event.data.order_id = input.order_id',
    timeout: '1h',
    ...extra,
  });

  it('is woken by the first matching event, whose {id, name, data, received_at} is its output', async () => {
    const name = eventName();
    const id = await run(
      [
        paymentWait(name),
        rulesStep('after', [{ when: 'true', output: '{{ steps.payment.output.data.amount }}' }]),
      ],
      { order_id: 'o-1' },
    );
    await waitForExecution(service.api(), id, waitingOn('payment'));
    const eventId = await send(name, { order_id: 'o-1', amount: 42 });
    const done = await waitForExecution(service.api(), id);
    expect(done.status, JSON.stringify(done.error)).to.equal('success');
    const payment = stepOf(done, 'payment');
    expect(payment.status).to.equal('success');
    const output = payment.output as { id: string; name: string; data: unknown; received_at: string };
    expect(output).to.include({ id: eventId, name });
    expect(output.data).to.deep.equal({ order_id: 'o-1', amount: 42 });
    expect(Number.isNaN(Date.parse(output.received_at)), 'received_at is a time').to.equal(false);
    expect(stepOf(done, 'after').output).to.equal(42);
  });

  it('shows the step waiting for the event, with until its timeout, and lists the execution as waiting', async () => {
    const name = eventName();
    const id = await run([paymentWait(name)], { order_id: 'o-2' });
    const waiting = await waitForExecution(service.api(), id, waitingOn('payment'));
    const payment = stepOf(waiting, 'payment');
    expect(payment.status).to.equal('waiting');
    expect(payment.waiting_for).to.include({ type: 'event', event: name });
    expect(Date.parse(payment.waiting_for!.until) - Date.parse(payment.started_at!)).to.equal(3_600_000);
    expect(payment.input).to.deep.equal({
      event: name,
      match: 'event.data.order_id = input.order_id',
      timeout: '1h',
      on_timeout: 'fail',
    });
    const listed = await service.api().get(`/v1/executions?status=waiting&limit=100`).expect(200);
    expect(listed.body.data.map((e: { execution_id: string }) => e.execution_id)).to.include(id);
    await service.api().post(`/v1/executions/${id}/cancel`).expect(202);
  });

  it('keeps what its match reads of the run sealed at rest, not in clear', async () => {
    const name = eventName();
    const secretish = `card-${uniqueId()}`;
    const id = await run(
      [paymentWait(name, { match: 'event.data.order_id = input.order_id and input.card != ""' })],
      {
        order_id: 'o-sealed',
        card: secretish,
      },
    );
    await waitForExecution(service.api(), id, waitingOn('payment'));
    const [row] = await service.runtime.services.db.query<{ context: string }>(
      'select context from event_waiters where execution_id = $1',
      [id],
    );
    expect(row, 'the filed wait').to.not.equal(undefined);
    expect(row!.context).to.not.include(secretish);
    expect(row!.context).to.not.include('o-sealed');
    await send(name, { order_id: 'o-sealed' });
    expect((await waitForExecution(service.api(), id)).status).to.equal('success');
  });

  it('is not woken by an event its match refuses, nor by another name', async () => {
    const name = eventName();
    const id = await run([paymentWait(name)], { order_id: 'o-3' });
    await waitForExecution(service.api(), id, waitingOn('payment'));
    const other = await send(name, { order_id: 'o-999' });
    const otherName = await send(`${name}.other`, { order_id: 'o-3' });
    // Both are dispatched (the dispatcher marks them) and the run still waits.
    await waitFor(
      async () => {
        const rows = await service.runtime.services.db.query<{ n: number }>(
          'select count(*)::int as n from events where id = any($1) and dispatched_at is not null',
          [[other, otherName]],
        );
        return rows[0]!.n === 2;
      },
      { what: 'both events dispatched' },
    );
    const still = await service.api().get(`/v1/executions/${id}`).expect(200);
    expect(still.body.status).to.equal('waiting');
    const event = await service.api().get(`/v1/events/${other}`).expect(200);
    expect(event.body.woke).to.deep.equal([]);
    await send(name, { order_id: 'o-3' });
    const done = await waitForExecution(service.api(), id);
    expect(done.status).to.equal('success');
    expect((stepOf(done, 'payment').output as { data: unknown }).data).to.deep.equal({ order_id: 'o-3' });
  });

  it('does not take an event received before it began waiting', async () => {
    const name = eventName();
    await send(name, { order_id: 'o-4' });
    const id = await run([paymentWait(name, { timeout: '3s', on_timeout: 'continue' })], { order_id: 'o-4' });
    const done = await waitForExecution(service.api(), id);
    expect(done.status).to.equal('success');
    expect(stepOf(done, 'payment').output).to.equal(null);
  });

  it('one event wakes every execution waiting for it, and its read lists them in `woke`', async () => {
    const name = eventName();
    const workflowId = await createWorkflow(service.api(), definition([paymentWait(name)]));
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await trigger(service.api(), workflowId, { order_id: 'shared' }));
    for (const id of ids) await waitForExecution(service.api(), id, waitingOn('payment'));
    const eventId = await send(name, { order_id: 'shared' });
    for (const id of ids) expect((await waitForExecution(service.api(), id)).status).to.equal('success');
    const event = await service.api().get(`/v1/events/${eventId}`).expect(200);
    expect([...event.body.woke].sort()).to.deep.equal([...ids].sort());
  });

  it('without a match, any event of the name wakes it; a match without an equality is tried as a whole', async () => {
    const name = eventName();
    const any = await run([{ id: 'payment', kind: 'wait_for_event', event: name }]);
    const large = await run([paymentWait(name, { match: 'event.data.amount > input.min' })], { min: 100 });
    await waitForExecution(service.api(), any, waitingOn('payment'));
    await waitForExecution(service.api(), large, waitingOn('payment'));
    const small = await send(name, { amount: 5 });
    expect((await waitForExecution(service.api(), any)).status).to.equal('success');
    const smallRead = await service.api().get(`/v1/events/${small}`).expect(200);
    expect(smallRead.body.woke).to.deep.equal([any]);
    const big = await send(name, { amount: 500 });
    const done = await waitForExecution(service.api(), large);
    expect((stepOf(done, 'payment').output as { id: string }).id).to.equal(big);
  });

  it('fails the execution with event_timed_out when no event comes in time (on_timeout: fail)', async () => {
    const id = await run([paymentWait(eventName(), { timeout: '2s' })], { order_id: 'late' });
    const done = await waitForExecution(service.api(), id);
    expect(done.status).to.equal('failed');
    expect(done.error).to.include({ step: 'payment', code: 'event_timed_out' });
    const payment = stepOf(done, 'payment');
    expect(payment.status).to.equal('failed');
    expect(payment.error!.code).to.equal('event_timed_out');
    expect(payment.waiting_for).to.equal(undefined);
  });

  it('goes on with output null after its timeout with on_timeout: continue', async () => {
    const id = await run(
      [
        paymentWait(eventName(), { timeout: '2s', on_timeout: 'continue' }),
        rulesStep('after', [{ when: 'steps.payment.output = null', output: 'unpaid' }]),
      ],
      { order_id: 'late' },
    );
    const done = await waitForExecution(service.api(), id);
    expect(done.status, JSON.stringify(done.error)).to.equal('success');
    expect(stepOf(done, 'payment')).to.include({ status: 'success', output: null });
    expect(stepOf(done, 'after').output).to.equal('unpaid');
  });

  it('is canceled with its execution, and an event after that wakes nothing', async () => {
    const name = eventName();
    const id = await run([paymentWait(name)], { order_id: 'o-5' });
    await waitForExecution(service.api(), id, waitingOn('payment'));
    await service.api().post(`/v1/executions/${id}/cancel`).expect(202);
    const done = await waitForExecution(service.api(), id, undefined, 15_000);
    expect(done.status).to.equal('canceled');
    expect(stepOf(done, 'payment').status).to.equal('canceled');
    const eventId = await send(name, { order_id: 'o-5' });
    await waitFor(
      async () => {
        const rows = await service.runtime.services.db.query<{ dispatched: boolean }>(
          'select dispatched_at is not null as dispatched from events where id = $1',
          [eventId],
        );
        return rows[0]?.dispatched === true;
      },
      { what: 'the event dispatched' },
    );
    const event = await service.api().get(`/v1/events/${eventId}`).expect(200);
    expect(event.body.woke).to.deep.equal([]);
  });

  it('each item of a map waits for its own event', async () => {
    const name = eventName();
    const id = await run(
      [
        {
          id: 'orders',
          kind: 'map',
          items: 'input.orders',
          as: 'order',
          steps: [paymentWait(name, { match: 'event.data.order_id = order' })],
        },
      ],
      { orders: ['a', 'b'] },
    );
    await waitForExecution(service.api(), id, (e) => e.status === 'waiting');
    await sleep(500);
    await send(name, { order_id: 'b', n: 2 });
    await send(name, { order_id: 'a', n: 1 });
    const done = await waitForExecution(service.api(), id);
    expect(done.status, JSON.stringify(done.error)).to.equal('success');
    const outputs = stepOf(done, 'orders').output as { data: { n: number } }[];
    expect(outputs.map((o) => o.data.n)).to.deep.equal([1, 2]);
  });

  describe('bad definitions', () => {
    const save = (step: Record<string, unknown>) =>
      service.api().post('/v1/workflows', definition([{ id: 'w', kind: 'wait_for_event', ...step }]));

    it('refuses an event name outside the naming rule, at /steps/0/event', async () => {
      const res = await save({ event: 'has spaces' });
      expectError(res, 400, 'invalid_definition');
      expect(res.body.error.details[0].path).to.equal('/steps/0/event');
    });

    it('refuses a match that does not parse, at /steps/0/match', async () => {
      const res = await save({ event: 'order.paid', match: 'event.data.order_id = ' });
      expectError(res, 400, 'invalid_definition');
      expect(res.body.error.details[0].path).to.equal('/steps/0/match');
    });

    it('refuses a timeout over 365 days and an on_timeout other than fail or continue', async () => {
      const long = await save({ event: 'order.paid', timeout: '366d' });
      expectError(long, 400, 'invalid_definition');
      expect(long.body.error.details[0].path).to.equal('/steps/0/timeout');
      const policy = await save({ event: 'order.paid', on_timeout: 'retry' });
      expectError(policy, 400, 'invalid_definition');
      expect(policy.body.error.details[0].path).to.equal('/steps/0/on_timeout');
    });
  });
});
