/**
 * Saving definitions with steps that hold steps (docs/definitions.md#composition): nested steps are checked
 * like top-level ones, wherever they are, with the JSON pointer of the field at fault, and `steps.<id>`
 * follows the nesting (docs/definitions.md#what-expressions-see).
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { projectRoot } from '../../platform/paths';
import { DEFINITION_ERRORS } from '../../src/api/semantic-errors';
import { base, definitionChecks, rules } from '../support/definitions';
import { fencedBlocks } from '../support/markdown';

const { parseDefinition, problemsOf } = definitionChecks();

const parallel = (id: string, branches: Record<string, unknown[]>, extra: Record<string, unknown> = {}) => ({
  id,
  kind: 'parallel',
  branches: Object.entries(branches).map(([branch, steps]) => ({ id: branch, steps })),
  ...extra,
});
const map = (id: string, steps: unknown[], extra: Record<string, unknown> = {}) => ({
  id,
  kind: 'map',
  items: 'input.list',
  steps,
  ...extra,
});
const loop = (id: string, steps: unknown[], until = 'true') => ({
  id,
  kind: 'loop',
  max_iterations: 3,
  until,
  steps,
});
const connector = (id: string, url: string) => ({
  id,
  kind: 'connector',
  connector: 'http',
  request: { url },
});

/** Loops inside loops: `levels` levels of steps in all, the innermost a rules step named "deepest". */
function nested(levels: number): unknown {
  let step: unknown = rules('deepest');
  for (let level = levels - 1; level >= 1; level--) step = loop(`level_${level}`, [step]);
  return step;
}

/** The one problem of a definition refused for one reason. */
async function onlyProblem(definition: unknown) {
  const problems = await problemsOf(definition);
  expect(problems, JSON.stringify(problems)).to.have.length(1);
  return problems[0]!;
}

describe('nested definitions', () => {
  describe('accepted', () => {
    it('accepts every example of docs/definitions.md#composition', async () => {
      const page = fs.readFileSync(path.join(projectRoot, 'docs/definitions.md'), 'utf8');
      const section = page.slice(page.indexOf('\n## Composition'), page.indexOf('\n## Step error codes'));
      const examples = fencedBlocks(section)
        .filter((block) => block.lang === 'json')
        .map((block) => JSON.parse(block.code) as Record<string, unknown>)
        .filter((json) => json['kind'] !== undefined || json['steps'] !== undefined);
      expect(examples.map((json) => json['kind'] ?? 'definition')).to.include.members([
        'parallel',
        'map',
        'switch',
        'loop',
        'workflow',
        'definition',
      ]);
      for (const example of examples) {
        const definition = example['kind'] ? base([example]) : example;
        await parseDefinition(definition).catch((error: { details?: unknown }) =>
          expect.fail(`${JSON.stringify(example).slice(0, 80)}: ${JSON.stringify(error.details)}`),
        );
      }
    });

    it('accepts steps nested 5 levels deep', async () => {
      await parseDefinition(base([nested(5)]));
    });

    it('lets a nested step read the steps before it in its list and before its containers', async () => {
      await parseDefinition(
        base([
          rules('first'),
          parallel('fan', {
            left: [rules('a'), map('each', [rules('b', 'steps.first.output = 1 and steps.a.output = 1')])],
          }),
        ]),
      );
    });

    it("lets a loop's until read the steps of its iteration", async () => {
      await parseDefinition(base([loop('poll', [rules('check')], 'steps.check.output = 1')]));
    });

    it("lets the definition's output read the top-level steps, containers included", async () => {
      await parseDefinition(
        base([map('each', [rules('inner')]), rules('after')], {
          output: { all: '{{ steps.each.output }}', last: '{{ steps.after.output }}' },
        }),
      );
    });

    it('lets a connector inside a container read secrets', async () => {
      await parseDefinition(base([map('each', [connector('call', '{{ secrets.URL }}')])]));
    });
  });

  describe('ids and nesting', () => {
    it('refuses a step id used again in a nested branch, naming both places', async () => {
      const problem = await onlyProblem(
        base([rules('a'), parallel('fan', { left: [rules('b')], right: [rules('a')] })]),
      );
      expect(problem).to.deep.equal({
        path: '/steps/1/branches/1/steps/0/id',
        message: 'duplicate step id "a" (also at /steps/0)',
      });
    });

    it('refuses "trigger" as a nested step id', async () => {
      const problem = await onlyProblem(base([map('each', [rules('trigger')])]));
      expect(problem).to.deep.equal({
        path: '/steps/0/steps/0/id',
        message: '"trigger" is reserved for the trigger step',
      });
    });

    it('refuses a sixth level of nesting at the step that is too deep', async () => {
      const problem = await onlyProblem(base([nested(6)]));
      expect(problem).to.deep.equal({
        path: '/steps/0/steps/0/steps/0/steps/0/steps/0/steps/0',
        message:
          'is nested 6 levels deep; steps nest at most 5 levels (top-level steps are level 1, so a step list sits inside at most 4 containers)',
      });
    });

    it('refuses an unknown kind nested deep, at the path of its kind', async () => {
      const problem = await onlyProblem(
        base([parallel('fan', { left: [rules('a'), map('each', [{ id: 'x', kind: 'teleport' }])] })]),
      );
      expect(problem.path).to.equal('/steps/0/branches/0/steps/1/steps/0/kind');
      expect(problem.message).to.match(/^kind must be one of "rules", .*"loop", "workflow"$/);
    });

    it('refuses two branches of a parallel step with one id', async () => {
      const step = {
        id: 'fan',
        kind: 'parallel',
        branches: [
          { id: 'same', steps: [rules('a')] },
          { id: 'same', steps: [rules('b')] },
        ],
      };
      expect(await onlyProblem(base([step]))).to.deep.equal({
        path: '/steps/0/branches/1/id',
        message: 'duplicate branch id "same" (also at /steps/0/branches/0)',
      });
    });

    it('refuses two cases of a switch with one id', async () => {
      const step = {
        id: 'pick',
        kind: 'switch',
        cases: [
          { id: 'gold', when: 'true', steps: [rules('a')] },
          { id: 'gold', when: 'false', steps: [rules('b')] },
        ],
      };
      expect(await onlyProblem(base([step]))).to.deep.equal({
        path: '/steps/0/cases/1/id',
        message: 'duplicate case id "gold" (also at /steps/0/cases/0)',
      });
    });

    it('refuses a switch case named "default", which names the default steps', async () => {
      const step = {
        id: 'pick',
        kind: 'switch',
        cases: [{ id: 'default', when: 'true', steps: [rules('a')] }],
      };
      expect(await onlyProblem(base([step]))).to.deep.equal({
        path: '/steps/0/cases/0/id',
        message:
          '"default" names the default steps in the output and runs of a switch; choose another case id',
      });
    });

    it('refuses a map whose `as` is a name the context has already', async () => {
      expect(await onlyProblem(base([map('each', [rules('a')], { as: 'input' })]))).to.deep.equal({
        path: '/steps/0/as',
        message:
          '"input" is a name the context has already; choose another (not input, steps, execution, secrets, index, iteration)',
      });
    });

    it('refuses more than 500 steps in all, nested ones included, before any other check', async () => {
      const inner = Array.from({ length: 500 }, (_, i) => rules(`s${i}`, 'input.'));
      expect(await onlyProblem(base([map('each', inner)]))).to.deep.equal({
        path: '/steps',
        message:
          'has 501 steps (1 top-level, 500 nested); a definition holds at most 500, nested steps included',
      });
    });
  });

  describe('what expressions see', () => {
    it('refuses a reference to a step inside a container from outside it', async () => {
      const problem = await onlyProblem(
        base([map('notify_all', [rules('send')]), rules('after', 'steps.send.output = 1')]),
      );
      expect(problem).to.deep.equal({
        path: '/steps/1/rules/0/when',
        message:
          'expression refers to step "send", which is inside step "notify_all"; outside it, only steps.notify_all is visible',
      });
    });

    it('refuses a reference to a later step of the same branch', async () => {
      const problem = await onlyProblem(
        base([parallel('fan', { left: [rules('a', 'steps.b.output = 1'), rules('b')] })]),
      );
      expect(problem).to.deep.equal({
        path: '/steps/0/branches/0/steps/0/rules/0/when',
        message: 'expression refers to step "b", which does not come earlier in the workflow',
      });
    });

    it('refuses a reference to a step of another branch', async () => {
      const problem = await onlyProblem(
        base([parallel('fan', { left: [rules('a')], right: [rules('b', 'steps.a.output = 1')] })]),
      );
      expect(problem).to.deep.equal({
        path: '/steps/0/branches/1/steps/0/rules/0/when',
        message: 'expression refers to step "a", which is in another branch of step "fan"',
      });
    });

    it('refuses a reference to the container a step is in', async () => {
      const problem = await onlyProblem(base([loop('poll', [rules('check', 'steps.poll.output = 1')])]));
      expect(problem).to.deep.equal({
        path: '/steps/0/steps/0/rules/0/when',
        message:
          'expression refers to step "poll", which contains this expression; its output exists only once it has ended',
      });
    });

    it("refuses a container's own if reading its steps", async () => {
      const problem = await onlyProblem(base([map('each', [rules('inner')], { if: 'steps.inner.output' })]));
      expect(problem).to.deep.equal({
        path: '/steps/0/if',
        message:
          'expression refers to step "inner", which is inside step "each"; outside it, only steps.each is visible',
      });
    });

    it('refuses a reference to a step that no step of the workflow has', async () => {
      const problem = await onlyProblem(base([map('each', [rules('inner', 'steps.nowhere.output')])]));
      expect(problem).to.deep.equal({
        path: '/steps/0/steps/0/rules/0/when',
        message: 'expression refers to step "nowhere", which is not a step of this workflow',
      });
    });

    it("refuses a definition output that reads a step inside a container, at the output's path", async () => {
      const problem = await onlyProblem(
        base([map('each', [rules('inner')])], { output: { result: 'got {{ steps.inner.output }}' } }),
      );
      expect(problem).to.deep.equal({
        path: '/output/result',
        message:
          'template {{ steps.inner.output }} refers to step "inner", which is inside step "each"; outside it, only steps.each is visible',
      });
    });

    it("checks a workflow step's input templates like a step's", async () => {
      const step = {
        id: 'bill',
        kind: 'workflow',
        workflow: 'billing',
        input: { total: '{{ steps.later.output }}' },
      };
      expect(await onlyProblem(base([step, rules('later')]))).to.deep.equal({
        path: '/steps/0/input/total',
        message:
          'template {{ steps.later.output }} refers to step "later", which does not come earlier in the workflow',
      });
    });
  });

  describe('container expressions', () => {
    /** The one problem of a map over `items`. */
    const itemsProblem = (items: string) => onlyProblem(base([map('each', [rules('a')], { items })]));

    it('refuses a loop whose until does not parse', async () => {
      const problem = await onlyProblem(base([loop('poll', [rules('check')], 'steps.check.output =')]));
      expect(problem.path).to.equal('/steps/0/until');
      expect(problem.message).to.match(/^expression does not parse: /);
    });

    it('refuses map items that do not parse, as an expression or as one template', async () => {
      const asExpression = await itemsProblem('input.');
      expect(asExpression.path).to.equal('/steps/0/items');
      expect(asExpression.message).to.match(/^expression does not parse: /);
      const asTemplate = await itemsProblem('{{ input. }}');
      expect(asTemplate.path).to.equal('/steps/0/items');
      expect(asTemplate.message).to.match(/^template \{\{ input\. \}\} does not parse: /);
    });

    it('refuses map items that put text around templates', async () => {
      expect(await itemsProblem('list {{ input.list }}')).to.deep.equal({
        path: '/steps/0/items',
        message:
          'must be one expression ("input.contacts") or one whole template ("{{ input.contacts }}"), not text around templates',
      });
    });

    it('refuses a secrets template in map items', async () => {
      expect(await itemsProblem('{{ secrets.LIST }}')).to.deep.equal({
        path: '/steps/0/items',
        message:
          'template {{ secrets.LIST }} reads secrets, which only connector and ai step templates can use',
      });
    });

    it("refuses a case's when that does not parse, at its path", async () => {
      const step = {
        id: 'pick',
        kind: 'switch',
        cases: [{ id: 'a', when: 'input.plan = ', steps: [rules('x')] }],
      };
      const problem = await onlyProblem(base([step]));
      expect(problem.path).to.equal('/steps/0/cases/0/when');
      expect(problem.message).to.match(/^expression does not parse: /);
    });

    it('accepts a sleep in a loop body whose `if` reads the step before it (the polling loop of docs/definitions.md)', async () => {
      const pause = { id: 'pause', kind: 'sleep', duration: '30s', if: 'steps.check.output != true' };
      await parseDefinition(base([loop('poll', [rules('check'), pause], 'steps.check.output = true')]));
    });

    it("refuses a nested sleep's until template that reads a later step, at its path", async () => {
      const pause = { id: 'pause', kind: 'sleep', until: '{{ steps.later.output }}' };
      const problem = await onlyProblem(base([map('each', [pause, rules('later')])]));
      expect(problem).to.deep.equal({
        path: '/steps/0/steps/0/until',
        message:
          'template {{ steps.later.output }} refers to step "later", which does not come earlier in the workflow',
      });
    });

    it("refuses a nested ai step's output_schema that is not a JSON Schema", async () => {
      const ai = { id: 'score', kind: 'ai', prompt: 'x', output_schema: { type: 12 } };
      const problem = await onlyProblem(base([map('each', [ai])]));
      expect(problem.path).to.equal('/steps/0/steps/0/output_schema');
      expect(problem.message).to.match(/^is not a valid JSON Schema: /);
    });
  });

  it('lists each of these problems among the 400s the OpenAPI document describes (x-semantic-errors)', async () => {
    const problems = await problemsOf(
      base(
        [
          rules('a'),
          parallel('fan', { left: [rules('a')], right: [rules('b', 'steps.c.output')] }),
          map('each', [rules('c', 'steps.fan.output')], { as: 'index', items: '{{ secrets.X }}' }),
          loop('poll', [nested(5)], 'steps.poll.output ='),
          { id: 'pick', kind: 'switch', cases: [{ id: 'default', when: 'true', steps: [rules('d')] }] },
          { id: 'nap', kind: 'sleep', until: '2026-02-30T09:00:00Z' },
        ],
        { output: '{{ steps.c.output }}' },
      ),
    );
    expect(problems.length).to.be.at.least(8);
    const undocumented = problems.filter(
      (problem) =>
        !DEFINITION_ERRORS.some(
          (rule) =>
            new RegExp(`^(?:${rule.path})$`).test(problem.path) &&
            new RegExp(`^(?:${rule.message})$`, 's').test(problem.message),
        ),
    );
    // `as` is refused by the document's schema itself (not: enum), not by a semantic rule.
    expect(undocumented).to.deep.equal([
      {
        path: '/steps/2/as',
        message:
          '"index" is a name the context has already; choose another (not input, steps, execution, secrets, index, iteration)',
      },
    ]);
  });
});
