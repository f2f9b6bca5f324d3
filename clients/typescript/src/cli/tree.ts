/**
 * `switchyard runs show`: an execution's steps as a tree. Each container step (parallel, map, switch, loop)
 * is followed by its runs (the first 20 the execution shows) and each run by its steps, one level further
 * in; a container with more runs than shown ends with the command that pages through them all. A workflow
 * step is followed by its child execution's id.
 */
import type { Execution, Step, StepRun } from '../client';
import { formatDuration, stepStatus, type Note } from './output';

/** What one run of each container kind is: the KIND column of a run's line. */
const RUN_NOUN: Readonly<Record<string, string>> = {
  parallel: 'branch',
  map: 'item',
  switch: 'case',
  loop: 'iteration',
};

const INDENT = '  ';

type Line = readonly unknown[] | Note;

/** The lines of the tree under the STEP, KIND, STATUS and DURATION headers. */
export function stepTree(execution: Execution): Line[] {
  const lines: Line[] = [];
  const addSteps = (steps: readonly Step[], depth: number): void => {
    for (const step of steps) {
      const indent = INDENT.repeat(depth);
      lines.push([`${indent}${step.id}`, step.kind, stepStatus(step), formatDuration(step.duration_ms)]);
      const child = childExecution(step);
      // A note, so that the id does not widen the STEP column.
      if (child)
        lines.push({
          note: `${indent}${INDENT}child execution ${child.id}${child.status ? ` (${child.status})` : ''}`,
        });
      if (!step.runs) continue;
      for (const run of step.runs) {
        lines.push([
          `${indent}${INDENT}[${run.key}]`,
          RUN_NOUN[step.kind] ?? 'run',
          run.status,
          runDuration(run),
        ]);
        addSteps(run.steps, depth + 2);
      }
      const more = (step.runs_total ?? 0) - step.runs.length;
      if (more > 0) {
        lines.push({
          note: `${indent}${INDENT}… ${more} more run${more === 1 ? '' : 's'}: switchyard executions runs ${execution.execution_id} ${step.id}`,
        });
      }
    }
  };
  addSteps(execution.steps, 0);
  return lines;
}

/** A workflow step's child execution, once the step shows it. */
function childExecution(step: Step): { id: string; status?: string } | undefined {
  if (step.kind !== 'workflow' || typeof step.output !== 'object' || step.output === null) return undefined;
  const { execution_id: id, status } = step.output as { execution_id?: unknown; status?: unknown };
  if (typeof id !== 'string') return undefined;
  return typeof status === 'string' ? { id, status } : { id };
}

function runDuration(run: StepRun): string {
  if (!run.started_at) return '-';
  const end = run.finished_at ? Date.parse(run.finished_at) : Date.now();
  return formatDuration(Math.max(0, end - Date.parse(run.started_at)));
}
