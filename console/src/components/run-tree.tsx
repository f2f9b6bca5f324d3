/**
 * A run's steps as a tree (docs/console.md#composition): every step a row on the run's time axis, and
 * under a container step its runs: a parallel step's branches side by side, a switch's chosen case, a
 * map's items and a loop's iterations as a list to page through (a map's with how many items have each
 * status, and a filter by status). A workflow step links to the run it started. A run flow control held
 * back has a first row of its own: the time it was queued.
 */
import type { Execution, Step, StepRun, StepRunStatus } from '@switchyard/client/browser';
import { createContext, Fragment } from 'preact';
import { useContext, useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { childExecutionOf, CONTAINER_KINDS, pathKeys, runLabel, stepKey } from '../composition';
import { formatDuration } from '../format';
import { useStepRuns } from '../use-step-runs';
import { ErrorNotice, Loading } from './feedback';
import { StatusBadge } from './status';
import { depthOf, StepRow } from './step-row';
import { TimelineAxis, TimelineBar, timelineWindow, type TimelineWindow } from './timeline';

interface Tree {
  executionId: string;
  window: TimelineWindow;
  now: number;
  isOpen: (key: string) => boolean;
  toggle: (key: string) => void;
}

const TreeContext = createContext<Tree | null>(null);

function useTree(): Tree {
  const tree = useContext(TreeContext);
  if (!tree) throw new Error('a step of the run tree outside RunTree');
  return tree;
}

export function RunTree({ run }: { run: Execution }) {
  const now = Date.now();
  // Opened at first: the failed step, and the containers and runs on its way.
  const [open, setOpen] = useState<ReadonlySet<string>>(() => new Set(pathKeys(run.error)));
  const tree: Tree = {
    executionId: run.execution_id,
    window: timelineWindow(run, now),
    now,
    isOpen: (key) => open.has(key),
    toggle: (key) =>
      setOpen((current) => {
        const next = new Set(current);
        if (next.has(key)) next.delete(key);
        else next.add(key);
        return next;
      }),
  };

  return (
    <section class="steps" aria-labelledby="steps-title">
      <h2 id="steps-title">
        Steps <span class="hint">({run.steps.length})</span>
      </h2>
      <div class="timeline" role="list" aria-label="Steps on a time axis" data-testid="timeline">
        <div class="timeline-head" aria-hidden="true">
          <span>Step</span>
          <span>Status</span>
          <span>Attempts</span>
          <span>Duration</span>
          <TimelineAxis window={tree.window} />
        </div>
        <TreeContext.Provider value={tree}>
          {run.steps.map((step) => (
            <Fragment key={step.id}>
              <StepNode step={step} within="" />
              {/* In time's order: the run was triggered, then queued, then its steps ran. */}
              {step.kind === 'trigger' && run.queued_at && (
                <QueuedRow run={run} window={tree.window} now={now} />
              )}
            </Fragment>
          ))}
        </TreeContext.Provider>
      </div>
    </section>
  );
}

/**
 * The time flow control held the run back (docs/flow-control.md), on the steps' axis: from `queued_at` to
 * `admitted_at`, or to the run's end or now while it has none.
 */
function QueuedRow({ run, window, now }: { run: Execution; window: TimelineWindow; now: number }) {
  const admitted = run.admitted_at !== null;
  const span = {
    started_at: run.queued_at,
    finished_at: run.admitted_at ?? run.finished_at,
    duration_ms: run.queued_ms,
    status: 'queued',
  };
  return (
    <div class="step-row" role="listitem" data-testid="queued-row">
      <div class="step-line">
        <span class="step-name queued-name">
          Queued <span class="hint">flow control</span>
        </span>
        <StatusBadge status={admitted ? 'admitted' : 'queued'} />
        <span class="attempts" aria-hidden="true">
          –
        </span>
        <span class="duration">
          <span class="sr-only">Queued for: </span>
          {formatDuration(run.queued_ms)}
        </span>
        <TimelineBar step={span} window={window} now={now} />
      </div>
    </div>
  );
}

/** A step's row, and below it what it holds: its runs, or the run it started. */
function StepNode({ step, within, compact = false }: { step: Step; within: string; compact?: boolean }) {
  const tree = useTree();
  const key = stepKey(within, step.id);
  const child = childExecutionOf(step);
  const holds = CONTAINER_KINDS.has(step.kind) && (step.runs_total ?? step.runs?.length ?? 0) > 0;
  const noCase = step.kind === 'switch' && step.status === 'success' && !holds;
  return (
    <StepRow
      step={step}
      rowKey={key}
      window={tree.window}
      now={tree.now}
      open={tree.isOpen(key)}
      onToggle={() => tree.toggle(key)}
      compact={compact}
    >
      {child && (
        <p class="child-run" data-testid="child-run">
          Started run{' '}
          <Link href={`/runs/${encodeURIComponent(child)}`} class="mono">
            {child}
          </Link>
        </p>
      )}
      {noCase && <p class="hint">No case held: nothing ran.</p>}
      {holds && <Runs step={step} stepKey={key} pageable={within === ''} />}
    </StepRow>
  );
}

/** The steps of one run of a container. */
function Steps({
  run,
  runKey,
  label,
  compact = false,
}: {
  run: StepRun;
  runKey: string;
  label: string;
  compact?: boolean;
}) {
  return (
    <div class="run-steps" role="list" aria-label={label}>
      {run.steps.map((step) => (
        <StepNode key={step.id} step={step} within={runKey} compact={compact} />
      ))}
    </div>
  );
}

function runDuration(run: StepRun, now: number): number | null {
  if (!run.started_at) return null;
  return (run.finished_at ? Date.parse(run.finished_at) : now) - Date.parse(run.started_at);
}

function Runs({ step, stepKey: key, pageable }: { step: Step; stepKey: string; pageable: boolean }) {
  const tree = useTree();
  const list = useStepRuns(tree.executionId, step, pageable);
  const runKey = (run: StepRun) => `${key}/${run.key}`;

  if (step.kind === 'parallel') {
    return (
      <>
        <ul class="lanes run-lanes" aria-label={`Branches of ${step.id}`}>
          {list.runs.map((run) => (
            <li key={run.key} class="lane" aria-label={`Branch ${run.key}`} data-run={run.key}>
              <RunHead run={run} kind={step.kind} />
              <Steps run={run} runKey={runKey(run)} label={`Steps of branch ${run.key}`} compact />
            </li>
          ))}
        </ul>
        <MoreRuns list={list} things="branches" />
      </>
    );
  }
  if (step.kind === 'switch') {
    return (
      <>
        {list.runs.map((run) => (
          <div
            key={run.key}
            class="run-case"
            data-run={run.key}
            style={{ '--depth': String(depthOf(runKey(run))) }}
          >
            <p class="run-head">
              Chose <strong>{runLabel('switch', run.key)}</strong> <StatusBadge status={run.status} />
            </p>
            <Steps run={run} runKey={runKey(run)} label={`Steps of ${runLabel('switch', run.key)}`} />
          </div>
        ))}
      </>
    );
  }
  const things = step.kind === 'map' ? 'items' : 'iterations';
  return (
    <div class="run-list" data-testid="run-list">
      {step.kind === 'map' && <RunCounts list={list} />}
      <ol class="runs-of-step" aria-label={`${step.kind === 'map' ? 'Items' : 'Iterations'} of ${step.id}`}>
        {list.runs.map((run) => (
          <RunItem key={run.key} run={run} kind={step.kind} runKey={runKey(run)} />
        ))}
      </ol>
      {list.runs.length === 0 &&
        (list.busy ? (
          <Loading label={`Loading ${things}…`} />
        ) : (
          <p class="hint">No {things} with this status.</p>
        ))}
      <MoreRuns list={list} things={things} />
    </div>
  );
}

/** An item or an iteration: a row on the time axis, opening to its steps. */
function RunItem({ run, kind, runKey }: { run: StepRun; kind: string; runKey: string }) {
  const tree = useTree();
  const open = tree.isOpen(runKey);
  const label = runLabel(kind, run.key);
  const duration = runDuration(run, tree.now);
  return (
    <li
      class={`run-item${open ? ' open' : ''}`}
      data-run={run.key}
      style={{ '--depth': String(depthOf(runKey)) }}
    >
      <div class="step-line">
        <button type="button" class="step-name" aria-expanded={open} onClick={() => tree.toggle(runKey)}>
          <span class="chevron" aria-hidden="true" />
          {label}
        </button>
        <StatusBadge status={run.status} />
        <span aria-hidden="true" />
        <span class="duration">
          <span class="sr-only">Duration: </span>
          {formatDuration(duration)}
        </span>
        <TimelineBar step={{ ...run, duration_ms: duration }} window={tree.window} now={tree.now} />
      </div>
      {open && <Steps run={run} runKey={runKey} label={`Steps of ${label}`} />}
    </li>
  );
}

function RunHead({ run, kind }: { run: StepRun; kind: string }) {
  const tree = useTree();
  return (
    <div class="lane-head">
      <span>{runLabel(kind, run.key)}</span> <StatusBadge status={run.status} />{' '}
      <span class="hint">{formatDuration(runDuration(run, tree.now))}</span>
    </div>
  );
}

type RunList = ReturnType<typeof useStepRuns>;

/** The statuses of runs, in the order a run goes through them. */
const STATUS_ORDER: readonly StepRunStatus[] = [
  'pending',
  'running',
  'waiting',
  'success',
  'failed',
  'canceled',
];

/** How many runs have each status, as buttons that show only those. */
function RunCounts({ list }: { list: RunList }) {
  const { counts, count } = list;
  return (
    <div class="run-counts" role="group" aria-label="Items by status" data-testid="run-counts">
      <button type="button" aria-pressed={list.filter === null} onClick={() => list.setFilter(null)}>
        All <span class="count">{list.total}</span>
      </button>
      {counts &&
        STATUS_ORDER.filter((status) => counts[status] !== undefined).map((status) => (
          <button
            type="button"
            key={status}
            aria-pressed={list.filter === status}
            onClick={() => list.setFilter(status)}
          >
            {status} <span class="count">{counts[status]}</span>
          </button>
        ))}
      {count && (
        <button type="button" disabled={list.counting} onClick={count}>
          {list.counting ? 'Counting…' : counts ? 'Count again' : 'Count by status'}
        </button>
      )}
      {!count && list.counting && !counts && <span class="hint">Counting…</span>}
    </div>
  );
}

function MoreRuns({ list, things }: { list: RunList; things: string }) {
  return (
    <>
      <ErrorNotice error={list.error} title={`Could not load the ${things}`} />
      {list.hasMore && (
        <button type="button" disabled={list.busy} onClick={() => void list.loadMore()}>
          {list.busy ? 'Loading…' : `Load more ${things}`}
        </button>
      )}
      {list.unshown > 0 && (
        <p class="hint">
          {list.unshown} more {things} not shown here.
        </p>
      )}
    </>
  );
}
