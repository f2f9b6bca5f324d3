/** Connector details (docs/definitions.md#connector): destinations, redirects, size cap, query strings. */
import { expect } from 'chai';
import {
  createWorkflow,
  definition,
  FAST_RETRY,
  httpStep,
  stepOf,
  trigger,
  waitForExecution,
  type ExecutionBody,
} from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { startTestService, type TestService } from '../support/stack';

describe('connector steps @integration', function () {
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

  async function run(request: Record<string, unknown>, input: unknown = {}): Promise<ExecutionBody> {
    const workflowId = await createWorkflow(
      service.api(),
      definition([httpStep('call', request, { retry: FAST_RETRY })]),
    );
    return waitForExecution(service.api(), await trigger(service.api(), workflowId, input));
  }

  it('does not follow a redirect by default: the 3xx is the output', async () => {
    receiver.replyOnceTo('/moved', { status: 302, headers: { location: '/target' } });
    const execution = await run({ url: `${receiver.url}/moved` });
    expect(execution.status).to.equal('success');
    expect(stepOf(execution, 'call').output).to.deep.include({ status: 302 });
    expect(receiver.requestsTo('/target')).to.have.length(0);
  });

  it('follows redirects with follow_redirects: true', async () => {
    receiver.replyOnceTo('/moved-2', { status: 301, headers: { location: '/target-2' } });
    receiver.replyOnceTo('/target-2', { status: 200, body: { arrived: true } });
    const execution = await run({ url: `${receiver.url}/moved-2`, follow_redirects: true });
    expect((stepOf(execution, 'call').output as { body: unknown }).body).to.deep.equal({ arrived: true });
  });

  it('fails with response_too_large when the body passes the cap, without retrying', async () => {
    receiver.replyOnceTo('/huge', { status: 200, body: 'x'.repeat(1024 * 1024 + 10) });
    const execution = await run({ url: `${receiver.url}/huge` });
    expect(execution.error).to.include({ step: 'call', code: 'response_too_large' });
    expect(stepOf(execution, 'call').attempts).to.equal(1);
  });

  it('sends templated query parameters and headers', async () => {
    await run(
      {
        url: `${receiver.url}/search`,
        query: { q: '{{ input.q }}', page: 2 },
        headers: { 'X-Customer': '{{ input.q }}' },
      },
      { q: 'a b' },
    );
    const [request] = receiver.requests.filter((r) => r.path.startsWith('/search'));
    expect(request!.path).to.equal('/search?q=a+b&page=2');
    expect(request!.headers['x-customer']).to.equal('a b');
  });

  it('returns a text body as text', async () => {
    receiver.replyOnceTo('/text', {
      status: 200,
      body: 'plain words',
      headers: { 'content-type': 'text/plain' },
    });
    expect(
      (stepOf(await run({ url: `${receiver.url}/text` }), 'call').output as { body: unknown }).body,
    ).to.equal('plain words');
  });

  describe('with private destinations not allowed (the default)', () => {
    let strict: TestService;
    before(async function () {
      this.timeout(120_000);
      strict = await startTestService({ env: { ALLOW_PRIVATE_DESTINATIONS: 'false' } });
    });
    after(async () => strict?.stop());

    async function runStrict(url: string): Promise<ExecutionBody> {
      const workflowId = await createWorkflow(
        strict.api(),
        definition([httpStep('call', { url }, { retry: FAST_RETRY })]),
      );
      return waitForExecution(strict.api(), await trigger(strict.api(), workflowId));
    }

    it('refuses plain http', async () => {
      const execution = await runStrict('http://example.com/');
      expect(execution.error).to.include({ step: 'call', code: 'destination_not_allowed' });
    });

    it('refuses a loopback address, and retries nothing', async () => {
      const before = receiver.requests.length;
      const execution = await runStrict(`https://127.0.0.1:${new URL(receiver.url).port}/x`);
      expect(execution.error).to.include({ step: 'call', code: 'destination_not_allowed' });
      expect(stepOf(execution, 'call').attempts).to.equal(1);
      expect(receiver.requests.length).to.equal(before);
    });

    it('refuses a host name that resolves to loopback', async () => {
      const execution = await runStrict('https://localhost/x');
      expect(execution.error).to.include({ step: 'call', code: 'destination_not_allowed' });
    });

    it('refuses the cloud metadata address', async () => {
      const execution = await runStrict('https://169.254.169.254/latest/meta-data/');
      expect(execution.error).to.include({ step: 'call', code: 'destination_not_allowed' });
    });
  });
});
