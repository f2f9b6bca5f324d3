/**
 * The state the execution workflow's interpreter passes around: the run (one per execution) and the frame
 * of the step list being run (one per container run: a branch, an item, a case, an iteration).
 * Deterministic code only; types and small helpers shared by the interpreter and the container modules.
 */
import type { ContainerStep, Step } from '../../core/definitions/schema';
import type { ExecutionError } from '../../core/error-detail';
import type {
  ApprovalDecision,
  ControlResult,
  ExpressionContext,
  KeptRuns,
  RunPath,
} from '../../core/execution-types';
import type { EventKind } from '../../core/event-types';
import type { Admission } from './admission';

/** One run's state, passed explicitly to every helper. */
export interface Run {
  workspaceId: string;
  workflow: { id: string; version: number };
  /** The trigger's input and the execution, as every expression sees them. */
  context: Pick<ExpressionContext, 'input' | 'execution'>;
  /** Approval steps waiting for a decision, by waitKey(); the decision once it came. */
  waiting: Map<string, ApprovalDecision | undefined>;
  /** Sleep and wait_for_event steps waiting now (sleep.ts, event-wait.ts). */
  sleeping: number;
  /** Events that woke a wait_for_event, by the step's key (EVENT_WOKE_SIGNAL): the event's id. */
  eventWakes: Map<string, string>;
  /** The workspace's subscribed event kinds as the last batch reported them, and in which workflow task. */
  subscribed?: { kinds: EventKind[]; task: number };
  /** Bytes of local activity results in the current workflow task (see TASK_RESULT_BYTES). */
  taskBytes: { task: number; bytes: number };
  /** The worker encrypts payloads: the failure's message stays in its details (StepBatchResult.encrypted). */
  encrypted?: boolean;
  /** How deep this execution is among children (0: not a child). */
  depth: number;
  /** Emits an execution event about this run (execution.ts). */
  /** No promise when nobody subscribes to the event. */
  emit(event: EventKind, status: string): Promise<unknown> | undefined;
  /** A retry: the runs of the failed top-level container that it keeps (ResumePoint.kept). */
  kept?: KeptRuns;
  /** The run's flow control gates, when its top-level batches pass them and give back what it holds. */
  admission?: Admission;
}

/**
 * What a retry keeps of container `stepId` in `frame`: its branches or items that succeeded in the failed
 * run, by run key. Only for the top-level container the retry starts from; anything else runs whole.
 */
export function keptRunsOf(run: Run, frame: Frame, stepId: string): KeptRuns | undefined {
  return frame.path.length === 0 && run.kept?.step === stepId ? run.kept : undefined;
}

/** A step list being run: where it is, and what its expressions can read. */
export interface Frame {
  /** The containers around it with their run keys (empty at the top level). */
  path: RunPath;
  /** Names the containers around it add to the context: a map's item and `index`, a loop's `iteration`. */
  scope: Record<string, unknown>;
  /** The steps it can read: those that ran before its container, and its own as they run. */
  steps: ExpressionContext['steps'];
  /** Set when a sibling run failed (or said stop): this list starts no further step. */
  halt: Halt;
}

/**
 * A container's stop signal to its runs: once a branch or an item fails past what the container tolerates,
 * the others start no further step (and an approval among them stops waiting), while what is in flight
 * finishes. Not a cancellation scope: canceling local activities in the workflow task that completes
 * another one trips the SDK's state machine (a nondeterminism error), and a run's steps are short.
 * A halt holds for the containers inside too.
 */
export class Halt {
  private own = false;
  constructor(private readonly outer?: Halt) {}
  get stopped(): boolean {
    return this.own || (this.outer?.stopped ?? false);
  }
  stop(): void {
    this.own = true;
  }
}

/** Thrown in a run that its container halted: not a failure of its own. */
export class Halted extends Error {
  constructor() {
    super('Halted: another run of the container failed');
  }
}

/** What a step list leaves behind: the output of its last step that ran (not skipped), if any ran. */
export interface ListOutcome {
  ran: boolean;
  output: unknown;
}

/** A step failed: the run fails with its error (unless a container tolerates it). */
export class StepFailure extends Error {
  constructor(readonly error: ExecutionError) {
    super(error.message);
  }
}

/** A rules step said `stop`: the execution ends with success, whatever container it is in. */
export class ExecutionStop extends Error {
  constructor(readonly stepId: string) {
    super(`Stopped at step "${stepId}"`);
  }
}

export function topFrame(steps: ExpressionContext['steps'] = {}): Frame {
  return { path: [], scope: {}, steps, halt: new Halt() };
}

/**
 * The frame of one run of a container: its path gains the container and the run key, it sees what the
 * container's frame saw, and its own steps stay its own.
 */
export function childFrame(
  frame: Frame,
  containerId: string,
  key: string,
  scope: Record<string, unknown> = {},
  halt: Halt = frame.halt,
): Frame {
  return {
    path: [...frame.path, containerId, key],
    scope: { ...frame.scope, ...scope },
    steps: { ...frame.steps },
    halt,
  };
}

/** The context a frame's expressions read. */
export function frameContext(run: Run, frame: Frame): ExpressionContext {
  return { ...frame.scope, input: run.context.input, execution: run.context.execution, steps: frame.steps };
}

/** The error's path: the containers around the step, then the step. */
export function errorPath(frame: Frame, stepId: string): string[] {
  return [...frame.path, stepId];
}

/** Identifies a waiting approval: its run path and its step. */
export function waitKey(path: RunPath, stepId: string): string {
  return [...path, stepId].join('/');
}

export { runKeyOf } from '../../core/execution-types';

/** What a container module needs from the interpreter (interpreter.ts), without importing it. */
export interface Runner {
  run: Run;
  /** Runs a step list in `frame`, step after step. */
  runList(frame: Frame, steps: Step[]): Promise<ListOutcome>;
  /** Evaluates a container's control expressions (`enter`: its if, items or case; `until`: a loop's end). */
  control(frame: Frame, step: ContainerStep, purpose: 'enter' | 'until'): Promise<ControlResult>;
}
