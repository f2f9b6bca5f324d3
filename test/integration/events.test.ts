/**
 * Events (docs/events.md): POST /v1/events stores one event or a batch, as plain JSON or CloudEvents, before
 * its 202; ids are given or generated, in request order; an id sent again within 24 h is the same event.
 * Event triggers start one execution per matching event and workflow (however often the event is sent or
 * dispatched), filtered by their `if`, with data refused by the input_schema recorded on the event. Reads
 * list and show events, per workspace.
 */
import { expect } from 'chai';
import request from 'supertest';
import {
  createWorkflow,
  definition,
  expectError,
  rulesStep,
  stepOf,
  uniqueId,
  waitForExecution,
  type ExecutionBody,
} from '../support/fixtures';
import { DB_KINDS, startTestService, type ApiClient, type TestService } from '../support/stack';
import { sleep, waitFor } from '../support/wait';

interface EventBody {
  id: string;
  name: string;
  data: Record<string, unknown>;
  received_at: string;
  source?: string;
  subject?: string;
  started: string[];
  woke: string[];
  errors: { workflow: string; code: string; message: string }[];
}

const SIGNUP_SCHEMA = {
  type: 'object',
  required: ['email'],
  properties: { email: { type: 'string' }, plan: { type: 'string' } },
};

/** A workflow started by events named `name` (when `if` holds), echoing its input. */
function eventWorkflow(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return definition([rulesStep('echo', [{ when: 'true', output: '{{ input }}' }])], {
    trigger: { type: 'event', event: name },
    input_schema: SIGNUP_SCHEMA,
    ...extra,
  });
}

const CLOUDEVENT = 'application/cloudevents+json';
const CLOUDEVENT_BATCH = 'application/cloudevents-batch+json';

for (const db of DB_KINDS) {
  describe(`events (${db}) @integration`, function () {
    let service: TestService;
    let key: string;
    let api: ApiClient;

    const query = <T = Record<string, unknown>>(sql: string, params: unknown[] = []) =>
      service.runtime.services.db.query<T>(sql, params);

    const send = async (body: unknown): Promise<string[]> => {
      const res = await api.post('/v1/events', body);
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      expect(res.body.status).to.equal('accepted');
      return res.body.ids as string[];
    };

    const sendAs = (contentType: string, body: unknown) =>
      request(service.url)
        .post('/v1/events')
        .set('Authorization', `Bearer ${key}`)
        .set('Content-Type', contentType)
        .send(JSON.stringify(body));

    const readEvent = async (id: string): Promise<EventBody> => {
      const res = await api.get(`/v1/events/${encodeURIComponent(id)}`);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      return res.body as EventBody;
    };

    /** The event once the dispatcher has acted on it. */
    const dispatched = async (id: string): Promise<EventBody> => {
      await waitFor(
        async () =>
          (
            await query<{ done: boolean }>(
              'select dispatched_at is not null as done from events where id = $1',
              [id],
            )
          )[0]?.done,
        { what: `event ${id} to be dispatched` },
      );
      return readEvent(id);
    };

    /** The workflow's executions, once the list has shown `atLeast` and then settled a while. */
    const executionsOf = async (workflowId: string, atLeast: number): Promise<string[]> => {
      const list = async () =>
        (
          (await api.get(`/v1/executions?workflow=${workflowId}`).expect(200)).body.data as {
            execution_id: string;
          }[]
        ).map((e) => e.execution_id);
      await waitFor(async () => (await list()).length >= atLeast, {
        what: `${atLeast} executions of ${workflowId}`,
      });
      // Visibility lags: a second execution would show within this while too.
      await sleep(2000);
      return list();
    };

    before(async function () {
      this.timeout(120_000);
      service = await startTestService({ db });
      ({ key } = await service.newWorkspace(['write']));
      api = service.api(key);
    });
    after(async () => service?.stop());

    describe('sending', () => {
      it('stores one event before answering 202 with a generated evt_ id', async () => {
        const [id] = await send({ name: 'order.created', data: { order: 7 } });
        expect(id).to.match(/^evt_[A-Za-z0-9]{24}$/);
        const rows = await query('select name, data from events where id = $1', [id]);
        expect(rows, 'the row, committed by the time of the 202').to.deep.equal([
          { name: 'order.created', data: { order: 7 } },
        ]);
      });

      it('answers the ids of a batch in request order, given and generated', async () => {
        const ids = await send([
          { name: 'order.created', data: { n: 1 }, id: 'batch-a' },
          { name: 'order.created', data: { n: 2 } },
          { name: 'order.paid', data: { n: 3 }, id: 'batch-c' },
        ]);
        expect(ids).to.have.length(3);
        expect(ids[0]).to.equal('batch-a');
        expect(ids[1]).to.match(/^evt_/);
        expect(ids[2]).to.equal('batch-c');
        expect((await readEvent(ids[1]!)).data).to.deep.equal({ n: 2 });
        expect((await readEvent('batch-c')).name).to.equal('order.paid');
      });

      it('takes data as optional (an empty object) and keeps __proto__ keys as data', async () => {
        const [bare] = await send({ name: 'cache.flushed' });
        expect((await readEvent(bare!)).data).to.deep.equal({});
        const [proto] = await send(JSON.parse('{"name": "odd.keys", "data": {"__proto__": {"x": 1}}}'));
        expect(JSON.stringify((await readEvent(proto!)).data)).to.equal('{"__proto__":{"x":1}}');
      });

      it('accepts an id sent again within 24 h with the same id, and keeps the first event', async () => {
        const id = uniqueId('again');
        expect(await send({ name: 'order.created', data: { v: 1 }, id })).to.deep.equal([id]);
        expect(await send({ name: 'order.created', data: { v: 2 }, id })).to.deep.equal([id]);
        expect((await readEvent(id)).data).to.deep.equal({ v: 1 });
        expect(await query('select 1 from events where id = $1', [id])).to.have.length(1);
      });

      it('answers every id of a batch holding one id twice, and keeps the first of them', async () => {
        const [twice, other] = [uniqueId('twice'), uniqueId('other')];
        const ids = await send([
          { name: 'order.created', data: { v: 1 }, id: twice },
          { name: 'order.created', data: { v: 2 }, id: other },
          { name: 'order.paid', data: { v: 3 }, id: twice },
        ]);
        expect(ids).to.deep.equal([twice, other, twice]);
        const event = await readEvent(twice);
        expect([event.name, event.data]).to.deep.equal(['order.created', { v: 1 }]);
        expect(await query('select 1 from events where id = $1', [twice])).to.have.length(1);
      });

      it('takes an id last sent more than 24 h ago as a new event', async () => {
        const id = uniqueId('old');
        await send({ name: 'order.created', data: { v: 1 }, id });
        await query(`update events set received_at = now() - interval '25 hours' where id = $1`, [id]);
        await send({ name: 'order.created', data: { v: 2 }, id });
        const event = await readEvent(id);
        expect(event.data).to.deep.equal({ v: 2 });
        expect(Date.now() - Date.parse(event.received_at)).to.be.below(60_000);
      });
    });

    describe('CloudEvents', () => {
      const cloudEvent = (extra: Record<string, unknown> = {}) => ({
        specversion: '1.0',
        type: 'user.signup',
        source: 'https://accounts.example.com',
        id: uniqueId('ce'),
        subject: 'u_1842',
        datacontenttype: 'application/json',
        data: { email: 'ada@example.com' },
        ...extra,
      });

      it('takes one event: type is the name, id the id, data the data; source and subject are shown', async () => {
        const event = cloudEvent({ comexampleextension: 'ignored' });
        const res = await sendAs(CLOUDEVENT, event);
        expect(res.status, JSON.stringify(res.body)).to.equal(202);
        expect(res.body.ids).to.deep.equal([event.id]);
        const read = await readEvent(event.id);
        expect(read).to.include({
          id: event.id,
          name: 'user.signup',
          source: event.source,
          subject: 'u_1842',
        });
        expect(read.data).to.deep.equal(event.data);
      });

      it('takes a batch in order', async () => {
        const events = [cloudEvent(), cloudEvent({ subject: undefined, type: 'user.deleted' })];
        const res = await sendAs(CLOUDEVENT_BATCH, events);
        expect(res.status, JSON.stringify(res.body)).to.equal(202);
        expect(res.body.ids).to.deep.equal(events.map((e) => e.id));
        const second = await readEvent(events[1]!.id);
        expect(second.name).to.equal('user.deleted');
        expect(second).not.to.have.property('subject');
      });

      it('refuses a specversion other than 1.0', async () => {
        const res = await sendAs(CLOUDEVENT, cloudEvent({ specversion: '0.3' }));
        expectError(res, 400, 'invalid_request');
        expect(res.body.error.details).to.deep.include({ path: '/specversion', message: 'must be "1.0"' });
      });

      it('refuses an array sent as one event, and one event sent as a batch', async () => {
        expectError(await sendAs(CLOUDEVENT, [cloudEvent()]), 400, 'invalid_request');
        expectError(await sendAs(CLOUDEVENT_BATCH, cloudEvent()), 400, 'invalid_request');
      });

      it('points a CloudEvent sent as application/json to its content type', async () => {
        const res = await sendAs('application/json', cloudEvent());
        expectError(res, 400, 'invalid_request');
        expect(res.body.error.message).to.include(`Send CloudEvents as ${CLOUDEVENT}`);
      });

      it('refuses binary data (data_base64) and events without a source', async () => {
        const binary = await sendAs(CLOUDEVENT, cloudEvent({ data: undefined, data_base64: 'AAEC' }));
        expectError(binary, 400, 'invalid_request');
        expect(binary.body.error.details[0].path).to.equal('/data_base64');
        const sourceless = await sendAs(CLOUDEVENT_BATCH, [cloudEvent(), cloudEvent({ source: undefined })]);
        expectError(sourceless, 400, 'invalid_request');
        expect(sourceless.body.error.details[0].path).to.equal('/1/source');
      });
    });

    describe('bad input', () => {
      const refused = async (body: unknown, path: string, message?: RegExp) => {
        const res = await api.post('/v1/events', body);
        expectError(res, 400, 'invalid_request');
        const details = res.body.error.details as { path: string; message: string }[];
        const detail = details.find((d) => d.path === path);
        expect(detail, `a detail at ${path} in ${JSON.stringify(details)}`).to.not.equal(undefined);
        if (message) expect(detail!.message).to.match(message);
        return res;
      };

      it('refuses a malformed name', async () => {
        await refused({ name: '.starts-with-a-dot', data: {} }, '/name', /letter or digit/);
        await refused({ name: 'has space', data: {} }, '/name');
        await refused({ name: 'x'.repeat(129), data: {} }, '/name');
      });

      it('refuses data over 256 KiB, alone or in a batch, naming the event', async () => {
        const big = { blob: 'x'.repeat(256 * 1024) };
        await refused({ name: 'big.one', data: big }, '/data', /at most 262144/);
        await refused([{ name: 'ok.one' }, { name: 'big.one', data: big }], '/1/data', /bytes as JSON/);
      });

      it('refuses more than 100 events in a batch', async () => {
        const res = await refused(
          Array.from({ length: 101 }, () => ({ name: 'many.events' })),
          '',
          /at most 100/,
        );
        expect(res.body.error.message).to.include('101');
      });

      it('refuses data that is not an object', async () => {
        await refused({ name: 'x.y', data: [1, 2] }, '/data', /JSON object/);
        await refused({ name: 'x.y', data: 'text' }, '/data', /JSON object/);
        await refused([{ name: 'x.y' }, { name: 'x.y', data: null }], '/1/data', /JSON object/);
      });

      it('refuses an empty batch, a body that is not an event, unknown fields and malformed ids', async () => {
        await refused([], '');
        expectError(await sendAs('application/json', 'just text'), 400, 'invalid_request');
        await refused({ name: 'x.y', colour: 'red' }, '');
        await refused({ name: 'x.y', id: 'has/slash' }, '/id');
      });

      it('stores nothing of a batch with one bad event', async () => {
        const id = uniqueId('partial');
        await refused([{ name: 'ok.event', id }, { name: 'bad name' }], '/1/name');
        await api.get(`/v1/events/${id}`).expect(404);
      });
    });

    describe('event triggers', () => {
      it('start one execution per matching event, with the data as input and the event in its trigger step', async () => {
        const name = `user.signup.${uniqueId('n')}`;
        const workflowId = await createWorkflow(api, eventWorkflow(name));
        const [id] = await send({ name, data: { email: 'ada@example.com', plan: 'pro' } });
        const event = await dispatched(id!);
        expect(event.started, JSON.stringify(event)).to.have.length(1);
        expect(event.errors).to.deep.equal([]);
        const execution: ExecutionBody = await waitForExecution(api, event.started[0]!);
        expect(execution).to.include({ status: 'success', workflow: workflowId });
        expect(execution.trigger.type).to.equal('event');
        const trigger = stepOf(execution, 'trigger') as unknown as { output: unknown; event: unknown };
        expect(trigger.event).to.deep.equal({ id, name });
        expect(trigger.output).to.deep.equal({ email: 'ada@example.com', plan: 'pro' });
      });

      it('start nothing for an event that matches no trigger, which is stored and listed all the same', async () => {
        const name = `nobody.listens.${uniqueId('n')}`;
        const [id] = await send({ name, data: { a: 1 } });
        const event = await dispatched(id!);
        expect(event.started).to.deep.equal([]);
        const listed = await api.get(`/v1/events?name=${name}`).expect(200);
        expect((listed.body.data as EventBody[]).map((e) => e.id)).to.deep.equal([id]);
      });

      it('start one execution when the same event id is sent twice', async () => {
        const name = `user.signup.${uniqueId('n')}`;
        const workflowId = await createWorkflow(api, eventWorkflow(name));
        const id = uniqueId('twice');
        await send({ name, data: { email: 'a@example.com' }, id });
        await dispatched(id);
        await send({ name, data: { email: 'a@example.com' }, id });
        await send([{ name, data: { email: 'a@example.com' }, id }]);
        const event = await dispatched(id);
        expect(event.started).to.have.length(1);
        expect(await executionsOf(workflowId, 1)).to.deep.equal(event.started);
      });

      it('start one execution when an event is dispatched twice', async () => {
        const name = `user.signup.${uniqueId('n')}`;
        const workflowId = await createWorkflow(api, eventWorkflow(name));
        const [id] = await send({ name, data: { email: 'b@example.com' } });
        const first = await dispatched(id!);
        // As after a crash between acting on the event and marking it: the outbox hands it out again.
        await query('delete from event_triggers where event_id = $1', [id]);
        await query('update events set dispatched_at = null, lease_until = null where id = $1', [id]);
        service.runtime.services.eventDispatch!.kick();
        const again = await dispatched(id!);
        expect(again.started).to.deep.equal(first.started);
        expect(await executionsOf(workflowId, 1)).to.deep.equal(first.started);
      });

      it("start only where the trigger's if holds over {id, name, data}", async () => {
        const name = `user.signup.${uniqueId('n')}`;
        await createWorkflow(
          api,
          eventWorkflow(name, {
            trigger: { type: 'event', event: name, if: "data.plan = 'pro' and $contains(id, 'keep')" },
          }),
        );
        const [pro, free, otherId] = await send([
          { name, data: { email: 'p@example.com', plan: 'pro' }, id: uniqueId('keep') },
          { name, data: { email: 'f@example.com', plan: 'free' }, id: uniqueId('keep') },
          { name, data: { email: 'o@example.com', plan: 'pro' }, id: uniqueId('drop') },
        ]);
        expect((await dispatched(pro!)).started).to.have.length(1);
        expect((await dispatched(free!)).started).to.deep.equal([]);
        expect((await dispatched(otherId!)).started).to.deep.equal([]);
      });

      it('start every workflow whose trigger matches, each once', async () => {
        const name = `user.signup.${uniqueId('n')}`;
        const first = await createWorkflow(api, eventWorkflow(name));
        const second = await createWorkflow(api, eventWorkflow(name));
        const [id] = await send({ name, data: { email: 'c@example.com' } });
        const event = await dispatched(id!);
        expect(event.started).to.have.length(2);
        const workflows = await Promise.all(
          event.started.map(async (e) => (await waitForExecution(api, e)).workflow),
        );
        expect(workflows.sort()).to.deep.equal([first, second].sort());
      });

      it('record data the input_schema refuses on the event and start nothing', async () => {
        const name = `user.signup.${uniqueId('n')}`;
        const workflowId = await createWorkflow(api, eventWorkflow(name));
        const [id] = await send({ name, data: { plan: 'pro' } });
        const event = await dispatched(id!);
        expect(event.started).to.deep.equal([]);
        expect(event.errors).to.have.length(1);
        expect(event.errors[0]).to.include({ workflow: workflowId, code: 'invalid_input' });
        expect(event.errors[0]!.message).to.include('email');
        const listed = await api.get(`/v1/executions?workflow=${workflowId}`).expect(200);
        expect(listed.body.data).to.deep.equal([]);
      });

      it('act again on an id last sent more than 24 h ago: its refusals go, the new data starts a run', async () => {
        const name = `user.signup.${uniqueId('n')}`;
        await createWorkflow(api, eventWorkflow(name));
        const id = uniqueId('resent');
        await send({ name, data: { plan: 'pro' }, id });
        expect((await dispatched(id)).errors, 'the first data refused').to.have.length(1);
        await query(`update events set received_at = now() - interval '25 hours' where id = $1`, [id]);
        await send({ name, data: { email: 'r@example.com' }, id });
        const again = await dispatched(id);
        expect(again.errors).to.deep.equal([]);
        expect(again.started).to.have.length(1);
      });

      it('follow the latest version: a version without the event trigger starts nothing', async () => {
        const name = `user.signup.${uniqueId('n')}`;
        const body = eventWorkflow(name);
        const workflowId = await createWorkflow(api, body);
        await api.put(`/v1/workflows/${workflowId}`, { ...body, trigger: { type: 'api' } }).expect(200);
        const [id] = await send({ name, data: { email: 'd@example.com' } });
        expect((await dispatched(id!)).started).to.deep.equal([]);
      });
    });

    describe('definitions', () => {
      it('refuse an event trigger whose if does not parse, naming /trigger/if', async () => {
        const res = await api.post(
          '/v1/workflows',
          eventWorkflow('user.signup', {
            trigger: { type: 'event', event: 'user.signup', if: "data.plan = 'pro" },
          }),
        );
        expectError(res, 400, 'invalid_definition');
        expect(res.body.error.details[0].path).to.equal('/trigger/if');
        expect(res.body.error.details[0].message).to.match(/^expression does not parse/);
      });

      it('refuse a malformed event name and list the trigger type as event', async () => {
        const bad = await api.post('/v1/workflows', eventWorkflow('no spaces allowed'));
        expectError(bad, 400, 'invalid_definition');
        expect(bad.body.error.details[0].path).to.equal('/trigger/event');
        const workflowId = await createWorkflow(api, eventWorkflow('listed.trigger'));
        const listed = await api.get('/v1/workflows?limit=100').expect(200);
        const item = (listed.body.data as { id: string; trigger: { type: string } }[]).find(
          (w) => w.id === workflowId,
        );
        expect(item?.trigger).to.deep.equal({ type: 'event' });
      });
    });

    describe('reads', () => {
      it('list events newest first, page by cursor, and filter by name', async () => {
        const name = `paged.${uniqueId('n')}`;
        const ids = await send([{ name }, { name }, { name }]);
        await send({ name: `${name}.other` });
        const first = await api.get(`/v1/events?name=${name}&limit=2`).expect(200);
        expect((first.body.data as EventBody[]).map((e) => e.id)).to.deep.equal([ids[2], ids[1]]);
        expect(first.body.next_cursor).to.be.a('string');
        const second = await api
          .get(`/v1/events?name=${name}&limit=2&cursor=${first.body.next_cursor}`)
          .expect(200);
        expect((second.body.data as EventBody[]).map((e) => e.id)).to.deep.equal([ids[0]]);
        expect(second.body.next_cursor).to.equal(null);
        const all = await api.get('/v1/events?limit=100').expect(200);
        expect((all.body.data as EventBody[]).map((e) => e.name)).to.include(`${name}.other`);
      });

      it('refuse a cursor of another filter and a malformed name filter', async () => {
        const name = `paged.${uniqueId('n')}`;
        await send([{ name }, { name }]);
        const page = await api.get(`/v1/events?name=${name}&limit=1`).expect(200);
        expectError(
          await api.get(`/v1/events?limit=1&cursor=${page.body.next_cursor}`),
          400,
          'invalid_request',
        );
        expectError(await api.get('/v1/events?name=not%20a%20name'), 400, 'invalid_request');
      });

      it('answer 404 event_not_found for an unknown id', async () => {
        expectError(await api.get('/v1/events/evt_doesnotexist'), 404, 'event_not_found');
      });

      it("keep workspaces apart: another workspace's event is 404 and not listed", async () => {
        const [id] = await send({ name: 'private.thing', data: { secret: true } });
        const other = service.api((await service.newWorkspace(['read'])).key);
        expectError(await other.get(`/v1/events/${id}`), 404, 'event_not_found');
        const listed = await other.get('/v1/events').expect(200);
        expect(listed.body.data).to.deep.equal([]);
      });

      it('need the write scope to send and the read scope to read', async () => {
        const { workspaceId } = await service.newWorkspace(['read']);
        const reader = service.api(await service.newKey(workspaceId, ['read']));
        expectError(await reader.post('/v1/events', { name: 'x.y' }), 403, 'forbidden');
        await reader.get('/v1/events').expect(200);
      });
    });
  });
}
