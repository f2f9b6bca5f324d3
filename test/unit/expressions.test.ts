import { expect } from 'chai';
import { compileExpression } from '../../core/expressions/compile';
import { ExpressionError } from '../../core/expressions/errors';
import { evaluateExpression, isTruthy } from '../../core/expressions/evaluate';
import { EvaluationBudget } from '../../core/expressions/limits';
import { findReferences } from '../../core/expressions/references';
import { resolveTemplates, secretTemplatePointers } from '../../core/expressions/templates';
import {
  jsonByteLength,
  MAX_STEP_INPUT_BYTES,
  MAX_STEP_OUTPUT_BYTES,
  nestedDeeperThan,
  stepDataProblem,
} from '../../core/step-data';

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
      await evaluateExpression(loop, context, {
        maxSteps: 10_000,
        maxDepth: 300,
        maxSequence: 1000,
        // Time must not stop it first on a slow machine: this is about the step budget.
        maxActiveMs: 60_000,
      });
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

describe('evaluation limits', () => {
  async function failure(expression: string, limits = {}): Promise<ExpressionError> {
    try {
      await evaluateExpression(expression, context, limits);
    } catch (error) {
      expect(error).to.be.instanceOf(ExpressionError);
      return error as ExpressionError;
    }
    return expect.fail(`"${expression}" should have failed`);
  }

  it('stops string doubling at the value size limit', async () => {
    const error = await failure("($f := function($s){ $f($s & $s) }; $f('x'))");
    expect(error.code).to.equal('too_large');
    expect(error.message).to.match(/string of \d+ characters, more than the limit of 2097152/);
  });

  it('refuses a huge $pad before allocating it', async () => {
    const started = Date.now();
    const error = await failure("$pad('', 100000000)");
    expect(error.code).to.equal('too_large');
    expect(error.message).to.include('string of 100000000 characters');
    expect(Date.now() - started).to.be.below(1000);
  });

  it('refuses a $join longer than the limit before joining', async () => {
    const error = await failure("$join($split($pad('', 100000, 'a'), ''), 'bcdefghijklmnopqrstuvwxyz0123')");
    expect(error.message).to.include('string of 3000000 characters');
  });

  it('keeps the sequence limit on ranges', async () => {
    expect((await failure('[1..10000000]')).code).to.equal('D2015');
  });

  it('stops many large values with the work budget', async () => {
    const error = await failure("$count([1..1000].$pad('', 1000000))");
    expect(error.code).to.equal('budget');
    expect(error.message).to.include('work budget of 20000000');
  });

  const level = (name: string, below: string) =>
    `$${name} := {${Array.from({ length: 10 }, (_, i) => `"${i}": $${below}`).join(', ')}}`;
  const shared = `$a := [1..1000]; ${level('b', 'a')}; ${level('c', 'b')}; ${level('d', 'c')}; ${level('e', 'd')}`;

  it('refuses to serialize a shared structure larger than the limit ($string and &)', async () => {
    for (const use of ['$string($e)', "$e & ''", '$e = $d']) {
      const error = await failure(`(${shared}; ${use})`);
      expect(error.code, use).to.equal('too_large');
      expect(error.message).to.match(/larger than the limit of 2097152 characters as JSON/);
    }
  });

  it('refuses a result larger than the limit', async () => {
    expect((await failure(`(${shared}; $e)`)).code).to.equal('too_large');
  });

  it('takes lower limits', async () => {
    expect((await failure("$pad('', 200)", { maxValueSize: 100 })).code).to.equal('too_large');
    expect((await failure("$count([1..100].$pad('', 90))", { maxWork: 5000 })).code).to.equal('budget');
  });

  it('shares a budget between evaluations when given one', async () => {
    const budget = new EvaluationBudget();
    const loop = '($f := function($x){ $x >= 300 ? true : $f($x + 1) }; $f(0))';
    // Only the step limit may stop the second evaluation: a time limit far out of reach keeps a
    // paused or loaded test process (the suite runs ESLint beside it) from ending it on time first.
    const limits = { maxSteps: 5000, maxActiveMs: 600_000 };
    expect(await evaluateExpression(loop, context, limits, budget)).to.equal(true);
    try {
      await evaluateExpression(loop, context, limits, budget);
      expect.fail('should have thrown');
    } catch (error) {
      expect((error as ExpressionError).code).to.equal('budget');
    }
    expect(await evaluateExpression(loop, context, limits, new EvaluationBudget())).to.equal(true);
  });

  it('reports a limit hit inside $eval as the limit', async () => {
    expect((await failure('$eval("$pad(\'\', 5000000)")')).code).to.equal('too_large');
  });

  it('keeps the meaning of the guarded built-ins', async () => {
    expect(await evaluateExpression("$pad('ab', -5, 'xy')", context)).to.equal('xyxab');
    expect(await evaluateExpression("$pad('ab', 4)", context)).to.equal('ab  ');
    expect(await evaluateExpression("$join(['a', 'b'], '-')", context)).to.equal('a-b');
    expect(await evaluateExpression('$string({"a": [1, 2]}, true)', context)).to.equal(
      '{\n  "a": [\n    1,\n    2\n  ]\n}',
    );
    expect(await evaluateExpression('{"x": {"z": 1}} ~> |x|{"y": 2}|', context)).to.deep.equal({
      x: { z: 1, y: 2 },
    });
    expect(
      await evaluateExpression(
        '$distinct([{"a": 1, "b": 2}, {"b": 2, "a": 1}, 1, "1", 1, [1], [1]])',
        context,
      ),
    ).to.deep.equal([{ a: 1, b: 2 }, 1, '1', [1]]);
  });

  it('runs $distinct in linear time', async () => {
    const started = Date.now();
    expect(await evaluateExpression('$count($distinct([1..100000]))', context)).to.equal(100000);
    // Linear takes tens of ms; quadratic would take minutes. The margin absorbs a loaded machine.
    expect(Date.now() - started).to.be.below(5000);
  });

  it('runs a regular expression with nested quantifiers in linear time (RE2)', async () => {
    const started = Date.now();
    expect(await evaluateExpression(`$contains('${'a'.repeat(50_000)}!', /^(a|a)*$/)`, context)).to.equal(
      false,
    );
    expect(await evaluateExpression(`$match('${'a'.repeat(40)}!', /(a+)+$/)`, context)).to.equal(undefined);
    expect(Date.now() - started).to.be.below(2000);
  });

  it('refuses regular expressions RE2 cannot run, when compiled and when evaluated', async () => {
    for (const pattern of ['/(a)\\1/', '/a(?=b)/', '/(?<!a)b/'])
      expect(() => compileExpression(`$match('ab', ${pattern})`), pattern).to.throw(
        ExpressionError,
        /linear time/,
      );
    const error = await failure(`$eval("$match('aa', /(a)\\\\1/)")`);
    expect(error.code).to.equal('unsafe_regex');
  });

  it('keeps what JSONata users expect of $match, $replace, $split and $contains', async () => {
    expect(await evaluateExpression("$match('ab12cd345', /[0-9]+/)", context)).to.deep.equal([
      { match: '12', index: 2, groups: [] },
      { match: '345', index: 6, groups: [] },
    ]);
    expect(await evaluateExpression("$replace('John Smith', /(\\w+)\\s(\\w+)/, '$2, $1')", context)).to.equal(
      'Smith, John',
    );
    expect(await evaluateExpression("$split('a1b22c', /[0-9]+/)", context)).to.deep.equal(['a', 'b', 'c']);
    expect(await evaluateExpression("$contains('Hello', /^h/i)", context)).to.equal(true);
    expect(await evaluateExpression("$match('😀ab', /b/).index", context)).to.equal(3);
  });

  it('refuses template text that grows past the limit', async () => {
    try {
      await resolveTemplates("{{ $pad('', 1500000) }}{{ $pad('', 1500000) }}", context);
      expect.fail('should have thrown');
    } catch (error) {
      expect((error as ExpressionError).code).to.equal('too_large');
      expect((error as ExpressionError).message).to.match(/template text grew to 3000000 characters/);
    }
  });
});

describe('step data size', () => {
  it('counts JSON in UTF-8 bytes, as Temporal stores it', () => {
    expect(jsonByteLength({ a: 'x' })).to.equal(9);
    expect(jsonByteLength('é')).to.equal(4);
    expect(jsonByteLength('😀')).to.equal(6);
    expect(jsonByteLength('\u0000')).to.equal(8);
    expect(jsonByteLength(undefined)).to.equal(0);
  });

  it('keeps a step record (input and output) below Temporal’s 2 MiB payload limit', () => {
    expect(MAX_STEP_INPUT_BYTES + MAX_STEP_OUTPUT_BYTES).to.be.below(1.9 * 1024 * 1024);
    expect(stepDataProblem({ a: 'x'.repeat(MAX_STEP_OUTPUT_BYTES) }, MAX_STEP_OUTPUT_BYTES)).to.match(
      /bytes as JSON, more than the limit/,
    );
    expect(stepDataProblem({ a: 'x' }, MAX_STEP_INPUT_BYTES)).to.equal(undefined);
  });

  it('refuses step data nested deeper than the limit, without recursing', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(stepDataProblem(deep, MAX_STEP_OUTPUT_BYTES)).to.equal('is nested deeper than 256 levels');
    expect(nestedDeeperThan([[1]], 2)).to.equal(false);
    expect(nestedDeeperThan([[[1]]], 2)).to.equal(true);
  });
});
