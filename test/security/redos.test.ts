/**
 * Catastrophic regular expressions (docs/operations.md#threat-model): a pattern that backtracks
 * exponentially on JavaScript's engine, in an `if` and in an input_schema `pattern`, runs in linear time
 * (RE2), and while it runs the API of the same process (as under `npm start`) goes on answering. Patterns
 * that need backtracking are refused when saved.
 */
import { expect } from 'chai';
import {
  createWorkflow,
  definition,
  expectError,
  rulesStep,
  stepOf,
  trigger,
  waitForExecution,
} from '../support/fixtures';
import { HEALTH_ANSWER_BOUND_MS, whileProbingHealth } from '../support/health-probe';
import type { ApiClient, TestService } from '../support/stack';
import { sharedService } from './support';

/** Exponential on a backtracking engine: `(a|a)*` tries 2^n ways to match n a's before the `!`. */
const CATASTROPHIC = '^(a|a)*$';
/** Enough a's for JavaScript's engine to take seconds (each one more doubles it). */
const ATTACK = `${'a'.repeat(28)}!`;

describe('catastrophic regular expressions @security', function () {
  let service: TestService;
  let api: ApiClient;
  before(async function () {
    this.timeout(120_000);
    service = await sharedService();
    api = service.api((await service.newWorkspace(['admin'])).key);
  });

  it(`/${CATASTROPHIC}/ in an if runs in linear time, and the API answers meanwhile`, async () => {
    const workflowId = await createWorkflow(
      api,
      definition([
        rulesStep('check', [{ when: 'true', output: { ran: true } }], {
          if: `$contains(input.text, /${CATASTROPHIC}/)`,
        }),
      ]),
    );
    const { result: execution, slowestMs } = await whileProbingHealth(
      service.url,
      (async () =>
        waitForExecution(api, await trigger(api, workflowId, { text: ATTACK }), undefined, 20_000))(),
    );
    expect(execution.status, JSON.stringify(execution.error)).to.equal('success');
    expect(stepOf(execution, 'check').status).to.equal('skipped');
    expect(slowestMs, 'slowest /healthz answer (ms) while the run was in flight').to.be.below(
      HEALTH_ANSWER_BOUND_MS,
    );
  });

  it(`a pattern /${CATASTROPHIC}/ in an input_schema checks a trigger in linear time`, async () => {
    const workflowId = await createWorkflow(
      api,
      definition([rulesStep('a', [{ when: 'true', output: 1 }])], {
        input_schema: { type: 'object', properties: { text: { type: 'string', pattern: CATASTROPHIC } } },
      }),
    );
    const { result: res, slowestMs } = await whileProbingHealth(
      service.url,
      api.post(`/v1/workflows/${workflowId}/trigger`, { text: ATTACK }).then((r) => r),
    );
    expectError(res, 400, 'invalid_input');
    expect(res.body.error.details[0].path).to.equal('/text');
    expect(slowestMs, 'slowest /healthz answer (ms) during the trigger').to.be.below(HEALTH_ANSWER_BOUND_MS);
    await api.post(`/v1/workflows/${workflowId}/trigger`, { text: 'aaaa' }).expect(202);
  });

  it('a pattern that needs backtracking (a backreference) is refused when saved', async () => {
    const res = await api.post(
      '/v1/workflows',
      definition([rulesStep('a', [{ when: 'true', output: 1 }])], {
        input_schema: { type: 'object', properties: { text: { type: 'string', pattern: '^(a+)\\1$' } } },
      }),
    );
    expectError(res, 400, 'invalid_definition');
    expect(res.body.error.details[0]).to.deep.include({ path: '/input_schema' });
    expect(res.body.error.details[0].message).to.match(/linear time/);
  });

  it('a lookahead in an if is refused when saved', async () => {
    const res = await api.post(
      '/v1/workflows',
      definition([rulesStep('a', [{ when: 'true', output: 1 }], { if: "$contains('ab', /a(?=b)/)" })]),
    );
    expectError(res, 400, 'invalid_definition');
    expect(res.body.error.details[0]).to.deep.include({ path: '/steps/0/if' });
    expect(res.body.error.details[0].message).to.match(/linear time/);
  });

  it('propertyNames and patternProperties patterns run on RE2 too', async () => {
    const workflowId = await createWorkflow(
      api,
      definition([rulesStep('a', [{ when: 'true', output: 1 }])], {
        input_schema: {
          type: 'object',
          propertyNames: { pattern: CATASTROPHIC },
          patternProperties: { [CATASTROPHIC]: { type: 'number' } },
        },
      }),
    );
    const { result: res, slowestMs } = await whileProbingHealth(
      service.url,
      api.post(`/v1/workflows/${workflowId}/trigger`, { [ATTACK]: 1 }).then((r) => r),
    );
    expectError(res, 400, 'invalid_input');
    expect(slowestMs, 'slowest /healthz answer (ms) during the trigger').to.be.below(HEALTH_ANSWER_BOUND_MS);
  });
});
