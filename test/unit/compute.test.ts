/** The compute threads (platform/compute/): a time limit that kills, turns taken per workspace, bounded caches. */
import { expect } from 'chai';
import { CompiledSchemas } from '../../core/definitions/input-schema';
import { FairQueue } from '../../platform/compute/fair-queue';
import { ComputeLimitError, ComputePool } from '../../platform/compute/pool';

/** An expression evaluated on one of `pool`'s threads, with limits that only the pool's time limit reaches. */
function evaluateOn(pool: ComputePool, expression: string) {
  return pool.run('ws', {
    kind: 'evaluate',
    expression,
    context: {},
    limits: {
      maxSteps: 1e9,
      maxDepth: 1000,
      maxSequence: 1e6,
      maxValueSize: 1e7,
      maxWork: 1e12,
      maxActiveMs: 60_000,
    },
    used: { steps: 0, work: 0 },
  });
}

describe('compute threads', () => {
  it('serves the lines of several keys in turn, each in its order', async () => {
    const queue = new FairQueue(1);
    const order: string[] = [];
    const job = (name: string) => () => {
      order.push(name);
      return Promise.resolve();
    };
    await Promise.all([
      queue.run('a', job('a1')),
      queue.run('a', job('a2')),
      queue.run('a', job('a3')),
      queue.run('b', job('b1')),
      queue.run('c', job('c1')),
      queue.run('b', job('b2')),
    ]);
    // a1 starts at once; then the lines take turns in the order they formed: a, b, c.
    expect(order).to.deep.equal(['a1', 'a2', 'b1', 'c1', 'a3', 'b2']);
  });

  describe('the pool', () => {
    const pool = new ComputePool({ threads: 1, timeLimitsMs: { evaluate: 300 } });
    after(() => pool.close());

    const evaluate = (expression: string) => evaluateOn(pool, expression);

    it('evaluates an expression on a thread', async () => {
      expect((await evaluate('1 + 1')).value).to.equal(2);
    });

    it('kills a task past its time limit, and runs the next on a new thread', async () => {
      const error = await evaluate('($f := function($x){ $f($x + 1) }; $f(0))').catch((e: unknown) => e);
      expect(error).to.be.instanceOf(ComputeLimitError);
      expect((error as ComputeLimitError).limit).to.equal('time');
      expect((await evaluate('"still here"')).value).to.equal('still here');
    });

    it('counts the time the thread ran the task, not the time this process took to read its answer', async function () {
      if (process.platform !== 'linux') this.skip();
      await evaluate('"warm"');
      const answer = evaluate('1 + 2');
      // Once the task is posted (a turn of the event loop), the thread answers within milliseconds; this
      // event loop is busy for longer than the limit (300 ms), so the limit's timer and the answer are
      // both due when it is free again.
      await new Promise((resolve) => setImmediate(resolve));
      const until = Date.now() + 600;
      while (Date.now() < until);
      expect((await answer).value).to.equal(3);
    });
  });

  it('runs a task on a new thread once the idle threads have stopped (none is given to a stopped one)', async () => {
    const pool = new ComputePool({ threads: 1, idleMs: 50, timeLimitsMs: { evaluate: 300 } });
    const evaluate = (expression: string) => evaluateOn(pool, expression);
    try {
      expect((await evaluate('"first"')).value).to.equal('first');
      // Its thread stops after 50 ms idle; a stopped thread given the next task would never answer, and
      // the task would fail with ComputeLimitError once its time limit's wall-clock backstop passed.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await evaluate('"after the idle time"')).value).to.equal('after the idle time');
    } finally {
      await pool.close();
    }
  });

  it('keeps compiled schemas within their bounds, whatever their number', () => {
    const cache = new CompiledSchemas({ maxEntries: 50, maxBytes: 400_000 });
    for (let n = 0; n < 1000; n++) {
      const schema = {
        type: 'object',
        properties: Object.fromEntries(
          Array.from({ length: 5 }, (_, k) => [`f_${n}_${k}`, { type: 'string' }]),
        ),
      };
      cache.get(`ws-${n % 7}`, schema);
      expect(cache.size).to.be.at.most(50);
      expect(cache.bytes).to.be.at.most(400_000);
    }
  });
});
