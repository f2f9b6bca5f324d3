/**
 * Step lists as the API shows them (docs/api.md#steps-that-hold-steps): the definition's own list, and
 * recursively each run of a container (a parallel branch, a map item, the switch case taken, a loop
 * iteration). Leaf steps come from their records (step-views.ts). A container records nothing of its own:
 * what it shows is read from the `evaluate_control` result of its entry (its start, a skip, a failure on
 * entry, a map's items, a switch's case) and of each loop iteration's `until`, and from its runs' steps;
 * its output is recomputed from them as the workflow computed it (core/container-outputs.ts).
 */
import type { ContainerStep, Step, WorkflowStep } from '../../core/definitions/schema';
import { isLeafStep } from '../../core/definitions/step-kinds';
import {
  STEP_ERROR_CODES,
  type ControlResult,
  type ExpressionContext,
  type MapChunkResult,
  type RunPath,
} from '../../core/execution-types';
import { loopOutput, parallelOutput, switchOutput, toleratedFailures } from '../../core/container-outputs';
import { emptyStep, failureAt, stepKey, stepView, withDuration, type LeafSources } from './step-views';
import { durationMs, type RunStatus, type RunView, type StepView } from './views';

/** What `evaluate_control` answered about one container in one run: its entry, each iteration's `until`. */
export interface ContainerControls {
  enter?: ControlResult;
  /** A loop's `until` results, by iteration. */
  until: ControlResult[];
}

/** The child execution a workflow step started (its StartChildWorkflowExecutionInitiated event and end). */
export interface ChildRun {
  executionId: string;
  initiatedAt: Date;
  state: 'running' | 'success' | 'failed';
  finishedAt: Date | null;
  /** The child's own output, once it succeeded. */
  output: unknown;
}

/** One chunk of a large map (a map_chunk child workflow), as the execution's history shows it. */
export interface ChunkRun {
  first: number;
  count: number;
  state: 'running' | 'success' | 'failed' | 'canceled';
  initiatedAt: Date;
  finishedAt: Date | null;
  result?: MapChunkResult;
  /** The chunk's workflow id, and its run id once it started. */
  workflowId: string;
  runId?: string;
}

export interface ListSources extends LeafSources {
  /** A large map's chunks, by the map's step key. */
  chunks: Map<string, ChunkRun[]>;
  /** Child executions of workflow steps, by the step's key (its run path and its id). */
  children: Map<string, ChildRun>;
  /** By the container's step key (its run path and its id). */
  controls: Map<string, ContainerControls>;
  /** Run paths (joined by "/") under which something was recorded: those runs have started. */
  startedRuns: Set<string>;
  /**
   * A retry's kept runs (ResumePoint.kept): by the container's step key, its runs that succeeded in the
   * failed run, by run key, as reads showed them then. Shown unless this run ran them again.
   */
  kept: Map<string, Map<string, RunView>>;
}

/** A map runs this many items at once unless it says otherwise (workers/workflows/containers/map.ts). */
const DEFAULT_CONCURRENCY = 10;

/** Whether a run ended by itself (not canceled). */
const ended = (run: RunView) => run.status === 'success' || run.status === 'failed';

/** One step list being read: where it is, what its expressions saw, whether it has begun. */
interface ListFrame {
  path: RunPath;
  /** The context as the worker saw it, step by step (a rules step's input is derived from it). */
  context: ExpressionContext;
  /** False for a map item that has not started: it shows no step. */
  started: boolean;
}

export function topListFrame(context: ExpressionContext): ListFrame {
  return { path: [], context, started: true };
}

/** The views of a step list: the steps reached, in order, then what the run is doing or left undone. */
export function mapList(steps: Step[], frame: ListFrame, sources: ListSources): StepView[] {
  const { close } = sources;
  const views: StepView[] = [];
  // Whether some step is still open (waiting, retrying, a container running), or was when the run closed
  // (canceled): then the list is not inside a batch.
  let open = false;
  for (const step of steps) {
    const view = reachedView(step, frame, sources);
    if (!view) break;
    if (view.status === 'running' || view.status === 'waiting' || view.status === 'canceled') open = true;
    views.push(view);
    if (view.status === 'success' || view.status === 'skipped')
      frame.context.steps[step.id] = { status: view.status, output: view.output };
  }
  if (views.length === steps.length || !frame.started) return views;
  const nested = frame.path.length > 0;
  const next = steps[views.length]!;
  if (close?.status === 'success') {
    // After a rules `stop`: every step left was skipped.
    for (const step of steps.slice(views.length)) views.push(emptyStep(step, 'skipped'));
  } else if (
    !open &&
    !views.some((view) => view.status === 'failed' || (nested && view.status === 'canceled'))
  ) {
    // The list is inside the batch that starts here (or was, when the run closed); or a container there is
    // being entered.
    const failedHere = failureAt(close, stepKey(frame.path, next.id));
    const view = emptyStep(next, close ? (failedHere ? 'failed' : 'canceled') : 'running');
    view.started_at = sources.lastTaskStarted.toISOString();
    if (close) {
      view.finished_at = close.at.toISOString();
      if (failedHere) view.error = failedHere;
    }
    if (!isLeafStep(next)) Object.assign(view, { runs_total: 0, runs: [] });
    views.push(withDuration(view, sources.now));
  }
  return views;
}

/** A step's view once it was reached (has a record, or its container was entered); undefined before. */
function reachedView(step: Step, frame: ListFrame, sources: ListSources): StepView | undefined {
  const key = stepKey(frame.path, step.id);
  const record = sources.records.get(key);
  // A container's record: one carried over by a retry (ExecutionInput.resume).
  if (record) return stepView(step, key, record, frame.context, sources);
  if (isLeafStep(step)) return undefined;
  if (step.kind === 'workflow') return workflowStepView(step, key, sources);
  return containerView(step, frame, sources);
}

/**
 * A workflow step: entered (its `if`, an evaluate_control answer), then its child execution (found by the
 * parent link in the child's input): running while the child runs when it waits for it, success with the
 * child's output, failed with the run's error (child_failed, or a refusal before the start).
 */
function workflowStepView(step: WorkflowStep, key: string, sources: ListSources): StepView | undefined {
  const enter = sources.controls.get(key)?.enter;
  const child = sources.children.get(key);
  if (!enter && !child) return undefined;
  const view = emptyStep(step, 'running');
  if (enter?.skip) return { ...view, status: 'skipped' };
  view.started_at = enter?.at ?? child!.initiatedAt.toISOString();
  view.attempts = 1;
  const { close } = sources;
  const failedHere = failureAt(close, key);
  if (failedHere) {
    return withDuration(
      { ...view, status: 'failed', finished_at: close!.at.toISOString(), error: failedHere },
      sources.now,
    );
  }
  if (!child) {
    if (close) Object.assign(view, { status: 'canceled', finished_at: close.at.toISOString() });
    return withDuration(view, sources.now);
  }
  if (step.wait === false) {
    return withDuration(
      {
        ...view,
        status: 'success',
        finished_at: child.initiatedAt.toISOString(),
        output: { execution_id: child.executionId },
      },
      sources.now,
    );
  }
  if (child.state === 'success') {
    return withDuration(
      {
        ...view,
        status: 'success',
        finished_at: child.finishedAt!.toISOString(),
        output: { execution_id: child.executionId, status: 'success', output: child.output },
      },
      sources.now,
    );
  }
  // Still running, or ended otherwise while the run is open (its failure is about to close it).
  if (close) Object.assign(view, { status: 'canceled', finished_at: close.at.toISOString() });
  view.output = { execution_id: child.executionId };
  return withDuration(view, sources.now);
}

/** What a container ended with (or that it has not ended). */
interface Settled {
  status: 'running' | 'success' | 'failed';
  /** When it ended: its last run's end, or when it failed (null: when it was entered). */
  at?: string | null;
  error?: { code: string; message: string } | null;
}

function containerView(step: ContainerStep, frame: ListFrame, sources: ListSources): StepView | undefined {
  const key = stepKey(frame.path, step.id);
  const controls = sources.controls.get(key);
  const enter = controls?.enter;
  if (!controls || !enter) return undefined;
  const view: StepView = { ...emptyStep(step, 'running'), runs_total: 0, runs: [] };
  if (enter.skip) return { ...view, status: 'skipped' };
  view.started_at = enter.at;
  view.attempts = 1;
  let settled: Settled;
  if (enter.error) {
    settled = { status: 'failed', at: enter.at, error: enter.error };
  } else {
    view.runs = runsOf(step, frame, enter, controls, sources);
    settled = settle(step, view.runs, controls);
  }
  const { close } = sources;
  if (settled.status === 'running' && close) {
    // The run closed while the container still ran.
    const failedHere = failureAt(close, key);
    view.status = failedHere ? 'failed' : 'canceled';
    view.finished_at = close.at.toISOString();
    view.error = failedHere;
  } else {
    view.status = settled.status;
    if (settled.status !== 'running') view.finished_at = settled.at ?? enter.at;
    // The run's own error, when this container failed it, says it as the run does.
    if (settled.status === 'failed') view.error = failureWithin(close, key) ?? settled.error ?? null;
  }
  view.runs_total = view.runs!.length;
  if (view.status === 'success') view.output = outputOf(step, view.runs!, controls);
  else if (view.finished_at) for (const run of view.runs!) cancelRun(run, view.finished_at);
  return withDuration(view, sources.now);
}

/** The run's error when the step that failed it is this container or inside it. */
function failureWithin(close: ListSources['close'], key: string): { code: string; message: string } | null {
  const error = close?.error;
  if (!error?.path) return null;
  const at = error.path.join('/');
  return at === key || at.startsWith(`${key}/`) ? { code: error.code, message: error.message } : null;
}

/** The container's runs, in order: every one it has started or will start. */
function runsOf(
  step: ContainerStep,
  frame: ListFrame,
  enter: ControlResult,
  controls: ContainerControls,
  sources: ListSources,
): RunView[] {
  const run = (key: string, steps: Step[], scope: Record<string, unknown>, started?: boolean) =>
    runView(step.id, key, steps, frame, scope, sources, started);
  const kept = keptRunOf(step, frame, sources);
  switch (step.kind) {
    case 'parallel':
      return step.branches.map((branch) => kept(branch.id) ?? run(branch.id, branch.steps, {}, true));
    case 'switch': {
      const chosen = enter.case ?? null;
      if (chosen === null) return [];
      const steps = chosen === 'default' ? step.default : step.cases.find((c) => c.id === chosen)?.steps;
      return steps ? [run(chosen, steps, {}, true)] : [];
    }
    case 'loop': {
      // Each `until` that did not hold (nor fail) started one more iteration, up to max_iterations.
      const again = controls.until.filter((until) => until && !until.done && !until.error).length;
      const count = Math.min(again + 1, step.max_iterations);
      return Array.from({ length: count }, (_, i) => run(String(i), step.steps, { iteration: i }, true));
    }
    case 'map': {
      const chunks = sources.chunks.get(stepKey(frame.path, step.id));
      if (chunks) return chunkedMapRuns(step, enter.items ?? [], chunks, frame);
      return mapRuns(step, enter.items ?? [], run, kept, sources, frame.path);
    }
  }
}

/**
 * A run of `step` that a retry kept from the failed run, unless this run ran it again (an item whose value
 * changed: containers/map.ts).
 */
function keptRunOf(
  step: ContainerStep,
  frame: ListFrame,
  sources: ListSources,
): (key: string) => RunView | undefined {
  const kept = sources.kept.get(stepKey(frame.path, step.id));
  return (key) => {
    const view = kept?.get(key);
    return view && !sources.startedRuns.has([...frame.path, step.id, key].join('/')) ? view : undefined;
  };
}

/** Outputs of the items of chunked maps, whose steps are in the chunks' histories, not in this one. */
const chunkOutputs = new WeakMap<RunView, unknown>();

/** An item of a chunked map: the chunk whose history holds its steps, and how to show them from it. */
export interface ChunkItem {
  chunk: { workflowId: string; runId: string };
  /** Sets the run's steps from its chunk's history (read by chunk-steps.ts), if the item ran there. */
  fill(chunkSources: ListSources): void;
}

/** What an item run of a chunked map needs to show its steps later (ChunkItem.fill), kept per run. */
interface ChunkItemSource {
  chunk: { workflowId: string; runId: string };
  step: Extract<ContainerStep, { kind: 'map' }>;
  frame: ListFrame;
  /** The steps before the map, as the items' steps saw them. */
  before: ListFrame['context']['steps'];
  item: unknown;
  index: number;
}

const chunkItems = new WeakMap<RunView, ChunkItemSource>();

/** The chunk of a chunked map's item run (undefined for any other run). */
export function chunkItemOf(run: RunView): ChunkItem | undefined {
  const source = chunkItems.get(run);
  if (!source) return undefined;
  return {
    chunk: source.chunk,
    fill: (chunkSources) => {
      // An item the chunk kept from its previous run (a retry), or never reached, has no steps there.
      if (!chunkSources.startedRuns.has(run.path.join('/'))) return;
      const { step, frame, before, item, index } = source;
      const itemFrame: ListFrame = {
        path: run.path,
        context: { ...frame.context, [step.as ?? 'item']: item, index, steps: { ...before } },
        started: true,
      };
      run.steps = mapList(step.steps, itemFrame, chunkSources);
    },
  };
}

/** What every item of one chunk shares, worked out once per chunk rather than once per item. */
interface ChunkFacts {
  chunk: ChunkRun;
  startedAt: string;
  finishedAt: string | null;
  failed: ReadonlySet<number>;
  runId?: { workflowId: string; runId: string };
}

function chunkFacts(chunk: ChunkRun): ChunkFacts {
  return {
    chunk,
    startedAt: chunk.initiatedAt.toISOString(),
    finishedAt: chunk.finishedAt?.toISOString() ?? null,
    failed: new Set(chunk.result?.failures.map((failure) => failure.index)),
    ...(chunk.runId && { runId: { workflowId: chunk.workflowId, runId: chunk.runId } }),
  };
}

/**
 * A large map's items, from its chunks' results (workers/workflows/map-chunk.ts): each item's status,
 * output and error. Their steps ran in the chunks' own histories: a run shows them once its chunk's
 * history is read (chunkItemOf, chunk-steps.ts), which reads do for the runs they show. Every read of the
 * execution builds all of them (10,000 for the largest map), so this stays linear and allocates little.
 */
function chunkedMapRuns(
  step: Extract<ContainerStep, { kind: 'map' }>,
  items: unknown[],
  chunks: ChunkRun[],
  frame: ListFrame,
): RunView[] {
  // What the items' steps saw besides their item: the steps before the map.
  const before = { ...frame.context.steps };
  const byFirst = new Map<number, ChunkRun>();
  for (const chunk of chunks) if (!byFirst.has(chunk.first)) byFirst.set(chunk.first, chunk);
  const runs = new Array<RunView>(items.length);
  let facts: ChunkFacts | undefined;
  for (let index = 0; index < items.length; index++) {
    // Chunks hold consecutive items: the item after a chunk's last begins the next one (or none yet).
    if (!facts || index >= facts.chunk.first + facts.chunk.count) {
      const chunk = byFirst.get(index);
      facts = chunk ? chunkFacts(chunk) : undefined;
    }
    const run = chunkedItemRun([...frame.path, step.id, String(index)], index, facts);
    if (facts?.runId) {
      chunkItems.set(run, { chunk: facts.runId, step, frame, before, item: items[index], index });
    }
    runs[index] = run;
  }
  return runs;
}

/** Item `index` of a chunked map as its chunk's result tells it (no steps). */
function chunkedItemRun(path: RunPath, index: number, facts: ChunkFacts | undefined): RunView {
  const run: RunView = {
    key: path[path.length - 1]!,
    path,
    status: 'pending',
    started_at: null,
    finished_at: null,
    steps: [],
  };
  if (!facts) return run;
  const { chunk } = facts;
  run.started_at = facts.startedAt;
  if (chunk.state === 'running') {
    run.status = 'running';
    return run;
  }
  run.finished_at = facts.finishedAt;
  const result = chunk.result;
  if (!result) run.status = chunk.state === 'failed' ? 'failed' : 'canceled';
  else if (facts.failed.has(index)) run.status = 'failed';
  else if (index - chunk.first >= result.ran) Object.assign(run, { status: 'canceled', started_at: null });
  else {
    run.status = 'success';
    chunkOutputs.set(run, result.outputs[index - chunk.first] ?? null);
  }
  return run;
}

/**
 * A map's items. Items start in order, `concurrency` at once, and each one that ends starts the next: so
 * the first `concurrency` + (items ended) have started, even those whose first batch has not landed yet
 * (until a failure past the tolerated ones stops the map).
 */
function mapRuns(
  step: Extract<ContainerStep, { kind: 'map' }>,
  items: unknown[],
  run: (key: string, steps: Step[], scope: Record<string, unknown>, started?: boolean) => RunView,
  kept: (key: string) => RunView | undefined,
  sources: ListSources,
  path: RunPath,
): RunView[] {
  const name = step.as ?? 'item';
  const scope = (index: number) => ({ [name]: items[index], index });
  const recorded = (index: number) => sources.startedRuns.has([...path, step.id, String(index)].join('/'));
  const runs = items.map((_, index) =>
    recorded(index) ? run(String(index), step.steps, scope(index), true) : kept(String(index)),
  );
  const endedRuns = runs.filter((r): r is RunView => r !== undefined && ended(r));
  // The failure past the tolerated ones stops the map: from then on, no item starts.
  const allowed = toleratedFailures(step.tolerated_failures, items.length);
  const stop = byEnd(endedRuns.filter((r) => r.status === 'failed'))[allowed]?.finished_at;
  const freed = stop ? endedRuns.filter((r) => (r.finished_at ?? '') < stop).length : endedRuns.length;
  const startedCount = Math.min(items.length, (step.concurrency ?? DEFAULT_CONCURRENCY) + freed);
  return runs.map(
    (view, index) => view ?? run(String(index), step.steps, scope(index), index < startedCount),
  );
}

function runView(
  containerId: string,
  key: string,
  steps: Step[],
  parent: ListFrame,
  scope: Record<string, unknown>,
  sources: ListSources,
  started = true,
): RunView {
  const path = [...parent.path, containerId, key];
  const frame: ListFrame = {
    path,
    // The run sees what its container's list saw so far, and its own steps as they run.
    context: { ...parent.context, ...scope, steps: { ...parent.context.steps } },
    started,
  };
  const views = mapList(steps, frame, sources);
  const status = runStatus(views, views.length === steps.length, started);
  const over = status === 'success' || status === 'failed' || status === 'canceled';
  return {
    key,
    path,
    status,
    started_at: views.find((view) => view.started_at)?.started_at ?? null,
    finished_at: over ? latest(views.map((view) => view.finished_at)) : null,
    steps: views,
  };
}

function runStatus(views: StepView[], complete: boolean, started: boolean): RunStatus {
  if (!started && views.length === 0) return 'pending';
  const has = (status: StepView['status']) => views.some((view) => view.status === status);
  if (has('failed')) return 'failed';
  if (has('running')) return 'running';
  if (has('waiting')) return 'waiting';
  if (has('canceled')) return 'canceled';
  return complete ? 'success' : 'running';
}

/** The latest of ISO timestamps (null when there is none). */
function latest(times: (string | null)[]): string | null {
  let last: string | null = null;
  for (const time of times) if (time && (!last || time > last)) last = time;
  return last;
}

/** Whether the container ended, and how, from its runs (and a loop's `until`s), as the workflow decides it. */
function settle(step: ContainerStep, runs: RunView[], controls: ContainerControls): Settled {
  const lastEnd = () => latest(runs.map((run) => run.finished_at));
  switch (step.kind) {
    case 'parallel': {
      const failing = runs.filter(
        (run, i) => run.status === 'failed' && step.branches[i]!.on_error !== 'continue',
      );
      if (failing.length > 0) return failedBy(firstEnded(failing));
      return runs.every(ended) ? { status: 'success', at: lastEnd() } : { status: 'running' };
    }
    case 'map': {
      const failed = runs.filter((run) => run.status === 'failed');
      const allowed = toleratedFailures(step.tolerated_failures, runs.length);
      // The failure past the tolerated ones is the one that failed the step.
      if (failed.length > allowed) return failedBy(byEnd(failed)[allowed]!);
      return runs.every(ended) ? { status: 'success', at: lastEnd() } : { status: 'running' };
    }
    case 'switch': {
      const [run] = runs;
      if (!run) return { status: 'success', at: null };
      if (run.status === 'failed') return failedBy(run);
      return run.status === 'success' ? { status: 'success', at: run.finished_at } : { status: 'running' };
    }
    case 'loop': {
      const run = runs[runs.length - 1]!;
      if (run.status === 'failed') return failedBy(run);
      const until = controls.until[runs.length - 1];
      if (run.status !== 'success' || !until) return { status: 'running' };
      if (until.error) return { status: 'failed', at: until.at, error: until.error };
      if (until.done) return { status: 'success', at: run.finished_at };
      return {
        status: 'failed',
        at: until.at,
        error: {
          code: STEP_ERROR_CODES.loopLimitExceeded,
          message: `Step "${step.id}" ran ${step.max_iterations} iterations (its max_iterations) and \`until\` still did not hold.`,
        },
      };
    }
  }
}

function byEnd(runs: RunView[]): RunView[] {
  return [...runs].sort((a, b) => (a.finished_at ?? '').localeCompare(b.finished_at ?? ''));
}

function firstEnded(runs: RunView[]): RunView {
  return byEnd(runs)[0]!;
}

/** A container failed by one of its runs: that run's failure is its error. */
function failedBy(run: RunView): Settled {
  const error = run.steps.find((view) => view.status === 'failed')?.error ?? null;
  return { status: 'failed', at: run.finished_at, error };
}

/** The output of a run's last step that ran (not skipped), as ListOutcome has it; null when none ran. */
export function lastOutput(run: RunView | undefined): unknown {
  if (run && chunkOutputs.has(run)) return chunkOutputs.get(run);
  return run?.steps.findLast((view) => view.status === 'success')?.output ?? null;
}

/** A container's output, recomputed from its runs (docs/definitions.md#composition). */
function outputOf(step: ContainerStep, runs: RunView[], controls: ContainerControls): unknown {
  const outputs = runs.map((run) => (run.status === 'success' ? lastOutput(run) : null));
  switch (step.kind) {
    case 'parallel':
      return parallelOutput(
        step.branches.map((branch) => branch.id),
        outputs,
      );
    case 'map':
      return outputs;
    case 'switch':
      return switchOutput(controls.enter?.case ?? null, lastOutput(runs[0]));
    case 'loop':
      return loopOutput(runs.length, lastOutput(runs[runs.length - 1]));
  }
}

/**
 * A run its container left when it ended (failed, or the execution closed): what still ran or waited in it
 * was canceled, and a map item that had not started never will.
 */
function cancelRun(run: RunView, at: string): void {
  if (run.status === 'success' || run.status === 'failed' || run.status === 'canceled') return;
  run.status = 'canceled';
  if (run.started_at) run.finished_at = at;
  for (const view of run.steps) {
    if (view.status !== 'running' && view.status !== 'waiting') continue;
    view.status = 'canceled';
    view.finished_at = at;
    if (view.started_at) view.duration_ms = durationMs(new Date(view.started_at), new Date(at));
    delete view.next_attempt_at;
    delete view.waiting_for;
    for (const inner of view.runs ?? []) cancelRun(inner, at);
  }
}
