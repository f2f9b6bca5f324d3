/**
 * Encrypted step data (docs/operations.md#encrypted-step-data): with PAYLOAD_ENCRYPTION_KEYS set, a run's
 * history as the `temporal` CLI shows it holds none of its data in clear text while the API shows it
 * decoded; the codec endpoint decodes for operators only (admin keys of `default`, or the console's cookie
 * from Temporal UI's origin) and answers CORS for Temporal UI's origin alone; a run written under an old
 * key still reads and retries after a new key became current, and its retry is written with the new key;
 * the worker replays an encrypted history.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { Worker } from '@temporalio/worker';
import { expect } from 'chai';
import { workflowBundlePath } from '../../platform/paths';
import { dataConverterOf, payloadCodecsOf } from '../../platform/temporal/encryption-codec';
import {
  createWorkflow,
  definition,
  FAST_RETRY,
  httpStep,
  rulesStep,
  stepOf,
  trigger,
  waitForExecution,
} from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { apiClient, sharedTemporal, startTestService, type TestService } from '../support/stack';

const run = promisify(execFile);
const keyA = `a:${randomBytes(32).toString('base64')}`;
const keyB = `b:${randomBytes(32).toString('base64')}`;
const b64 = (text: string) => Buffer.from(text).toString('base64');

interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

/** The run's history as `temporal workflow show --output json` prints it. */
async function cliHistory(executionId: string, runId?: string): Promise<string> {
  const { cliPath, address } = await sharedTemporal();
  const args = ['workflow', 'show', '--address', address, '--workflow-id', executionId, '--output', 'json'];
  if (runId) args.push('--run-id', runId);
  const { stdout } = await run(cliPath, args, { maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

/** Every string in a JSON document, and each one base64-decoded too: where a name could hide. */
function readableTexts(json: string): string[] {
  const texts: string[] = [];
  const walk = (value: unknown): void => {
    if (typeof value === 'string') texts.push(value, Buffer.from(value, 'base64').toString('latin1'));
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object') Object.values(value).forEach(walk);
  };
  walk(JSON.parse(json));
  return texts;
}

/** The payloads of the CLI's JSON history that carry this metadata key. */
function payloadsIn(json: string): JsonPayload[] {
  const found: JsonPayload[] = [];
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object') {
      const object = value as Record<string, unknown>;
      if (object['metadata'] && typeof object['metadata'] === 'object' && 'encoding' in object['metadata'])
        found.push(object);
      Object.values(object).forEach(walk);
    }
  };
  walk(JSON.parse(json));
  return found;
}

const keyIdsOf = (json: string) =>
  new Set(
    payloadsIn(json)
      .map((payload) => payload.metadata?.['encryption-key-id'])
      .filter((id): id is string => id !== undefined)
      .map((id) => Buffer.from(id, 'base64').toString()),
  );

describe('encrypted step data @integration', function () {
  this.timeout(180_000);
  let service: TestService;
  let receiver: Receiver;
  let uiOrigin: string;
  const customer = `Zebulon-${randomBytes(6).toString('hex')}`;
  let executionId: string;

  before(async () => {
    const { devServer } = await sharedTemporal();
    uiOrigin = new URL(devServer.uiUrl!).origin;
    service = await startTestService({
      db: 'postgres',
      env: { PAYLOAD_ENCRYPTION_KEYS: keyA, TEMPORAL_UI_URL: devServer.uiUrl! },
    });
    receiver = await Receiver.start();
    executionId = await trigger(service.api(), 'customer-onboarding', { customer, plan: 'pro' });
    expect((await waitForExecution(service.api(), executionId)).status).to.equal('success');
  });
  after(async () => {
    await receiver?.stop();
    await service?.stop();
  });

  it('keeps step data out of the history in clear text while the API shows it', async () => {
    const history = await cliHistory(executionId);
    expect(history).to.contain(b64('binary/encrypted'));
    expect(readableTexts(history).some((text) => text.includes(customer))).to.equal(false);
    expect([...keyIdsOf(history)]).to.deep.equal(['a']);

    const execution = await waitForExecution(service.api(), executionId);
    expect(execution.steps[0]!.input).to.deep.include({ customer });
    expect(JSON.stringify(execution.steps.slice(1).map((step) => [step.input, step.output]))).to.contain(
      customer,
    );
    // Every test service writes runs of its `default` workspace to the shared dev server, and open runs
    // list first: look through the finished ones of this workflow, page by page.
    const listed: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `/v1/executions?workflow=customer-onboarding&status=success&limit=100${cursor ? `&cursor=${cursor}` : ''}`;
      const page = await service.api().get(query).expect(200);
      listed.push(...(page.body.data as { execution_id: string }[]).map((e) => e.execution_id));
      cursor = page.body.next_cursor as string | null;
    } while (cursor && !listed.includes(executionId) && listed.length < 2_000);
    expect(listed, 'the run in the list of executions').to.include(executionId);
  });

  it('decodes through the codec endpoint for an operator key, and refuses everyone else', async () => {
    const history = await cliHistory(executionId);
    const encrypted = payloadsIn(history).filter(
      (payload) => payload.metadata?.['encoding'] === b64('binary/encrypted'),
    );
    expect(encrypted.length).to.be.greaterThan(3);
    const body = { payloads: encrypted };
    const decoded = await service.api().post('/codec/decode', body).set('X-Namespace', 'default').expect(200);
    const texts = (decoded.body.payloads as JsonPayload[]).map((p) =>
      Buffer.from(p.data!, 'base64').toString(),
    );
    expect(texts.some((text) => text.includes(customer))).to.equal(true);
    expect(
      (decoded.body.payloads as JsonPayload[]).every(
        (p) => p.metadata?.['encoding'] !== b64('binary/encrypted'),
      ),
    ).to.equal(true);

    // encode, then decode, gives the payload back
    const plain = { metadata: { encoding: b64('json/plain') }, data: b64('"hello"') };
    const encoded = await service
      .api()
      .post('/codec/encode', { payloads: [plain] })
      .expect(200);
    expect(encoded.body.payloads[0].metadata.encoding).to.equal(b64('binary/encrypted'));
    const back = await service.api().post('/codec/decode', encoded.body).expect(200);
    expect(back.body.payloads).to.deep.equal([plain]);

    // no key, a key of another workspace, a lower scope, another origin
    await apiClient(service.url).post('/codec/decode', body).expect(401);
    const other = await service.newWorkspace(['admin']);
    await service.api(other.key).post('/codec/decode', body).expect(403);
    const reader = await service.newKey('default', ['read']);
    await service.api(reader).post('/codec/decode', body).expect(403);
    await service.api().post('/codec/decode', body).set('Origin', 'https://evil.example').expect(403);
    // A key it does not hold (another service's key a): 400 with the key's id, nothing decoded.
    const forged = await service
      .api()
      .post('/codec/decode', {
        payloads: [
          { ...encrypted[0], metadata: { ...encrypted[0]!.metadata, 'encryption-key-id': b64('zz') } },
        ],
      })
      .expect(400);
    expect(forged.body.error.message).to.contain("'zz'");
  });

  it('answers CORS for Temporal UI only, and takes the console cookie from its origin without a CSRF token', async () => {
    const preflight = await fetch(`${service.url}/codec/decode`, {
      method: 'OPTIONS',
      headers: {
        Origin: uiOrigin,
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type,x-namespace',
      },
    });
    expect(preflight.status).to.equal(204);
    expect(preflight.headers.get('access-control-allow-origin')).to.equal(uiOrigin);
    expect(preflight.headers.get('access-control-allow-credentials')).to.equal('true');
    expect(preflight.headers.get('access-control-allow-headers')).to.match(/X-Namespace/i);
    expect(preflight.headers.get('access-control-allow-headers')).to.match(/Authorization/i);
    const evil = await fetch(`${service.url}/codec/decode`, {
      method: 'OPTIONS',
      headers: { Origin: 'http://127.0.0.1:1', 'Access-Control-Request-Method': 'POST' },
    });
    expect(evil.status).to.equal(403);
    expect(evil.headers.get('access-control-allow-origin')).to.equal(null);

    const signIn = await fetch(`${service.url}/console/session`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ api_key: service.adminKey }),
    });
    expect(signIn.status).to.equal(201);
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]!;
    const [first] = payloadsIn(await cliHistory(executionId)).filter(
      (payload) => payload.metadata?.['encoding'] === b64('binary/encrypted'),
    );
    const decode = (headers: Record<string, string>) =>
      fetch(`${service.url}/codec/decode`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', cookie, ...headers },
        body: JSON.stringify({ payloads: [first] }),
      });
    const fromUi = await decode({ Origin: uiOrigin });
    expect(fromUi.status).to.equal(200);
    expect(fromUi.headers.get('access-control-allow-origin')).to.equal(uiOrigin);
    expect((await decode({})).status).to.equal(401);
    expect((await decode({ Origin: 'https://evil.example' })).status).to.equal(403);
  });

  it('replays an encrypted history with the codec, as a new worker build would', async () => {
    const { client } = service.runtime.services.temporal;
    const history = await client.workflow.getHandle(executionId).fetchHistory();
    await Worker.runReplayHistory(
      {
        workflowBundle: { codePath: workflowBundlePath },
        dataConverter: dataConverterOf(payloadCodecsOf(service.config.payloadEncryptionKeys)),
      },
      history,
      executionId,
    );
  });

  it("keeps a receiver's error answer (failure messages) out of the history while the API shows it", async () => {
    const echo = { status: 500, body: { error: 'rejected', name: customer } };
    receiver.replyOnceTo('/echo', echo, echo);
    const workflowId = await createWorkflow(
      service.api(),
      definition([
        httpStep(
          'echo',
          { method: 'POST', url: `${receiver.url}/echo`, body: { name: '{{ input.customer }}' } },
          { retry: { ...FAST_RETRY, max_attempts: 2 } },
        ),
      ]),
    );
    const id = await trigger(service.api(), workflowId, { customer });
    const failed = await waitForExecution(service.api(), id);
    expect(failed.status).to.equal('failed');
    expect(stepOf(failed, 'echo').attempts).to.equal(2);
    // The first attempt's failure is in the step record, the second's in an ActivityTaskFailed event, the
    // run's in WorkflowExecutionFailed: the API reads each decoded.
    expect(failed.error?.message).to.contain(customer);
    expect(stepOf(failed, 'echo').error?.message).to.contain(customer);
    const history = await cliHistory(id);
    expect(history).to.match(/ACTIVITY_TASK_FAILED/i);
    expect(readableTexts(history).some((text) => text.includes(customer))).to.equal(false);
    const listed = await service.api().get(`/v1/executions?workflow=${workflowId}`).expect(200);
    expect(listed.body.data[0].error.message).to.contain(customer);
  });

  it('carries approval decisions (Update arguments and results) through the codec', async () => {
    const workflowId = await createWorkflow(
      service.api(),
      definition([
        { id: 'review', kind: 'approval', name: 'Review', message: 'Approve {{ input.customer }}?' },
        rulesStep('after', [{ when: 'true', output: '{{ steps.review.output.comment }}' }]),
      ]),
    );
    const id = await trigger(service.api(), workflowId, { customer });
    await waitForExecution(service.api(), id, (e) => e.status === 'waiting');
    const comment = `ok for ${customer}`;
    const approved = await service
      .api()
      .post(`/v1/executions/${id}/steps/review/approve`, { comment })
      .expect(200);
    expect(approved.body.output.comment).to.equal(comment);
    const done = await waitForExecution(service.api(), id);
    expect(done.status).to.equal('success');
    expect(stepOf(done, 'review').output).to.deep.include({ decision: 'approved', comment });
    expect(stepOf(done, 'after').output).to.equal(comment);
    const history = await cliHistory(id);
    expect(readableTexts(history).some((text) => text.includes(customer))).to.equal(false);
  });

  it("reads a sleep's end from its timer, whose summary (the step's key) is encrypted", async () => {
    const workflowId = await createWorkflow(
      service.api(),
      definition([{ id: 'nap_before_review', kind: 'sleep', duration: '1s' }]),
    );
    const id = await trigger(service.api(), workflowId, { customer });
    const done = await waitForExecution(service.api(), id);
    expect(done.status).to.equal('success');
    const nap = stepOf(done, 'nap_before_review');
    expect(nap.status).to.equal('success');
    expect(nap.output).to.have.property('slept_until');
    const events = (JSON.parse(await cliHistory(id)) as { events: Record<string, unknown>[] }).events;
    const timer = events.find((event) => event['timerStartedEventAttributes'])!;
    const summary = (timer['userMetadata'] as { summary: JsonPayload }).summary;
    expect(summary.metadata?.['encoding']).to.equal(b64('binary/encrypted'));
  });

  it('lists a failed run whose error it cannot decrypt, with a message that says so', async () => {
    receiver.replyOnceTo('/unreadable', { status: 500, body: 'down' });
    const workflowId = await createWorkflow(
      service.api(),
      definition([
        httpStep(
          'check',
          { method: 'POST', url: `${receiver.url}/unreadable`, body: { customer: '{{ input.customer }}' } },
          { retry: { ...FAST_RETRY, max_attempts: 1 } },
        ),
      ]),
    );
    const failedId = await trigger(service.api(), workflowId, { customer });
    expect((await waitForExecution(service.api(), failedId)).status).to.equal('failed');

    // A process of the same deployment that runs without keys: the run lists, its error unreadable.
    const plain = await startTestService({ databaseUrl: service.config.databaseUrl!, worker: false });
    try {
      const list = await plain.api().get(`/v1/executions?workflow=${workflowId}&status=failed`).expect(200);
      expect(list.body.data.map((e: { execution_id: string }) => e.execution_id)).to.deep.equal([failedId]);
      expect(list.body.data[0].error).to.deep.equal({
        step: null,
        code: 'failed',
        message: 'The execution failed; its error is encrypted with a key this service does not hold.',
      });
    } finally {
      await plain.stop();
    }
  });

  it('rotates keys: runs written with the old key read and retry after a new key is current', async () => {
    receiver.replyOnceTo('/check', { status: 500, body: 'down' });
    const workflowId = await createWorkflow(
      service.api(),
      definition([
        httpStep(
          'check',
          { method: 'POST', url: `${receiver.url}/check`, body: { customer: '{{ input.customer }}' } },
          { retry: { ...FAST_RETRY, max_attempts: 1 } },
        ),
        rulesStep('after', [{ when: 'true', output: '{{ input.customer }}' }]),
      ]),
    );
    const failedId = await trigger(service.api(), workflowId, { customer });
    expect((await waitForExecution(service.api(), failedId)).status).to.equal('failed');
    const failedRunId = (
      await service.runtime.services.temporal.client.workflow.getHandle(failedId).describe()
    ).runId;
    // Lists read a failed run's error from its memo, which is encrypted too.
    const failedList = await service
      .api()
      .get(`/v1/executions?workflow=${workflowId}&status=failed`)
      .expect(200);
    expect(failedList.body.data[0].error.step).to.equal('check');
    expect(readableTexts(await cliHistory(failedId)).some((text) => text.includes(customer))).to.equal(false);

    // The same database and Temporal, keys "b,a": b is current.
    const rotated = await startTestService({
      databaseUrl: service.config.databaseUrl!,
      env: { PAYLOAD_ENCRYPTION_KEYS: `${keyB},${keyA}` },
    });
    try {
      const old = await waitForExecution(rotated.api(), executionId);
      expect(old.steps[0]!.input).to.deep.include({ customer });
      await rotated.api().post(`/v1/executions/${failedId}/retry`).expect(202);
      const retried = await waitForExecution(rotated.api(), failedId);
      expect(retried.status).to.equal('success');
      expect(stepOf(retried, 'after').output).to.equal(customer);
      expect([...keyIdsOf(await cliHistory(failedId, failedRunId))]).to.deep.equal(['a']);
      const newRun = await cliHistory(failedId);
      expect([...keyIdsOf(newRun)]).to.deep.equal(['b']);
      expect(readableTexts(newRun).some((text) => text.includes(customer))).to.equal(false);

      // A process that lost key a can no longer read what a wrote, and says why.
      const bOnly = await startTestService({
        databaseUrl: service.config.databaseUrl!,
        worker: false,
        env: { PAYLOAD_ENCRYPTION_KEYS: keyB },
      });
      try {
        const res = await bOnly.api().get(`/v1/executions/${executionId}`);
        expect(res.status).to.equal(500);
      } finally {
        await bOnly.stop();
      }
    } finally {
      await rotated.stop();
    }
  });
});
