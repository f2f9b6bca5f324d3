/**
 * One step of a run, at the top level or inside a container: its name, status, attempts, duration and bar
 * on the run's time axis, opening to its times, error, input and output. Below it, opened or not: until
 * when a sleeping step sleeps, or which event a waiting wait_for_event step waits for and until when, and
 * `children` (a container's runs, the run a workflow step started).
 */
import type { Step } from '@switchyard/client/browser';
import type { ComponentChildren } from 'preact';
import { Link } from 'wouter-preact';
import { formatDuration, formatTime } from '../format';
import { Fact } from './facts';
import { JsonView } from './json-view';
import { StatusBadge } from './status';
import { TimelineBar, type TimelineWindow } from './timeline';

export function StepRow({
  step,
  rowKey,
  window,
  now,
  open,
  onToggle,
  compact = false,
  children,
}: {
  step: Step;
  /** Unique in the run (composition.ts stepKey): names the detail panel and the row for tests. */
  rowKey: string;
  window: TimelineWindow;
  now: number;
  open: boolean;
  onToggle: () => void;
  /** Without attempts and bar: a row in a lane beside others. */
  compact?: boolean;
  children?: ComponentChildren;
}) {
  const panelId = `step-${rowKey.replace(/[^A-Za-z0-9_-]/g, '-')}`;
  const nested = rowKey !== step.id;
  return (
    <div
      class={`step-row${open ? ' open' : ''}`}
      role="listitem"
      data-testid="step"
      data-step={step.id}
      data-path={nested ? rowKey : undefined}
      // Indents the name by how deep the step sits (the CSSOM: the policy forbids style attributes).
      style={{ '--depth': String(depthOf(rowKey)) }}
    >
      <div class={`step-line${compact ? ' compact' : ''}`}>
        <button
          type="button"
          class="step-name"
          aria-expanded={open}
          aria-controls={panelId}
          onClick={onToggle}
        >
          <span class="chevron" aria-hidden="true" />
          {step.name || step.id} <span class="hint">{step.kind}</span>
        </button>
        <StatusBadge status={step.status} />
        {!compact && (
          <span class="attempts" title="Attempts">
            <span class="sr-only">Attempts: </span>
            {step.attempts > 0 ? `×${step.attempts}` : '–'}
          </span>
        )}
        <span class="duration">
          <span class="sr-only">Duration: </span>
          {formatDuration(step.duration_ms)}
        </span>
        {!compact && <TimelineBar step={step} window={window} now={now} />}
      </div>
      {step.waiting_for && <WaitingFor waitingFor={step.waiting_for} />}
      {open && (
        <div class="step-detail" id={panelId}>
          <dl class="facts small">
            <Fact term="Started">{formatTime(step.started_at)}</Fact>
            <Fact term="Finished">{formatTime(step.finished_at)}</Fact>
            <Fact term="Attempts">{step.attempts}</Fact>
            {step.next_attempt_at && <Fact term="Next attempt">{formatTime(step.next_attempt_at)}</Fact>}
          </dl>
          {step.error && (
            <div class="notice notice-error">
              <p class="notice-title">
                <code>{step.error.code}</code>
              </p>
              <p class="notice-message">{step.error.message}</p>
            </div>
          )}
          <div class="io">
            <div>
              <h3>Input</h3>
              <JsonView value={step.input} label={`Input of step ${rowKey}`} />
            </div>
            <div>
              <h3>Output</h3>
              <JsonView value={step.output} label={`Output of step ${rowKey}`} />
            </div>
          </div>
        </div>
      )}
      {children && <div class="step-nested">{children}</div>}
    </div>
  );
}

/**
 * What a waiting step waits for, under its row while it waits: a sleep, until when; a wait_for_event, the
 * event's name (a link to the events of that name, to see what did arrive) and until when it times out.
 */
function WaitingFor({ waitingFor }: { waitingFor: NonNullable<Step['waiting_for']> }) {
  const until = <time dateTime={waitingFor.until}>{formatTime(waitingFor.until)}</time>;
  if (waitingFor.type === 'event' && waitingFor.event) {
    const events = `/events?${new URLSearchParams({ name: waitingFor.event }).toString()}`;
    return (
      <p class="waiting-for" data-testid="waiting-for">
        Waiting for event{' '}
        <Link href={events} class="mono" title={`The events named ${waitingFor.event}`}>
          {waitingFor.event}
        </Link>{' '}
        until {until}
      </p>
    );
  }
  return (
    <p class="waiting-for" data-testid="waiting-for">
      Sleeping until {until}
    </p>
  );
}

/** How deep a step sits: 0 at the top level, 2 in a run of a top-level container ("each/3/check"). */
export function depthOf(rowKey: string): number {
  return rowKey.split('/').length - 1;
}
