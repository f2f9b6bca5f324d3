import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import fc from 'fast-check';
import { durationAtMostPattern } from '../../core/definitions/durations';
import { CUSTOMER_ONBOARDING } from '../../processes/demo-definition';
import { AppError } from '../../platform/errors';
import { projectRoot } from '../../platform/paths';
import { base, definitionChecks, rules } from '../support/definitions';
import { fencedBlocks } from '../support/markdown';

const { parseDefinition, problemsOf } = definitionChecks();
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

describe('definition validation', () => {
  it('accepts the demo workflow', async () => {
    expect((await parseDefinition(CUSTOMER_ONBOARDING)).id).to.equal('customer-onboarding');
  });

  it('accepts all four step kinds', async () => {
    const definition = base([
      rules('route'),
      {
        id: 'crm',
        kind: 'connector',
        connector: 'http',
        request: { method: 'POST', url: 'https://x.example/{{ input.id }}' },
      },
      { id: 'welcome', kind: 'ai', prompt: 'Hello {{ input.name }}' },
      { id: 'review', kind: 'approval', if: 'steps.route.output = 1', timeout: '72h' },
    ]);
    expect((await parseDefinition(definition)).steps).to.have.length(4);
  });

  it('rejects a bad workflow id with its path', async () => {
    expect((await problemsOf({ ...base([rules('a')]), id: 'Bad Id' }))[0]!.path).to.equal('/id');
  });

  it('rejects an unknown step kind', async () => {
    const [problem] = await problemsOf(base([{ id: 'a', kind: 'teleport' }]));
    expect(problem!.path).to.equal('/steps/0/kind');
    expect(problem!.message).to.include('rules');
  });

  it('rejects unknown fields instead of ignoring them', async () => {
    const [problem] = await problemsOf(base([{ ...rules('a'), retries: 3 }]));
    expect(problem!.path).to.equal('/steps/0');
    expect(problem!.message).to.include('retries');
  });

  it('rejects duplicate step ids', async () => {
    const problems = await problemsOf(base([rules('a'), rules('a')]));
    expect(problems).to.deep.include({
      path: '/steps/1/id',
      message: 'duplicate step id "a" (also at /steps/0)',
    });
  });

  it('reserves the id "trigger"', async () => {
    expect((await problemsOf(base([rules('trigger')])))[0]!.path).to.equal('/steps/0/id');
  });

  it('rejects an expression that does not parse, naming where', async () => {
    const [problem] = await problemsOf(base([rules('a', 'input.plan = ')]));
    expect(problem!.path).to.equal('/steps/0/rules/0/when');
    expect(problem!.message).to.include('does not parse');
  });

  it('rejects a template that does not parse', async () => {
    const step = {
      id: 'c',
      kind: 'connector',
      connector: 'http',
      request: { url: 'https://x/{{ input. }}' },
    };
    expect((await problemsOf(base([step])))[0]!.path).to.equal('/steps/0/request/url');
  });

  it('rejects a reference to a step that does not come earlier', async () => {
    const problems = await problemsOf(base([rules('a', 'steps.b.output = 1'), rules('b')]));
    expect(problems[0]!.message).to.include('"b"');
  });

  it('rejects secrets outside connector and ai steps', async () => {
    const problems = await problemsOf(
      base([{ id: 'a', kind: 'rules', rules: [{ when: 'true', output: '{{ secrets.X }}' }] }]),
    );
    expect(problems[0]!.message).to.include('secrets');
  });

  it('rejects a template that mixes secrets with other data', async () => {
    const step = {
      id: 'c',
      kind: 'connector',
      connector: 'http',
      request: { url: 'https://x', headers: { A: '{{ secrets.T & input.x }}' } },
    };
    expect((await problemsOf(base([step])))[0]!.path).to.equal('/steps/0/request/headers/A');
  });

  it('rejects a string holding a secrets template and another template', async () => {
    const step = {
      id: 'c',
      kind: 'connector',
      connector: 'http',
      request: { url: 'https://x', headers: { A: '{{ secrets.T }}:{{ input.x }}' } },
    };
    expect((await problemsOf(base([step])))[0]!.message).to.include('cannot hold other templates');
  });

  it('rejects an input_schema that is not a JSON Schema', async () => {
    expect((await problemsOf(base([rules('a')], { input_schema: { type: 'nonsense' } })))[0]!.path).to.equal(
      '/input_schema',
    );
  });

  it('rejects a schedule trigger without cron or every', async () => {
    expect((await problemsOf(base([rules('a')], { trigger: { type: 'schedule' } })))[0]!.path).to.equal(
      '/trigger',
    );
  });

  it('reports every problem at once', async () => {
    expect(
      await problemsOf(base([rules('a', 'input.'), rules('a', 'steps.zz.output')])),
    ).to.have.length.of.at.least(3);
  });
});

describe('definition validation of step details', () => {
  it('rejects an ai output_schema that is not a JSON Schema', async () => {
    try {
      await parseDefinition({
        id: 'wf',
        steps: [{ id: 'a', kind: 'ai', prompt: 'x', output_schema: { type: 12 } }],
      });
      expect.fail('should have been rejected');
    } catch (error) {
      expect((error as AppError).details[0]!.path).to.equal('/steps/0/output_schema');
    }
  });

  it('accepts a workflow-level timeout and rejects a malformed one', async () => {
    expect(
      (await parseDefinition({ id: 'wf', timeout: '10m', steps: [{ id: 'a', kind: 'approval' }] })).timeout,
    ).to.equal('10m');
    const malformed = await parseDefinition({
      id: 'wf',
      timeout: 'ten minutes',
      steps: [{ id: 'a', kind: 'approval' }],
    }).catch((error: unknown) => error);
    expect(malformed).to.be.instanceOf(AppError);
  });
});

describe('definition bounds', () => {
  const connector = (extra: Record<string, unknown>) => ({
    id: 'c',
    kind: 'connector',
    connector: 'http',
    request: { url: 'https://x.example' },
    ...extra,
  });

  it('caps a step timeout at 24h', async () => {
    await parseDefinition(base([connector({ timeout: '24h' })]));
    await parseDefinition(base([connector({ timeout: '86400s' })]));
    for (const timeout of ['25h', '2d', '86401s', '1441m', '999999999ms']) {
      const [problem] = await problemsOf(base([connector({ timeout })]));
      expect(problem, timeout).to.deep.include({ path: '/steps/0/timeout' });
      expect(problem!.message).to.match(/at most 24h/);
    }
  });

  it('lets an approval wait up to 365 days, no longer', async () => {
    await parseDefinition(base([{ id: 'a', kind: 'approval', timeout: '365d' }]));
    const [problem] = await problemsOf(base([{ id: 'a', kind: 'approval', timeout: '366d' }]));
    expect(problem).to.deep.include({ path: '/steps/0/timeout' });
  });

  it('lets a sleep sleep up to 365 days, no longer', async () => {
    await parseDefinition(base([{ id: 'a', kind: 'sleep', duration: '365d' }]));
    await parseDefinition(base([{ id: 'a', kind: 'sleep', duration: '8760h' }]));
    for (const duration of ['366d', '8761h', '0s', '10 m']) {
      const [problem] = await problemsOf(base([{ id: 'a', kind: 'sleep', duration }]));
      expect(problem, duration).to.deep.include({ path: '/steps/0/duration' });
    }
  });

  it('gives a sleep exactly one of duration and until, and no retry or timeout', async () => {
    for (const step of [
      { duration: '1m', until: '2030-01-01T00:00:00Z' },
      {},
      { duration: '1m', timeout: '1m' },
      { duration: '1m', retry: { max_attempts: 2 } },
    ]) {
      const [problem] = await problemsOf(base([{ id: 'a', kind: 'sleep', ...step }]));
      expect(problem, JSON.stringify(step)).to.deep.include({ path: '/steps/0' });
    }
  });

  /** The JSON examples of one `###` section of docs/definitions.md. */
  function sectionExamples(heading: string): Record<string, unknown>[] {
    const page = fs.readFileSync(path.join(projectRoot, 'docs/definitions.md'), 'utf8');
    const start = page.indexOf(`\n### ${heading}\n`);
    expect(start, `the section "${heading}"`).to.be.above(-1);
    const end = page.indexOf('\n### ', start + 1);
    return fencedBlocks(page.slice(start, end))
      .filter((block) => block.lang === 'json')
      .map((block) => JSON.parse(block.code) as Record<string, unknown>);
  }

  it('accepts every example of docs/definitions.md#sleep', async () => {
    const examples = sectionExamples('Sleep');
    expect(examples).to.have.length(3);
    for (const example of examples) await parseDefinition(example['kind'] ? base([example]) : example);
  });

  it('accepts every example of docs/definitions.md#wait-for-event', async () => {
    const examples = sectionExamples('Wait for event');
    expect(examples.length).to.be.at.least(1);
    for (const example of examples) await parseDefinition(example['kind'] ? base([example]) : example);
  });

  it("refuses a sleep's until written out that is not an RFC 3339 time, and secrets in its template", async () => {
    await parseDefinition(base([{ id: 'a', kind: 'sleep', until: '2030-01-01T09:00:00+02:00' }]));
    await parseDefinition(base([{ id: 'a', kind: 'sleep', until: '{{ input.send_at }}' }]));
    for (const until of ['tomorrow', '2030-02-30T00:00:00Z', '2030-01-01', '2030-01-01T25:00:00Z']) {
      const [problem] = await problemsOf(base([{ id: 'a', kind: 'sleep', until }]));
      expect(problem, until).to.deep.include({ path: '/steps/0/until' });
      expect(problem!.message).to.match(/^must be an RFC 3339 time/);
    }
    const [secret] = await problemsOf(base([{ id: 'a', kind: 'sleep', until: '{{ secrets.WHEN }}' }]));
    expect(secret!.message).to.include('reads secrets');
  });

  it('caps retry intervals at 24h', async () => {
    const [problem] = await problemsOf(base([connector({ retry: { max_interval: '2d' } })]));
    expect(problem).to.deep.include({ path: '/steps/0/retry/max_interval' });
  });

  it('writes the bounds as patterns that agree with the durations they allow', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10 ** 9 - 1 }),
        fc.constantFrom(...(Object.keys(UNIT_MS) as (keyof typeof UNIT_MS)[])),
        fc.integer({ min: 1, max: 40 * 86_400_000 }),
        (n, unit, maxMs) => {
          expect(durationAtMostPattern(maxMs).test(`${n}${unit}`), `${n}${unit} <= ${maxMs} ms`).to.equal(
            n * UNIT_MS[unit] <= maxMs,
          );
        },
      ),
      { numRuns: 2000 },
    );
  });
});
