/**
 * One run: its header (and the run that started it), its error and where it happened, whether it is stuck
 * on a build, how long flow control queued it, the actions the key may take, its output, and its steps as a
 * tree on a timeline with their input and output. Read again every second while it runs or waits.
 */
import type { Execution, Step } from '@switchyard/client/browser';
import { useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { api } from '../api';
import { Breadcrumb } from '../components/breadcrumb';
import { ConfirmDialog, useConfirmed } from '../components/dialog';
import { Fact } from '../components/facts';
import { FormPanel } from '../components/form-panel';
import { ErrorNotice, NotLoaded, Success } from '../components/feedback';
import { InputProblems } from '../components/input-problems';
import { JsonView } from '../components/json-view';
import { RunTree } from '../components/run-tree';
import { StatusBadge } from '../components/status';
import { describePath } from '../composition';
import { formatDuration, formatJson, formatTime } from '../format';
import { useCan, useSession } from '../session';
import { useAction } from '../use-action';
import { useAsync, useInterval } from '../use-async';
import { validateInput, type InputProblem } from '../validate-input';

const ACTIVE = new Set(['queued', 'running', 'waiting']);

export function ExecutionPage({ id }: { id: string }) {
  const session = useSession();
  const canWrite = useCan('write');
  const execution = useAsync(() => api.executions.get(id), [id]);
  const [notice, setNotice] = useState<string | undefined>(undefined);
  // After an action, the run is read again for a while even when its status is final: a retried run
  // shows 'failed' until Temporal has reset it.
  const [followUntil, setFollowUntil] = useState(0);
  const run = execution.data;
  const follow = run !== undefined && (ACTIVE.has(run.status) || Date.now() < followUntil);
  useInterval(() => void execution.reload(), 1000, follow);

  const done = async (message: string) => {
    setNotice(message);
    setFollowUntil(Date.now() + 15_000);
    await execution.reload();
  };

  if (!run) {
    return <NotLoaded heading={`Run ${id}`} state={execution} thing="run" />;
  }

  const triggerStep = run.steps.find((step) => step.kind === 'trigger');
  const triggerEvent = triggerStep?.event;
  const coalesced = triggerStep?.coalesced;
  const temporalUrl = session.temporal.ui_url
    ? `${session.temporal.ui_url}/namespaces/${encodeURIComponent(session.temporal.namespace)}/workflows/${encodeURIComponent(run.execution_id)}`
    : undefined;

  return (
    <section aria-labelledby="run-title">
      <Breadcrumb list="Runs" href="/" id={run.execution_id} />
      <div class="page-head">
        <h1 id="run-title">
          Run <span class="mono">{run.execution_id}</span>
        </h1>
        <StatusBadge status={run.status} />
      </div>
      <dl class="facts">
        <Fact term="Workflow">
          <Link href={`/workflows/${encodeURIComponent(run.workflow)}?version=${run.workflow_version}`}>
            {run.workflow}
          </Link>{' '}
          <span class="hint">version {run.workflow_version}</span>
        </Fact>
        <Fact term="Trigger">{run.trigger.type}</Fact>
        {triggerEvent && (
          <Fact term="Started by">
            <span data-testid="run-event">
              event{' '}
              <Link href={`/events/${encodeURIComponent(triggerEvent.id)}`} class="mono">
                {triggerEvent.id}
              </Link>{' '}
              ({triggerEvent.name})
            </span>
          </Fact>
        )}
        {coalesced !== undefined && (
          <Fact term="Debounced">
            <span data-testid="run-coalesced">
              {coalesced} {coalesced === 1 ? 'trigger' : 'triggers'} in one run, with the last one's input
            </span>
          </Fact>
        )}
        {run.parent && (
          <Fact term="Started by">
            <span data-testid="run-parent">
              run{' '}
              <Link href={`/runs/${encodeURIComponent(run.parent.execution_id)}`} class="mono">
                {run.parent.execution_id}
              </Link>{' '}
              (step <code>{run.parent.step}</code>)
            </span>
          </Fact>
        )}
        <Fact term="Started">{formatTime(run.started_at)}</Fact>
        <Fact term="Finished">{formatTime(run.finished_at)}</Fact>
        <Fact term="Duration">{formatDuration(run.duration_ms)}</Fact>
        {run.queued_ms !== null && (
          <Fact term="Queued">
            <span data-testid="run-queued">
              {formatDuration(run.queued_ms)}
              <span class="hint">
                {run.admitted_at
                  ? ` until admitted ${formatTime(run.admitted_at)}`
                  : run.finished_at
                    ? ' (it ended queued)'
                    : ' so far (flow control holds it back)'}
              </span>
            </span>
          </Fact>
        )}
        {temporalUrl && (
          <Fact term="Temporal">
            <a href={temporalUrl} target="_blank" rel="noopener noreferrer">
              Open in Temporal UI
            </a>
          </Fact>
        )}
      </dl>
      {run.error && <RunError run={run} />}
      {run.stalled && <StalledNotice stalled={run.stalled} />}
      <ErrorNotice error={execution.error} title="Could not refresh this run" />
      {notice && <Success>{notice}</Success>}
      {canWrite && <RunActions run={run} onDone={done} />}
      {run.steps
        .filter((step) => step.kind === 'approval' && step.status === 'waiting')
        .map((step) => (
          <Approval key={step.id} run={run} step={step} canWrite={canWrite} onDone={done} />
        ))}
      {run.status === 'success' && (
        <section aria-labelledby="output-title">
          <h2 id="output-title">Output</h2>
          <JsonView value={run.output} label="Output of the run" />
        </section>
      )}
      <RunTree run={run} />
    </section>
  );
}

/**
 * Why the run failed: the step and code, where the step sits when it is inside containers (its `path`, as
 * a breadcrumb of containers and runs), and the run a failed workflow step started.
 */
function RunError({ run }: { run: Execution }) {
  const error = run.error!;
  const path = error.path && error.path.length > 1 ? describePath(error.path, run.steps) : undefined;
  const child = childFailure(error.details);
  return (
    <div class="notice notice-error" data-testid="run-error">
      <p class="notice-title">
        {error.step ? (
          <>
            Step <code>{error.step}</code> failed
          </>
        ) : (
          'The run failed'
        )}{' '}
        with <code>{error.code}</code>
      </p>
      {path && (
        <nav aria-label="Where the step failed" class="error-path" data-testid="error-path">
          <ol>
            {path.map((part, index) => (
              <li key={index} class={part.kind === 'run' ? 'run-key' : undefined}>
                {part.kind === 'step' ? <code>{part.label}</code> : part.label}
              </li>
            ))}
          </ol>
        </nav>
      )}
      <p class="notice-message">{error.message}</p>
      {child && (
        <p>
          The run it started,{' '}
          <Link href={`/runs/${encodeURIComponent(child)}`} class="mono">
            {child}
          </Link>
          , failed.
        </p>
      )}
    </div>
  );
}

/** child_failed: the child execution's error is the first detail ({execution_id, step, path, code, message}). */
function childFailure(details: unknown[] | undefined): string | undefined {
  const first = details?.[0] as { execution_id?: unknown } | undefined;
  return first && typeof first.execution_id === 'string' ? first.execution_id : undefined;
}

type Stalled = NonNullable<Execution['stalled']>;

/** What keeps failing, by `stalled.reason` (docs/api.md#stuck-executions). */
const STALLED_BECAUSE: Record<string, string> = {
  nondeterminism:
    'the build cannot replay the run (a non-determinism error: the run was moved to code it was not written for)',
  workflow_code_error: 'the workflow code throws an error',
  workflow_task_timed_out: 'the worker does not answer in time (it stops or hangs)',
  workflow_task_failed: 'Temporal refuses what the workflow asks for',
};

/**
 * A run whose workflow task keeps failing: its status still says running or waiting, but nothing moves
 * until an operator acts, which no button here can do.
 */
function StalledNotice({ stalled }: { stalled: Stalled }) {
  const because = STALLED_BECAUSE[stalled.reason] ?? `of ${stalled.reason}`;
  return (
    <div class="notice notice-warning" role="region" aria-label="Stuck run" data-testid="run-stalled">
      <p class="notice-title">
        This run is stuck
        {stalled.build_id && (
          <>
            {' '}
            on build <code>{stalled.build_id}</code>
          </>
        )}
      </p>
      <p>
        Its workflow task has kept failing since {formatTime(stalled.since)} because {because}. Temporal
        retries it (attempt {stalled.attempts}); no step moves until an operator acts.
      </p>
      <p class="notice-message">
        <code>{stalled.message}</code>
      </p>
      <p>
        To recover: move the run to a build that can replay it, undo a mistaken move, or terminate the run.
        See "Runs stuck on a build" in <code>docs/operations.md</code>.
      </p>
    </div>
  );
}

function RunActions({ run, onDone }: { run: Execution; onDone: (message: string) => Promise<void> }) {
  const [retrying, setRetrying] = useState(false);
  const action = useAction();
  const canceling = useConfirmed(
    action,
    (executionId: string) => api.executions.cancel(executionId),
    () => onDone('Cancellation requested.'),
  );

  if (run.status !== 'failed' && !ACTIVE.has(run.status)) return null;
  return (
    <div class="panel" aria-label="Actions" role="region">
      {!retrying && (
        <div class="actions">
          {run.status === 'failed' && (
            <button type="button" class="primary" onClick={() => setRetrying(true)}>
              Retry from the failed step…
            </button>
          )}
          {ACTIVE.has(run.status) && (
            <button type="button" class="danger" onClick={() => canceling.ask(run.execution_id)}>
              Cancel run
            </button>
          )}
        </div>
      )}
      <ErrorNotice error={action.error} title="The action failed" />
      {retrying && run.status === 'failed' && (
        <RetryEditor
          run={run}
          onClose={() => setRetrying(false)}
          onDone={async (message) => {
            setRetrying(false);
            await onDone(message);
          }}
        />
      )}
      <ConfirmDialog {...canceling.dialog} title="Cancel this run?" confirmLabel="Cancel run" danger>
        <p>
          Run <span class="mono">{run.execution_id}</span> stops; its steps that have not finished are
          canceled.
        </p>
      </ConfirmDialog>
    </div>
  );
}

/** The run's input (the trigger step's), to correct before retrying; checked against the run's version. */
function RetryEditor({
  run,
  onClose,
  onDone,
}: {
  run: Execution;
  onClose: () => void;
  onDone: (message: string) => Promise<void>;
}) {
  const original = run.steps.find((step) => step.kind === 'trigger')?.input ?? {};
  const [text, setText] = useState(formatJson(original));
  const [problems, setProblems] = useState<InputProblem[]>([]);
  const action = useAction();

  const retry = async () => {
    setProblems([]);
    let input: unknown;
    try {
      input = JSON.parse(text);
    } catch (caught) {
      setProblems([{ path: '/', message: `is not JSON: ${(caught as Error).message}` }]);
      return;
    }
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      setProblems([{ path: '/', message: 'must be a JSON object' }]);
      return;
    }
    const workflow = await api.workflows.get(run.workflow, { version: run.workflow_version });
    const found = await validateInput(workflow.input_schema, input);
    if (found.length > 0) {
      setProblems(found);
      return;
    }
    const unchanged = JSON.stringify(input) === JSON.stringify(original);
    const accepted = await api.executions.retry(
      run.execution_id,
      unchanged ? {} : { input: input as Record<string, unknown> },
    );
    await onDone(
      `Retrying from step ${accepted.retried_from_step}${unchanged ? '' : ' with the corrected input'}.`,
    );
  };

  return (
    <FormPanel
      title="Retry from the failed step"
      class="editor"
      action={action}
      onSubmit={retry}
      errorTitle="Retry failed"
      submitLabel="Retry"
      busyLabel="Retrying…"
      buttons={
        <button type="button" onClick={onClose} disabled={action.busy}>
          Close
        </button>
      }
    >
      <label for="retry-input">
        Run input (JSON), checked against the workflow's input schema before sending
      </label>
      <textarea
        id="retry-input"
        rows={Math.min(20, Math.max(6, text.split('\n').length + 1))}
        spellcheck={false}
        value={text}
        onInput={(event) => setText(event.currentTarget.value)}
        aria-invalid={problems.length > 0}
        aria-describedby={problems.length > 0 ? 'retry-problems' : undefined}
      />
      <InputProblems problems={problems} id="retry-problems" />
    </FormPanel>
  );
}

/** A waiting approval step: its message, and (for a key that may write) approve or reject with a comment. */
function Approval({
  run,
  step,
  canWrite,
  onDone,
}: {
  run: Execution;
  step: Step;
  canWrite: boolean;
  onDone: (message: string) => Promise<void>;
}) {
  const [comment, setComment] = useState('');
  const { busy, error, run: act } = useAction();
  const inputId = `comment-${step.id}`;

  const decide = (decision: 'approve' | 'reject') =>
    act(async () => {
      const body = comment.trim() ? { comment: comment.trim() } : {};
      if (decision === 'approve') await api.executions.approve(run.execution_id, step.id, body);
      else await api.executions.reject(run.execution_id, step.id, body);
      await onDone(`Step ${step.id} ${decision === 'approve' ? 'approved' : 'rejected'}.`);
    });

  const message = approvalMessage(step);
  return (
    <form class="panel approval" onSubmit={(e) => e.preventDefault()} aria-labelledby={`${inputId}-title`}>
      <h2 id={`${inputId}-title`}>
        Step <code>{step.id}</code> waits for a decision
      </h2>
      {message && <p class="approval-message">{message}</p>}
      {!canWrite && <p class="hint">Your key may read only: someone with a write key decides.</p>}
      {canWrite && (
        <>
          <label for={inputId}>Comment (kept in the step's output)</label>
          <textarea
            id={inputId}
            rows={2}
            value={comment}
            onInput={(e) => setComment(e.currentTarget.value)}
          />
          <ErrorNotice error={error} title="The decision failed" />
          <div class="actions">
            <button type="button" class="primary" disabled={busy} onClick={() => void decide('approve')}>
              Approve
            </button>
            <button type="button" class="danger" disabled={busy} onClick={() => void decide('reject')}>
              Reject
            </button>
          </div>
        </>
      )}
    </form>
  );
}

function approvalMessage(step: Step): string | undefined {
  const input = step.input as { message?: unknown } | null;
  return input && typeof input === 'object' && typeof input.message === 'string' ? input.message : undefined;
}
