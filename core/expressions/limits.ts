/**
 * The limits of an expression evaluation (docs/definitions.md#limits): counts, sizes and a work budget, so
 * that no expression can loop, recurse or allocate without bound. Deterministic: counts, never clocks.
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

/** How a long evaluation gives way: `pause()` is awaited every `every` evaluation steps. */
export interface Pauser {
  every: number;
  pause: () => Promise<void>;
}

/** Evaluation steps between two looks at the clock (reading it costs more than a step). */
const CLOCK_EVERY_STEPS = 256;

/**
 * The steps, work and time evaluations have used: one per evaluation by default. A step shares one across
 * all its evaluations (`if`, rules, templates), so its limits hold for the step as a whole. Time counts
 * from `start()` and leaves out the pauses, when other work had the thread.
 */
export class EvaluationBudget {
  steps = 0;
  work = 0;
  private activeMs = 0;
  private sliceStart: number | undefined;

  constructor(private readonly pauser?: Pauser) {}

  /** Starts (or goes on) counting time; evaluateExpression calls it. */
  start(): void {
    this.sliceStart ??= performance.now();
  }

  /** Stops counting time until the next start(). */
  stop(): void {
    if (this.sliceStart !== undefined) this.activeMs += performance.now() - this.sliceStart;
    this.sliceStart = undefined;
  }

  /** Time spent evaluating so far, in ms. */
  elapsedMs(): number {
    return this.activeMs + (this.sliceStart === undefined ? 0 : performance.now() - this.sliceStart);
  }

  /** Whether to look at the clock at this step count. */
  clockDue(steps: number): boolean {
    return steps % CLOCK_EVERY_STEPS === 0;
  }

  /** A pause when one is due at this step count, so that one evaluation cannot hold the event loop. */
  pauseAt(steps: number): Promise<void> | undefined {
    if (!this.pauser || steps % this.pauser.every !== 0) return undefined;
    this.stop();
    return this.pauser.pause().then(() => this.start());
  }
}
