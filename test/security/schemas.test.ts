/**
 * Workspaces' JSON Schemas (docs/operations.md#threat-model): each compiles in isolation (no `$id` or
 * `$ref` of one workspace reaches another's), within size limits, cached within a bound (a thousand
 * distinct schemas do not grow the process without end), and validating never holds the API's event loop
 * (quadratic `uniqueItems`, exponential references).
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { expect } from 'chai';
import { createWorkflow, definition, expectError, rulesStep } from '../support/fixtures';
import { HEALTH_ANSWER_BOUND_MS, whileProbingHealth } from '../support/health-probe';
import type { ApiClient, TestService } from '../support/stack';
import { sharedService } from './support';

const steps = [rulesStep('a', [{ when: 'true', output: 1 }])];

function withSchema(inputSchema: Record<string, unknown>, id?: string): Record<string, unknown> {
  return definition(steps, { input_schema: inputSchema, ...(id ? { id } : {}) });
}

/** The heap in MB after a full collection. */
function heapAfterGc(): number {
  v8.setFlagsFromString('--expose-gc');
  (vm.runInNewContext('gc') as () => void)();
  return process.memoryUsage().heapUsed / 1024 / 1024;
}

describe('JSON Schemas of hostile workspaces @security', function () {
  let service: TestService;
  let a: ApiClient;
  let b: ApiClient;
  before(async function () {
    this.timeout(120_000);
    service = await sharedService();
    a = service.api((await service.newWorkspace(['admin'])).key);
    b = service.api((await service.newWorkspace(['admin'])).key);
  });

  it('two workspaces may use the same $id, each validating with its own schema', async () => {
    const id = 'https://schemas.example/customer';
    const inA = await createWorkflow(
      a,
      withSchema({ $id: id, type: 'object', properties: { n: { type: 'string' } } }),
    );
    const inB = await createWorkflow(
      b,
      withSchema({ $id: id, type: 'object', properties: { n: { type: 'number' } } }),
    );
    await a.post(`/v1/workflows/${inA}/trigger`, { n: 'text' }).expect(202);
    expectError(await a.post(`/v1/workflows/${inA}/trigger`, { n: 1 }), 400, 'invalid_input');
    await b.post(`/v1/workflows/${inB}/trigger`, { n: 1 }).expect(202);
    expectError(await b.post(`/v1/workflows/${inB}/trigger`, { n: 'text' }), 400, 'invalid_input');
  });

  it("a $ref to another workspace's $id does not resolve", async () => {
    const id = 'https://schemas.example/secret-shape';
    await createWorkflow(a, withSchema({ $id: id, type: 'object', required: ['token'] }));
    const res = await b.post('/v1/workflows', withSchema({ $ref: id }));
    expectError(res, 400, 'invalid_definition');
    expect(res.body.error.details[0].path).to.equal('/input_schema');
    expect(res.body.error.details[0].message).to.match(/resolve reference/);
  });

  it('two versions of one workflow may reuse an $id with a new shape', async () => {
    const id = 'https://schemas.example/order';
    const workflowId = await createWorkflow(a, withSchema({ $id: id, type: 'object', required: ['x'] }));
    const res = await a.put(
      `/v1/workflows/${workflowId}`,
      withSchema({ $id: id, type: 'object', required: ['y'] }, workflowId),
    );
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    await a.post(`/v1/workflows/${workflowId}/trigger`, { y: 1 }).expect(202);
    await a.post(`/v1/workflows/${workflowId}/trigger?version=1`, { x: 1 }).expect(202);
  });

  it('a schema past the size or depth limit is refused when saved', async () => {
    const wide = {
      type: 'object',
      properties: Object.fromEntries(
        Array.from({ length: 3000 }, (_, i) => [
          `field_${i}`,
          { type: 'string', description: 'x'.repeat(20) },
        ]),
      ),
    };
    const big = await a.post('/v1/workflows', withSchema(wide));
    expectError(big, 400, 'invalid_definition');
    expect(big.body.error.details[0].message).to.match(
      /bytes as JSON, more than the limit|more than 1000 objects/,
    );
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 40; i++) deep = { type: 'object', properties: { x: deep } };
    const nested = await a.post('/v1/workflows', withSchema(deep));
    expectError(nested, 400, 'invalid_definition');
    expect(nested.body.error.details[0].message).to.match(/nested deeper than 32 levels/);
  });

  it('uniqueItems over 20,000 objects is checked in linear time, the API answering meanwhile', async () => {
    const workflowId = await createWorkflow(
      a,
      withSchema({ type: 'object', properties: { list: { type: 'array', uniqueItems: true } } }),
    );
    // All distinct: a pairwise check compares 200 million pairs before it can say so.
    const list = Array.from({ length: 20_000 }, (_, i) => ({ id: i }));
    const started = performance.now();
    const { result, slowestMs } = await whileProbingHealth(
      service.url,
      a.post(`/v1/workflows/${workflowId}/trigger`, { list }).then((r) => r),
    );
    expect(result.status, JSON.stringify(result.body)).to.equal(202);
    expect(performance.now() - started, 'the trigger (ms)').to.be.below(5000);
    expect(slowestMs, 'slowest /healthz answer (ms)').to.be.below(HEALTH_ANSWER_BOUND_MS);
    const duplicate = await a.post(`/v1/workflows/${workflowId}/trigger`, { list: [...list, { id: 7 }] });
    expectError(duplicate, 400, 'invalid_input');
    expect(duplicate.body.error.details[0].message).to.match(/duplicate items \(items ## 7 and 20000/);
  });

  it('a schema whose references branch exponentially is cut off at the time limit, off the event loop', async () => {
    // 2^40 checks of one number: days of work (2^30 took 2.4 s on a quiet 2-core machine, under the limit).
    const defs: Record<string, unknown> = { d40: { type: 'number' } };
    for (let i = 39; i >= 0; i--)
      defs[`d${i}`] = { allOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
    const workflowId = await createWorkflow(
      a,
      withSchema({ type: 'object', properties: { n: { $ref: '#/$defs/d0' } }, $defs: defs }),
    );
    const { result, slowestMs } = await whileProbingHealth(
      service.url,
      a.post(`/v1/workflows/${workflowId}/trigger`, { n: 1 }).then((r) => r),
    );
    expectError(result, 400, 'invalid_input');
    expect(result.body.error.details[0].message).to.match(/took longer than 5000 ms/);
    expect(slowestMs, 'slowest /healthz answer (ms)').to.be.below(HEALTH_ANSWER_BOUND_MS);
  });

  it('1,000 distinct schemas, saved and used, grow the process by a bounded amount', async function () {
    this.timeout(300_000);
    const workflowId = await createWorkflow(a, withSchema({ type: 'object' }));
    /** Saves `count` versions with schemas no other has, and checks a trigger's input against each. */
    const saveAndUse = async (from: number, count: number) => {
      for (let i = from; i < from + count; i += 20) {
        await Promise.all(
          Array.from({ length: 20 }, async (_, j) => {
            const n = i + j;
            const schema = {
              type: 'object',
              required: [`field_${n}`],
              properties: Object.fromEntries(
                Array.from({ length: 40 }, (_, k) => [
                  `field_${n}_${k}`,
                  { type: 'string', maxLength: n + k },
                ]),
              ),
            };
            const saved = await a.put(`/v1/workflows/${workflowId}`, withSchema(schema, workflowId));
            expect(saved.status, JSON.stringify(saved.body)).to.equal(200);
            // Checked against its version's schema, which compiles; refused, so no run starts (runs are not
            // what this measures).
            const version = saved.body.version as number;
            const res = await a.post(`/v1/workflows/${workflowId}/trigger?version=${version}`, {});
            expect(res.body.error?.details?.[0]?.path).to.equal(`/field_${n}`);
          }),
        );
      }
    };
    // More than every cache holds (256 validators), so the process is at its plateau.
    await saveAndUse(0, 300);
    const before = heapAfterGc();
    await saveAndUse(300, 1000);
    const growth = heapAfterGc() - before;
    // One shared compiler keeps every schema: some 35 MB for these 1,000.
    expect(growth, 'heap growth (MB) over 1,000 more distinct schemas').to.be.below(15);
  });
});
