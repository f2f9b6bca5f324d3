import { expect } from 'chai';
import {
  ExpressionError,
  evaluateExpression,
  findReferences,
  isTruthy,
  resolveTemplates,
  secretTemplatePointers,
} from '../../workers/shared/expressions';

const context = {
  input: { customer: 'Ada', plan: 'enterprise', seats: 12 },
  steps: { route: { output: { tier: 'high' }, status: 'success' } },
  execution: { id: 'ex_1', workflow: 'onboarding', version: 3 },
};

describe('expressions', () => {
  it('evaluates JSONata over the execution context', async () => {
    expect(
      await evaluateExpression("input.plan = 'enterprise' and steps.route.output.tier = 'high'", context),
    ).to.equal(true);
  });

  it('returns undefined for a path that matches nothing', async () => {
    expect(await evaluateExpression('input.missing', context)).to.equal(undefined);
  });

  it('reports a syntax error with its position', async () => {
    try {
      await evaluateExpression('input.plan = ', context);
      expect.fail('should have thrown');
    } catch (error) {
      expect(error).to.be.instanceOf(ExpressionError);
      expect((error as ExpressionError).message).to.match(/at character \d+/);
    }
  });

  it('stops an endless tail-recursive loop with the step budget', async () => {
    const loop = '($f := function($x){ $f($x + 1) }; $f(0))';
    try {
      await evaluateExpression(loop, context, { maxSteps: 10_000, maxDepth: 300, maxSequence: 1000 });
      expect.fail('should have thrown');
    } catch (error) {
      expect((error as ExpressionError).code).to.equal('budget');
    }
  });

  it('stops deep recursion with the depth limit', async () => {
    const deep = '($f := function($x){ $x = 0 ? 0 : 1 + $f($x - 1) }; $f(100000))';
    try {
      await evaluateExpression(deep, context, { maxSteps: 10_000_000, maxDepth: 200, maxSequence: 1000 });
      expect.fail('should have thrown');
    } catch (error) {
      expect(error).to.be.instanceOf(ExpressionError);
    }
  });

  it('uses JSONata truthiness for if and when', () => {
    expect([null, undefined, false, 0, '', [], {}, [0, '']].map(isTruthy)).to.deep.equal(
      Array(8).fill(false),
    );
    expect([true, 1, 'x', [0, 1], { a: 1 }].map(isTruthy)).to.deep.equal(Array(5).fill(true));
  });

  it('finds the context roots and step ids an expression reads', () => {
    const refs = findReferences("input.plan = 'x' and steps.route.output.tier and $$.steps.check.status");
    expect([...refs.roots].sort()).to.deep.equal(['input', 'steps']);
    expect([...refs.steps].sort()).to.deep.equal(['check', 'route']);
    expect(refs.allSteps).to.equal(false);
  });

  it('notices when all steps may be read', () => {
    expect(findReferences('$keys(steps)').allSteps).to.equal(true);
  });

  it('names the secrets a template reads', () => {
    expect([...findReferences('secrets.CRM_TOKEN').secrets]).to.deep.equal(['CRM_TOKEN']);
  });
});

describe('templates', () => {
  it('gives a whole-string template the value of its expression, of any JSON type', async () => {
    expect(
      await resolveTemplates({ n: '{{ input.seats }}', o: '{{ steps.route.output }}' }, context),
    ).to.deep.equal({
      n: 12,
      o: { tier: 'high' },
    });
  });

  it('interpolates templates inside text', async () => {
    expect(await resolveTemplates('Hi {{ input.customer }} ({{ input.seats }} seats)', context)).to.equal(
      'Hi Ada (12 seats)',
    );
  });

  it('resolves templates in nested arrays and objects, not in keys', async () => {
    expect(await resolveTemplates({ '{{ x }}': ['{{ execution.version }}'] }, context)).to.deep.equal({
      '{{ x }}': [3],
    });
  });

  it('renders a missing value as null (whole string) or empty text (inside text)', async () => {
    expect(await resolveTemplates(['{{ input.nope }}', 'a{{ input.nope }}b'], context)).to.deep.equal([
      null,
      'ab',
    ]);
  });

  it('leaves deferred templates exactly as written', async () => {
    const resolved = await resolveTemplates('Bearer {{ secrets.TOKEN }}', context, {
      defer: (e) => e.startsWith('secrets'),
    });
    expect(resolved).to.equal('Bearer {{ secrets.TOKEN }}');
  });

  it('locates the strings holding secrets templates by JSON pointer', () => {
    const config = {
      url: 'https://x/{{ input.id }}',
      headers: { Authorization: 'Bearer {{ secrets.T }}', 'a/b': '{{ secrets.U }}' },
    };
    expect(secretTemplatePointers(config)).to.deep.equal(['/headers/Authorization', '/headers/a~1b']);
  });
});
