/**
 * The run's steps as bars on a time axis (Temporal UI's and Inngest's run views): each bar starts at the
 * step's start and lasts its duration, relative to the run. Positions are set through the CSSOM (style
 * objects), which the console's Content-Security-Policy allows, unlike style attributes in markup.
 */
import type { Step } from '@switchyard/client/browser';
import { formatDuration } from '../format';

const TICKS = [0, 0.25, 0.5, 0.75, 1];

export interface TimelineWindow {
  start: number;
  span: number;
}

/** What places a step on the axis (a top-level step or one inside a container). */
type Timed = Pick<Step, 'started_at' | 'finished_at' | 'duration_ms'> & { status: string };

/** The axis: from the run's start to its end (or now, or the last step's end when later). */
export function timelineWindow(
  execution: { started_at: string; finished_at: string | null; steps: readonly Timed[] },
  now: number,
): TimelineWindow {
  const start = Date.parse(execution.started_at);
  let end = execution.finished_at ? Date.parse(execution.finished_at) : now;
  for (const step of execution.steps) {
    if (step.started_at) {
      const stepEnd =
        Date.parse(step.started_at) +
        (step.duration_ms ?? (step.finished_at ? 0 : now - Date.parse(step.started_at)));
      if (stepEnd > end) end = stepEnd;
    }
  }
  return { start, span: Math.max(1, end - start) };
}

function barGeometry(
  step: Timed,
  window: TimelineWindow,
  now: number,
): { left: number; width: number } | null {
  if (!step.started_at) return null;
  const begin = Date.parse(step.started_at) - window.start;
  const duration =
    step.duration_ms ??
    (step.finished_at
      ? Date.parse(step.finished_at) - Date.parse(step.started_at)
      : now - Date.parse(step.started_at));
  const left = Math.min(100, Math.max(0, (begin / window.span) * 100));
  const width = Math.min(100 - left, Math.max(0.5, (duration / window.span) * 100));
  return { left, width };
}

export function TimelineAxis({ window }: { window: TimelineWindow }) {
  return (
    <div class="axis" aria-hidden="true">
      {TICKS.map((tick) => (
        <span key={tick} class="tick" style={{ left: `${tick * 100}%` }}>
          {formatDuration(tick * window.span)}
        </span>
      ))}
    </div>
  );
}

export function TimelineBar({ step, window, now }: { step: Timed; window: TimelineWindow; now: number }) {
  const geometry = barGeometry(step, window, now);
  if (!geometry) return <div class="track" aria-hidden="true" />;
  return (
    <div class="track" aria-hidden="true">
      <span
        class={`bar status-${step.status}`}
        style={{ left: `${geometry.left}%`, width: `${geometry.width}%` }}
      />
    </div>
  );
}
