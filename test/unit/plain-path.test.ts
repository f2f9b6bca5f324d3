import { expect } from 'chai';
import { promiseHooks } from 'node:v8';
import { evaluateExpression, evaluateWithJsonata } from '../../core/expressions/evaluate';
import { DEFAULT_LIMITS, EvaluationBudget, type EvaluationLimits } from '../../core/expressions/limits';
import { readPlainPath } from '../../core/expressions/plain-path';
import { resolveTemplates, type Evaluate } from '../../core/expressions/templates';
import { EvaluationTurns } from '../../core/expressions/turns';

const context = {
  input: {
    customer: 'Ada',
    seats: 12,
    ratio: -0.25,
    active: false,
    none: null,
    empty: '',
    list: [1, 2],
    nested: { a: { b: { c: 'deep' } } },
    _under: 'score',
    'with-dash': 'dash',
  },
  steps: { route: { output: { tier: 'gold' }, status: 'success' } },
  execution: { id: 'ex_1', workflow: 'onboarding', version: 3 },
};

/** The message a promise rejects with (fails the test when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return (error as Error).message;
  }
  return expect.fail('should have been refused');
}

/** Budgets as a step's evaluations leave them: fresh, and part-way through. */
const BUDGETS: [number, number][] = [
  [0, 0],
  [17, 400],
  [1000, 12_345],
];

function budgetAt(steps: number, work: number): EvaluationBudget {
  const budget = new EvaluationBudget();
  budget.steps = steps;
  budget.work = work;
  return budget;
}

/** JSONata's answer and charges, and the plain path's (undefined when it leaves the expression to JSONata). */
async function both(
  expression: string,
  steps: number,
  work: number,
  limits: EvaluationLimits = DEFAULT_LIMITS,
) {
  const jsonataBudget = budgetAt(steps, work);
  const jsonata = await evaluateWithJsonata(expression, context, limits, jsonataBudget);
  const plainBudget = budgetAt(steps, work);
  const plain = readPlainPath(expression, context, limits, plainBudget);
  return { jsonata, jsonataBudget, plain, plainBudget };
}

describe('plain paths without JSONata', () => {
  const readable = [
    'input.customer',
    'input.seats',
    'input.ratio',
    'input.active',
    'input.none',
    'input.empty',
    'input.nested.a.b.c',
    'input._under',
    'steps.route.output.tier',
    'steps.route.status',
    'execution.version',
  ];
  for (const expression of readable) {
    it(`reads ${expression} as JSONata does, charging the same steps and work`, async () => {
      for (const [steps, work] of BUDGETS) {
        const { jsonata, jsonataBudget, plain, plainBudget } = await both(expression, steps, work);
        expect(plain, `${expression} at ${steps} steps`).to.deep.equal({ value: jsonata });
        expect([plainBudget.steps, plainBudget.work]).to.deep.equal([
          jsonataBudget.steps,
          jsonataBudget.work,
        ]);
      }
    });
  }

  const leftToJsonata = {
    'an array on the way': 'input.list.x',
    'an array at the end': 'input.list',
    'an object at the end': 'steps.route.output',
    'a missing key': 'input.missing',
    'a key past a string': 'input.customer.length',
    'an inherited key': 'input.constructor',
    'a literal': 'true',
    'an operator spelled as a name': 'input.and',
    'a variable': '$.input.customer',
    'a quoted name': 'input.`with-dash`',
    spaces: 'input . customer',
    'a comparison': "input.customer = 'Ada'",
  };
  for (const [what, expression] of Object.entries(leftToJsonata)) {
    it(`leaves ${what} to JSONata, charging nothing (${expression})`, async () => {
      const budget = budgetAt(5, 5);
      expect(readPlainPath(expression, context, DEFAULT_LIMITS, budget)).to.equal(undefined);
      expect([budget.steps, budget.work]).to.deep.equal([5, 5]);
    });
  }

  it('reads a `__proto__` key the data holds as its own, and never reaches Object.prototype', async () => {
    const hostile = { input: JSON.parse('{"__proto__": "own", "plain": {}}') as unknown };
    const own = readPlainPath('input.__proto__', hostile, DEFAULT_LIMITS, new EvaluationBudget());
    const jsonata = await evaluateWithJsonata(
      'input.__proto__',
      hostile,
      DEFAULT_LIMITS,
      new EvaluationBudget(),
    );
    expect(own).to.deep.equal({ value: 'own' });
    expect(jsonata).to.equal('own');
    // An object without its own `__proto__` key: left to JSONata, whose answer is no value.
    expect(readPlainPath('input.plain.__proto__', hostile, DEFAULT_LIMITS, new EvaluationBudget())).to.equal(
      undefined,
    );
    expect(await evaluateExpression('input.plain.__proto__', hostile)).to.equal(undefined);
  });

  it('leaves a string longer than the value limit to JSONata, which refuses it', async () => {
    const limits = { ...DEFAULT_LIMITS, maxValueSize: 2 };
    expect(readPlainPath('input.customer', context, limits, new EvaluationBudget())).to.equal(undefined);
    expect(await rejection(evaluateExpression('input.customer', context, limits))).to.match(/limit of 2/);
  });

  it('leaves the steps that would pass the step limit to JSONata, which fails at the same count', async () => {
    const limits = { ...DEFAULT_LIMITS, maxSteps: 100 };
    expect(readPlainPath('input.customer', context, limits, budgetAt(98, 0))).to.equal(undefined);
    expect(await rejection(evaluateExpression('input.customer', context, limits, budgetAt(98, 0)))).to.match(
      /exceeded 100 steps/,
    );
    // Three steps from 97 end at 100: within the limit, read at once.
    const budget = budgetAt(97, 0);
    expect(readPlainPath('input.customer', context, limits, budget)).to.deep.equal({ value: 'Ada' });
    expect(budget.steps).to.equal(100);
  });

  it('leaves the work that would pass the work limit to JSONata', () => {
    const limits = { ...DEFAULT_LIMITS, maxWork: 10 };
    expect(readPlainPath('input.customer', context, limits, budgetAt(0, 10))).to.equal(undefined);
  });

  it('leaves the steps at which the clock is read to JSONata (every 256th)', () => {
    const budget = budgetAt(254, 0);
    expect(readPlainPath('input.customer', context, DEFAULT_LIMITS, budget)).to.equal(undefined);
    expect(budget.steps).to.equal(254);
  });

  it('leaves the steps at which a pausing budget pauses to JSONata, which pauses there', async () => {
    const thread = { every: 10, turns: new EvaluationTurns((run) => setImmediate(run)) };
    const pausing = new EvaluationBudget(thread);
    pausing.steps = 8;
    expect(readPlainPath('input.customer', context, DEFAULT_LIMITS, pausing)).to.equal(undefined);
    expect(pausing.steps).to.equal(8);
    pausing.steps = 10;
    expect(readPlainPath('input.customer', context, DEFAULT_LIMITS, pausing)).to.deep.equal({ value: 'Ada' });
    expect(pausing.steps).to.equal(13);
  });
});

describe('templates of plain paths', () => {
  it('resolves them without the evaluator, and other expressions with it', async () => {
    const asked: string[] = [];
    const evaluate: Evaluate = (expression, ctx, limits, budget) => {
      asked.push(expression);
      return evaluateExpression(expression, ctx, limits, budget);
    };
    const resolved = await resolveTemplates(
      {
        name: '{{ input.customer }}',
        line: 'Dear {{ input.customer }}, your tier is {{ steps.route.output.tier }}',
        seats: '{{ input.seats * 2 }}',
        after: ['{{ input.seats }}', 'seats: {{ input.seats + 1 }} of {{ input.seats }}'],
      },
      context,
      { evaluate },
    );
    expect(resolved).to.deep.equal({
      name: 'Ada',
      line: 'Dear Ada, your tier is gold',
      seats: 24,
      after: [12, 'seats: 13 of 12'],
    });
    expect(asked).to.deep.equal(['input.seats * 2', 'input.seats + 1']);
  });

  it('charges a shared budget in the order of the templates, as JSONata alone would', async () => {
    const configuration = ['{{ input.customer }}', '{{ input.seats + 1 }}', 'x {{ steps.route.status }} y'];
    const budget = new EvaluationBudget();
    await resolveTemplates(configuration, context, { budget });
    const jsonataOnly = new EvaluationBudget();
    const viaJsonata: Evaluate = (expression, ctx, _limits, b) =>
      evaluateWithJsonata(expression, ctx, DEFAULT_LIMITS, b ?? jsonataOnly);
    for (const text of configuration) {
      const expression = text.slice(text.indexOf('{{') + 2, text.indexOf('}}')).trim();
      await viaJsonata(expression, context, undefined, jsonataOnly);
    }
    expect([budget.steps, budget.work]).to.deep.equal([jsonataOnly.steps, jsonataOnly.work]);
  });

  it('makes no promise per template when every template is a plain path', async () => {
    const configuration = {
      method: 'POST',
      url: 'https://crm.example/customers',
      body: {
        name: '{{ input.customer }}',
        tier: '{{ steps.route.output.tier }}',
        seats: '{{ input.seats }}',
      },
      headers: ['x-tier: {{ steps.route.output.tier }}'],
    };
    let promises = 0;
    const stop = promiseHooks.onInit(() => {
      promises += 1;
    });
    let resolving: Promise<unknown>;
    try {
      resolving = resolveTemplates(configuration, context);
    } finally {
      stop();
    }
    expect(await resolving).to.deep.equal({
      method: 'POST',
      url: 'https://crm.example/customers',
      body: { name: 'Ada', tier: 'gold', seats: 12 },
      headers: ['x-tier: gold'],
    });
    // resolveTemplates' own promise: the walk itself made none.
    expect(promises).to.equal(1);
  });

  it('still fails a template text that grows past the limit', async () => {
    const refused = resolveTemplates('{{ input.customer }}{{ input.customer }}', context, {
      limits: { maxValueSize: 5 },
    });
    expect(await rejection(refused)).to.match(/grew to 6 characters/);
  });
});
