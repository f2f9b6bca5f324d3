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
  /** Wall-clock limit in ms; only meaningful outside workflow code. */
  timeoutMs?: number;
}

/** Largest string (characters) or JSON-ish value (estimated characters) an evaluation may build: 2 Mi. */
export const MAX_VALUE_SIZE = 2 * 1024 * 1024;
/** Work budget of one evaluation (see EvaluationLimits.maxWork): well under a second of CPU, tens of MB. */
export const MAX_EVALUATION_WORK = 20_000_000;

export const DEFAULT_LIMITS: EvaluationLimits = {
  maxSteps: 100_000,
  maxDepth: 300,
  maxSequence: 100_000,
  maxValueSize: MAX_VALUE_SIZE,
  maxWork: MAX_EVALUATION_WORK,
};

/** How a long evaluation gives way: `pause()` is awaited every `every` evaluation steps. */
export interface Pauser {
  every: number;
  pause: () => Promise<void>;
}

/**
 * The steps and work evaluations have used: one per evaluation by default. A step shares one across
 * all its evaluations (`if`, rules, templates), so its limits hold for the step as a whole.
 */
export class EvaluationBudget {
  steps = 0;
  work = 0;

  constructor(private readonly pauser?: Pauser) {}

  reset(): void {
    this.steps = 0;
    this.work = 0;
  }

  /** A pause when one is due at this step count, so that one evaluation cannot hold the event loop. */
  pauseAt(steps: number): Promise<void> | undefined {
    return this.pauser && steps % this.pauser.every === 0 ? this.pauser.pause() : undefined;
  }
}
