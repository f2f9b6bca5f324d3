/**
 * AI steps (docs/definitions.md#ai), against a local provider that speaks the OpenAI chat-completions wire
 * format; and the AI token budget of a workspace (docs/operations.md#workspace-limits): every provider call
 * adds the tokens it used to the workspace's count for the UTC day; once the count reaches
 * `ai_tokens_per_day`, ai steps fail with `ai_budget_exceeded` without calling the provider.
 */
import { expect } from 'chai';
import { completion, FakeAiProvider } from '../../scripts/fake-ai-provider';
import { setLimitOverrides } from '../../platform/store/workspace-limits';
import {
  createWorkflow,
  definition,
  FAST_RETRY,
  stepOf,
  trigger,
  waitForExecution,
  type ExecutionBody,
} from '../support/fixtures';
import { startTestService, type ApiClient, type TestService } from '../support/stack';

describe('ai steps @integration', function () {
  let service: TestService;
  let provider: FakeAiProvider;
  before(async function () {
    this.timeout(120_000);
    provider = await FakeAiProvider.start();
    service = await startTestService({
      env: { AI_BASE_URL: provider.baseUrl, AI_API_KEY: 'test-provider-key', AI_MODEL: 'default-model' },
    });
  });
  after(async () => {
    await service?.stop();
    await provider?.stop();
  });

  async function runAi(
    step: Record<string, unknown>,
    input: unknown = { name: 'Ada' },
  ): Promise<ExecutionBody> {
    const workflowId = await createWorkflow(
      service.api(),
      definition([{ id: 'write', kind: 'ai', retry: FAST_RETRY, ...step }]),
    );
    return waitForExecution(service.api(), await trigger(service.api(), workflowId, input));
  }

  it('sends a chat completion with the resolved prompt, system, model and temperature', async () => {
    provider.replyOnce({ content: 'Welcome, Ada!' });
    const before = provider.requests.length;
    await runAi({
      prompt: 'Greet {{ input.name }}.',
      system: 'Be brief.',
      model: 'gpt-test',
      temperature: 0.2,
      max_tokens: 50,
    });
    const request = provider.requests[before]!;
    expect(request.headers['authorization']).to.equal('Bearer test-provider-key');
    expect(request.body).to.deep.include({ model: 'gpt-test', temperature: 0.2, max_tokens: 50 });
    expect(request.body.messages).to.deep.equal([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Greet Ada.' },
    ]);
  });

  it('outputs the text, the model and the usage', async () => {
    provider.replyOnce({ body: completion('gpt-test-2024', 'Welcome, Ada!') });
    const execution = await runAi({ prompt: 'Greet {{ input.name }}.' });
    expect(execution.status).to.equal('success');
    expect(stepOf(execution, 'write').output).to.deep.equal({
      text: 'Welcome, Ada!',
      model: 'gpt-test-2024',
      usage: { prompt_tokens: 12, completion_tokens: 8, total_tokens: 20 },
    });
  });

  it('uses AI_MODEL when the step names no model', async () => {
    const before = provider.requests.length;
    await runAi({ prompt: 'Hi' });
    expect(provider.requests[before]!.body.model).to.equal('default-model');
  });

  it('asks for JSON with output_schema and outputs the validated object', async () => {
    const schema = {
      type: 'object',
      required: ['score'],
      properties: { score: { type: 'integer' } },
      additionalProperties: false,
    };
    provider.replyOnce({ content: '{"score": 7}' });
    const before = provider.requests.length;
    const execution = await runAi({ prompt: 'Score it', output_schema: schema });
    expect(provider.requests[before]!.body.response_format).to.deep.equal({
      type: 'json_schema',
      json_schema: { name: 'step_output', schema, strict: true },
    });
    expect(stepOf(execution, 'write').output).to.deep.include({ json: { score: 7 } });
  });

  it('fails with ai_invalid_output when the answer does not match output_schema', async () => {
    const schema = { type: 'object', required: ['score'], properties: { score: { type: 'integer' } } };
    provider.replyOnce(
      { content: '{"score": "high"}' },
      { content: '{"score": "high"}' },
      { content: '{"score": "high"}' },
    );
    const execution = await runAi({ prompt: 'Score it', output_schema: schema });
    expect(execution.status).to.equal('failed');
    expect(execution.error).to.include({ step: 'write', code: 'ai_invalid_output' });
    expect(execution.error!.message).to.include('/score');
  });

  it('retries a 429 from the provider, honouring Retry-After', async () => {
    provider.replyOnce(
      { status: 429, headers: { 'retry-after': '1' }, body: { error: { message: 'slow down' } } },
      { content: 'ok' },
    );
    const execution = await runAi({ prompt: 'Hi' });
    expect(execution.status).to.equal('success');
    expect(stepOf(execution, 'write').attempts).to.equal(2);
  });

  it('retries a 5xx from the provider', async () => {
    provider.replyOnce({ status: 503, body: { error: { message: 'overloaded' } } }, { content: 'ok' });
    const execution = await runAi({ prompt: 'Hi' });
    expect(stepOf(execution, 'write')).to.include({ status: 'success', attempts: 2 });
  });

  it('fails at once on a 4xx from the provider, with its message', async () => {
    provider.replyOnce({ status: 400, body: { error: { message: 'model does not exist' } } });
    const execution = await runAi({ prompt: 'Hi' });
    expect(execution.error).to.include({ step: 'write', code: 'ai_provider_error' });
    expect(execution.error!.message).to.include('model does not exist');
    expect(stepOf(execution, 'write').attempts).to.equal(1);
  });

  describe('token budget per workspace', () => {
    /** What the fake provider's answers use (its `usage.total_tokens`). */
    const TOKENS_PER_CALL = 20;

    async function workspaceWithBudget(tokens: number | null): Promise<{ api: ApiClient; workflow: string }> {
      const { workspaceId, key } = await service.newWorkspace(['write']);
      if (tokens !== null) {
        await setLimitOverrides(
          service.runtime.services.db,
          workspaceId,
          new Map([['ai_tokens_per_day', tokens]]),
        );
      }
      const api = service.api(key);
      const workflow = await createWorkflow(api, definition([{ id: 'write', kind: 'ai', prompt: 'Hi' }]));
      return { api, workflow };
    }

    const run = async (api: ApiClient, workflow: string): Promise<ExecutionBody> =>
      waitForExecution(api, await trigger(api, workflow));

    it('counts the tokens each call used, and fails ai steps without calling the provider once the day’s budget is used', async () => {
      const { api, workflow } = await workspaceWithBudget(30);
      expect((await run(api, workflow)).status).to.equal('success');
      // 20 of 30 used: the next call still starts, and takes the count past the limit.
      expect((await run(api, workflow)).status).to.equal('success');

      const calls = provider.requests.length;
      const refused = await run(api, workflow);
      expect(provider.requests.length, 'the provider was called').to.equal(calls);
      expect(refused.status).to.equal('failed');
      expect(refused.error).to.include({ step: 'write', code: 'ai_budget_exceeded' });
      const tomorrow = new Date(
        Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1),
      );
      expect(refused.error!.message)
        .to.include('40 of its 30 AI tokens')
        .and.include('ai_tokens_per_day')
        .and.include(tomorrow.toISOString());
      expect(stepOf(refused, 'write').attempts).to.equal(1);

      const workspace = (await api.get('/v1/workspace').expect(200)).body;
      expect(workspace.limits.ai_tokens_per_day).to.equal(30);
      expect(workspace.usage.ai_tokens_today).to.equal(2 * TOKENS_PER_CALL);
    });

    it("leaves other workspaces' AI steps alone", async () => {
      const spent = await workspaceWithBudget(TOKENS_PER_CALL);
      expect((await run(spent.api, spent.workflow)).status).to.equal('success');
      expect((await run(spent.api, spent.workflow)).error?.code).to.equal('ai_budget_exceeded');

      const other = await workspaceWithBudget(null);
      expect((await run(other.api, other.workflow)).status).to.equal('success');
      const usage = (await other.api.get('/v1/workspace').expect(200)).body;
      expect(usage.limits.ai_tokens_per_day).to.equal(null);
      expect(usage.usage.ai_tokens_today).to.equal(TOKENS_PER_CALL);
    });
  });

  describe('without a provider', () => {
    let bare: TestService;
    before(async function () {
      this.timeout(120_000);
      bare = await startTestService();
    });
    after(async () => bare?.stop());

    it('fails the step with ai_not_configured and a clear message', async () => {
      const workflowId = await createWorkflow(
        bare.api(),
        definition([{ id: 'write', kind: 'ai', prompt: 'Hi' }]),
      );
      const execution = await waitForExecution(bare.api(), await trigger(bare.api(), workflowId));
      expect(execution.status).to.equal('failed');
      expect(execution.error).to.include({ step: 'write', code: 'ai_not_configured' });
      expect(execution.error!.message).to.include('AI_BASE_URL');
      expect(stepOf(execution, 'write').attempts).to.equal(1);
    });
  });
});
