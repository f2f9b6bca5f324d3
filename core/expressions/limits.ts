import type { EvaluationTurns } from './turns';

/**
 * The limits of an expression evaluation (docs/definitions.md#limits): counts, sizes and a work budget, so
 * that no expression can loop, recurse or allocate without bound. The counts decide (the same definition
 * fails the same way however busy the machine is); a time limit backs them up.
 */
export interface EvaluationLimits {
  /** Maximum number of expression nodes evaluated. */
  maxSteps: number;
  /** Maximum nesting depth of evaluation (deep recursion). */
  maxDepth: number;
  /** Maximum length of a sequence or array (and key count of an object) built during evaluation. */
  maxSequence: number;
  /** Largest value built: characters of a string, or the estimated JSON size of an array or object. */
  maxValueSize: number;
  /**
   * Size-weighted work of one evaluation: characters and items created, serialized, compared or handed
   * to built-in functions. Bounds what a step count cannot: one step of `$pad` or `&` can cost millions.
   */
  maxWork: number;
  /**
   * Time one evaluation may spend evaluating, in ms, pauses left out (EvaluationBudget): a backstop
   * behind the counts above, which decide first.
   */
  maxActiveMs: number;
}

/** Largest string (characters) or JSON-ish value (estimated characters) an evaluation may build: 2 Mi. */
export const MAX_VALUE_SIZE = 2 * 1024 * 1024;
/** Work budget of one evaluation (see EvaluationLimits.maxWork): well under a second of CPU, tens of MB. */
export const MAX_EVALUATION_WORK = 20_000_000;

export const DEFAULT_LIMITS: EvaluationLimits = {
  maxSteps: 100_000,
  maxDepth: 1000,
  maxSequence: 100_000,
  maxValueSize: MAX_VALUE_SIZE,
  maxWork: MAX_EVALUATION_WORK,
  maxActiveMs: 1000,
};

/** How a thread's evaluations give way to each other and measure their time (platform/compute/evaluation.ts). */
export interface EvaluationThread {
  /** Evaluation steps between two pauses. */
  every: number;
  /** One evaluation's slice at a time, in turn (turns.ts). */
  turns: EvaluationTurns;
  /** The thread's CPU time in ms, where the platform can read it (see EvaluationBudget.elapsedMs). */
  cpuMs?: () => number;
}

/** Evaluation steps between two looks at the clock (reading it costs more than a step). */
const CLOCK_EVERY_STEPS = 256;
/**
 * Time an evaluation is measured on the wall clock before the thread's CPU time counts instead: reading
 * the CPU clock costs a few microseconds, as much as a short evaluation, so only long ones read it.
 */
const WALL_CLOCK_FOR_MS = 20;

/**
 * The steps, work and time evaluations have used: one per evaluation by default. A step shares one across
 * all its evaluations (`if`, rules, templates), so its limits hold for the step as a whole. Time counts
 * what the evaluations ran, without the pauses in which other work had the thread: on the wall clock for
 * the first WALL_CLOCK_FOR_MS, then as the thread's CPU time where the platform reads it, so that a
 * machine busy with other processes cannot make an evaluation look long.
 */
export class EvaluationBudget {
  steps = 0;
  work = 0;
  /** Time of the slices that ended. */
  private spentMs = 0;
  private wallStart: number | undefined;
  private cpuStart: number | undefined;
  private onCpuClock = false;

  constructor(private readonly thread?: EvaluationThread) {}

  /** Waits for the thread's turn, then counts time; evaluateExpression calls it before evaluating. */
  enter(): Promise<void> | undefined {
    const turn = this.thread?.turns.take();
    if (turn === undefined) {
      this.start();
      return undefined;
    }
    return turn.then(() => this.start());
  }

  /** Stops counting time and gives the thread's turn to the next evaluation; once per enter(). */
  leave(): void {
    this.stop();
    this.thread?.turns.release();
  }

  /** Time spent evaluating so far, in ms. */
  elapsedMs(): number {
    if (this.onCpuClock)
      return this.spentMs + (this.cpuStart === undefined ? 0 : this.thread!.cpuMs!() - this.cpuStart);
    const elapsed = this.spentMs + (this.wallStart === undefined ? 0 : performance.now() - this.wallStart);
    if (elapsed > WALL_CLOCK_FOR_MS && this.thread?.cpuMs) {
      const running = this.wallStart !== undefined;
      this.stop();
      this.onCpuClock = true;
      if (running) this.start();
    }
    return elapsed;
  }

  /**
   * Counts `count` steps taken without JSONata (plain-path.ts) when none of them would look at the clock,
   * pause or pass `maxSteps`; otherwise counts nothing and returns false, and JSONata takes them instead.
   */
  takeQuietSteps(count: number, maxSteps: number): boolean {
    const last = this.steps + count;
    if (last > maxSteps) return false;
    for (let steps = this.steps + 1; steps <= last; steps++) {
      if (this.clockDue(steps) || (this.thread && steps % this.thread.every === 0)) return false;
    }
    this.steps = last;
    return true;
  }

  /** Whether to look at the clock at this step count. */
  clockDue(steps: number): boolean {
    return steps % CLOCK_EVERY_STEPS === 0;
  }

  /**
   * A pause when one is due at this step count, so that one evaluation cannot hold the event loop: the
   * evaluation goes on in a later turn, after the others waiting (turns.ts).
   */
  pauseAt(steps: number): Promise<void> | undefined {
    if (!this.thread || steps % this.thread.every !== 0) return undefined;
    this.stop();
    return this.thread.turns.pass().then(() => this.start());
  }

  private start(): void {
    if (this.onCpuClock) this.cpuStart = this.thread!.cpuMs!();
    else this.wallStart = performance.now();
  }

  private stop(): void {
    if (this.cpuStart !== undefined) this.spentMs += this.thread!.cpuMs!() - this.cpuStart;
    else if (this.wallStart !== undefined) this.spentMs += performance.now() - this.wallStart;
    this.cpuStart = undefined;
    this.wallStart = undefined;
  }
}
