/**
 * User JSON is data (docs/operations.md#threat-model): `__proto__`, `constructor` and `prototype` in a
 * definition, an input, a template, a secret's destination or a third party's response are ordinary
 * keys, stored, shown and sent as given, and never reach the prototypes of the worker and API process
 * (which is this test process: test/support/prototype-watch.ts checks it after every test as well).
 */
import { expect } from 'chai';
import {
  createWorkflow,
  definition,
  httpStep,
  rulesStep,
  stepOf,
  trigger,
  waitForExecution,
  type ExecutionBody,
} from '../support/fixtures';
import { Receiver } from '../support/receiver';
import type { ApiClient, TestService } from '../support/stack';
import { sharedService } from './support';

/** JSON text → a value whose `__proto__` keys are own keys, as a client's body arrives. */
const json = (text: string): Record<string, unknown> => JSON.parse(text) as Record<string, unknown>;

/** JSON text with keys sorted at every level (stored definitions come back in jsonb's key order). */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
}

/** `actual` (JSON text or a value) holds the same keys and values as the JSON text `expected`. */
function expectSameJson(actual: unknown, expected: string): void {
  const value: unknown = typeof actual === 'string' ? JSON.parse(actual) : actual;
  expect(canonical(value)).to.equal(canonical(JSON.parse(expected)));
}

function expectPrototypesClean(): void {
  const probe = {} as Record<string, unknown>;
  expect(probe['polluted'], 'Object.prototype.polluted').to.equal(undefined);
  expect(probe['rowMode'], 'Object.prototype.rowMode').to.equal(undefined);
  expect(Object.keys(Object.prototype)).to.deep.equal([]);
}

describe('prototype pollution @security', function () {
  let service: TestService;
  let api: ApiClient;
  let receiver: Receiver;
  before(async function () {
    this.timeout(120_000);
    service = await sharedService();
    api = service.api((await service.newWorkspace(['admin'])).key);
    receiver = await Receiver.start();
  });
  after(async () => {
    await receiver?.stop();
  });
  afterEach(expectPrototypesClean);

  async function run(steps: unknown[], input: Record<string, unknown> = {}): Promise<ExecutionBody> {
    const workflowId = await createWorkflow(api, definition(steps as never));
    return waitForExecution(api, await trigger(api, workflowId, input));
  }

  it('a secrets template under a connector body key "__proto__" is sent as that key and sets nothing', async () => {
    await api.put('/v1/secrets/POLLUTE', { value: 'yes-polluted' }).expect(204);
    const execution = await run([
      httpStep('call', {
        method: 'POST',
        url: `${receiver.url}/proto-body`,
        body: json('{"__proto__": {"polluted": "{{ secrets.POLLUTE }}", "rowMode": "array"}, "kept": 1}'),
      }),
    ]);
    expect(execution.status, JSON.stringify(execution.error)).to.equal('success');
    const sent = receiver.requests.find((r) => r.path === '/proto-body');
    expect(sent, 'the connector called the receiver').to.not.equal(undefined);
    expectSameJson(sent!.body, '{"__proto__": {"polluted": "yes-polluted", "rowMode": "array"}, "kept": 1}');
    // The step's input shows the key as written (a secrets template stays a template there).
    const input = stepOf(execution, 'call').input as { body: Record<string, unknown> };
    expectSameJson(
      input.body,
      '{"__proto__": {"polluted": "{{ secrets.POLLUTE }}", "rowMode": "array"}, "kept": 1}',
    );
  });

  it('connector headers and query named "__proto__" are saved and shown as given', async () => {
    const body = definition([
      httpStep('call', {
        url: `${receiver.url}/proto-headers`,
        headers: json('{"__proto__": "header-value", "x-other": "1"}'),
        query: json('{"__proto__": "q", "constructor": "c"}'),
      }),
    ]);
    const workflowId = await createWorkflow(api, body);
    const saved = await api.get(`/v1/workflows/${workflowId}`).expect(200);
    const request = (saved.body.steps as { request: { headers: object; query: object } }[])[0]!.request;
    expectSameJson(request.headers, '{"__proto__":"header-value","x-other":"1"}');
    expectSameJson(request.query, '{"__proto__":"q","constructor":"c"}');
    const execution = await waitForExecution(api, await trigger(api, workflowId));
    expect(execution.status, JSON.stringify(execution.error)).to.equal('success');
    const sent = receiver.requests.find((r) => r.path.startsWith('/proto-headers'))!;
    const at = sent.rawHeaders.findIndex((name) => name === '__proto__');
    expect(sent.rawHeaders[at + 1], 'the header named __proto__').to.equal('header-value');
    expect(sent.path).to.equal('/proto-headers?__proto__=q&constructor=c');
  });

  it('a header record value under "__proto__" is validated like any other (400, not dropped)', async () => {
    const res = await api.post(
      '/v1/workflows',
      definition([httpStep('call', { url: `${receiver.url}/x`, headers: json('{"__proto__": 5}') })]),
    );
    expect(res.status, JSON.stringify(res.body)).to.equal(400);
    expect(res.body.error.code).to.equal('invalid_definition');
    expect(res.body.error.details).to.deep.include({
      path: '/steps/0/request/headers/__proto__',
      message: 'Invalid input: expected string, received number',
    });
  });

  it('input keys "__proto__" and "constructor" reach templates and the trigger step as given', async () => {
    const execution = await run(
      [
        httpStep('call', { method: 'POST', url: `${receiver.url}/proto-input`, body: '{{ input }}' }),
        rulesStep('read', [{ when: 'true', output: { seen: '{{ input.__proto__.polluted }}' } }]),
      ],
      json('{"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}}'),
    );
    expect(execution.status, JSON.stringify(execution.error)).to.equal('success');
    const expected = '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}';
    expectSameJson(stepOf(execution, 'trigger').output, expected);
    expectSameJson(receiver.requests.find((r) => r.path === '/proto-input')!.body, expected);
    expect(stepOf(execution, 'read').output).to.deep.equal({ seen: true });
  });

  it('a response holding "__proto__" is the step output as sent, readable by later steps', async () => {
    receiver.replyOnceTo('/proto-response', {
      status: 200,
      body: json('{"__proto__": {"polluted": "from-response", "isAdmin": true}, "ok": true}'),
    });
    const execution = await run([
      httpStep('call', { url: `${receiver.url}/proto-response` }),
      rulesStep('check', [
        { when: 'steps.call.output.body.__proto__.isAdmin = true', output: { admin: true } },
        { when: 'true', output: { admin: false } },
      ]),
      rulesStep('copy', [{ when: 'true', output: '{{ steps.call.output.body }}' }]),
    ]);
    expect(execution.status, JSON.stringify(execution.error)).to.equal('success');
    const sent = '{"__proto__":{"polluted":"from-response","isAdmin":true},"ok":true}';
    expectSameJson((stepOf(execution, 'call').output as { body: unknown }).body, sent);
    expect(stepOf(execution, 'check').output).to.deep.equal({ admin: true });
    expectSameJson(stepOf(execution, 'copy').output, sent);
  });

  it('an object built by an expression with a "__proto__" key keeps it as an entry', async () => {
    const execution = await run([
      rulesStep('build', [{ when: 'true', output: '{{ {"__proto__": {"polluted": 1}, "a": 2} }}' }]),
    ]);
    expect(execution.status, JSON.stringify(execution.error)).to.equal('success');
    expectSameJson(stepOf(execution, 'build').output, '{"__proto__":{"polluted":1},"a":2}');
  });

  it('a retry input with a "__proto__" key is kept for the retried steps', async () => {
    receiver.replyOnceTo('/proto-retry', { status: 400, body: { error: 'no' } });
    const workflowId = await createWorkflow(
      api,
      definition([
        httpStep('call', { method: 'POST', url: `${receiver.url}/proto-retry`, body: '{{ input }}' }),
      ]),
    );
    const failed = await waitForExecution(api, await trigger(api, workflowId, { first: true }));
    expect(failed.status).to.equal('failed');
    await api
      .post(`/v1/executions/${failed.execution_id}/retry`, json('{"input": {"__proto__": {"polluted": 2}}}'))
      .expect(202);
    const retried = await waitForExecution(api, failed.execution_id, (e) => e.status === 'success');
    expect(retried.status).to.equal('success');
    expectSameJson(
      receiver.requests.filter((r) => r.path === '/proto-retry').at(-1)!.body,
      '{"__proto__":{"polluted":2}}',
    );
  });
});
