import { expect } from 'chai';
import type { ExpressionError } from '../../core/expressions/errors';
import { evaluateExpression } from '../../core/expressions/evaluate';
import { EvaluationBudget, type EvaluationThread } from '../../core/expressions/limits';
import { EvaluationTurns } from '../../core/expressions/turns';
import { threadCpuClock } from '../../platform/compute/thread-cpu';

/** Runs 3,000 evaluation steps or so before it returns true. */
const LONG = '($f := function($x){ $x >= 300 ? true : $f($x + 1) }; $f(0))';

describe('evaluations on one thread', () => {
  /** A thread whose turns note which budgets ran between two hand-overs. */
  function observedThread(budgets: EvaluationBudget[], every = 200) {
    const slices: number[][] = [];
    let last: number[] = [];
    const thread: EvaluationThread = {
      every,
      turns: new EvaluationTurns((run) => {
        const now = budgets.map((budget) => budget.steps);
        slices.push(now.map((steps, i) => i).filter((i) => now[i] !== (last[i] ?? 0)));
        last = now;
        setImmediate(run);
      }),
    };
    return { thread, slices };
  }

  it('run one slice at a time: evaluations started together never interleave', async () => {
    const budgets: EvaluationBudget[] = [];
    const { thread, slices } = observedThread(budgets);
    for (let i = 0; i < 4; i++) budgets.push(new EvaluationBudget(thread));
    const results = await Promise.all(budgets.map((budget) => evaluateExpression(LONG, {}, {}, budget)));
    expect(results).to.deep.equal([true, true, true, true]);
    expect(slices.length, 'hand-overs').to.be.greaterThan(4 * 10);
    for (const [i, ran] of slices.entries())
      expect(ran.length, `evaluations that ran before hand-over ${i}: ${ran.join(', ')}`).to.be.at.most(1);
  });

  it('let the event loop serve other work between two slices', async () => {
    const budgets: EvaluationBudget[] = [];
    const { thread } = observedThread(budgets);
    for (let i = 0; i < 4; i++) budgets.push(new EvaluationBudget(thread));
    const evaluations = Promise.all(budgets.map((budget) => evaluateExpression(LONG, {}, {}, budget)));
    const stepsWhenServed = await new Promise<number>((resolve) =>
      setTimeout(() => resolve(budgets.reduce((sum, budget) => sum + budget.steps, 0)), 0),
    );
    await evaluations;
    const total = budgets.reduce((sum, budget) => sum + budget.steps, 0);
    expect(stepsWhenServed, 'steps evaluated when a timer of 0 ms fired').to.be.below(total / 4);
  });

  it('hand on at once when an evaluation ends: short ones started together end in the same turn', async () => {
    const thread: EvaluationThread = { every: 200, turns: new EvaluationTurns((run) => setImmediate(run)) };
    let nextTurn = false;
    setImmediate(() => (nextTurn = true));
    const ended: boolean[] = [];
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        evaluateExpression(`${i} + 1`, {}, {}, new EvaluationBudget(thread)).then(() => ended.push(nextTurn)),
      ),
    );
    expect(ended, 'whether the next turn of the event loop had come when each ended').to.deep.equal(
      Array(10).fill(false),
    );
  });

  it('give the thread on after an evaluation fails', async () => {
    const thread: EvaluationThread = { every: 200, turns: new EvaluationTurns((run) => setImmediate(run)) };
    const failing = evaluateExpression(LONG, {}, { maxSteps: 500 }, new EvaluationBudget(thread));
    const next = evaluateExpression(LONG, {}, {}, new EvaluationBudget(thread));
    const error = await failing.then(
      () => undefined,
      (e: unknown) => e as ExpressionError,
    );
    expect(error?.code).to.equal('budget');
    expect(await next).to.equal(true);
    expect(await evaluateExpression('1 + 1', {}, {}, new EvaluationBudget(thread))).to.equal(2);
  });

  it('count the thread`s CPU time, not the wall clock, once an evaluation has run long', () => {
    let wall = 0;
    let cpu = 0;
    const realNow = performance.now.bind(performance);
    performance.now = () => wall;
    try {
      const thread: EvaluationThread = {
        every: 200,
        turns: new EvaluationTurns((run) => setImmediate(run)),
        cpuMs: () => cpu,
      };
      const budget = new EvaluationBudget(thread);
      void budget.enter();
      wall += 30;
      cpu += 30;
      expect(budget.elapsedMs()).to.equal(30);
      // The machine is busy with other processes: two seconds pass, the thread ran for 100 ms of them.
      wall += 2000;
      cpu += 100;
      expect(budget.elapsedMs()).to.equal(130);
      budget.leave();
    } finally {
      performance.now = realNow;
    }
  });

  it('count the wall clock where the platform has no CPU clock', () => {
    let wall = 0;
    const realNow = performance.now.bind(performance);
    performance.now = () => wall;
    try {
      const budget = new EvaluationBudget({
        every: 200,
        turns: new EvaluationTurns((run) => setImmediate(run)),
      });
      void budget.enter();
      wall += 2030;
      expect(budget.elapsedMs()).to.equal(2030);
      budget.leave();
    } finally {
      performance.now = realNow;
    }
  });

  it('read this thread`s CPU time on Linux, which a sleeping thread does not use', async function () {
    const clock = threadCpuClock();
    if (process.platform !== 'linux') this.skip();
    expect(clock, 'a CPU clock on Linux').to.be.a('function');
    const before = clock!();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const slept = clock!() - before;
    const started = clock!();
    const until = Date.now() + 300;
    while (Date.now() < until);
    const busy = clock!() - started;
    expect(slept, 'CPU ms while sleeping 200 ms').to.be.below(20);
    // Even on a machine busy with other processes, a thread busy for 300 ms gets some of them.
    expect(busy, 'CPU ms while busy for 300 ms').to.be.above(20);
  });
});
