/**
 * Steps that hold steps, as a run shows them (docs/console.md#composition): a container step's entry
 * carries `runs_total` and its first `runs` (a branch, an item, a case or an iteration each, with the steps
 * that ran in it), and `GET /v1/executions/{id}/steps/{step_id}/runs` pages through all of them
 * (docs/api.md#steps-that-hold-steps).
 */
import type { Execution, Step } from '@switchyard/client/browser';

export const CONTAINER_KINDS: ReadonlySet<string> = new Set(['parallel', 'map', 'switch', 'loop']);

/** What a run of a container of `kind` is, for people: "branch crm", "item 3", "case gold", "iteration 2". */
export function runLabel(kind: string, key: string): string {
  switch (kind) {
    case 'parallel':
      return `branch ${key}`;
    case 'map':
      return `item ${key}`;
    case 'switch':
      return key === 'default' ? 'default' : `case ${key}`;
    case 'loop':
      return `iteration ${key}`;
    default:
      return key;
  }
}

/**
 * Where a step sits among the runs, as a key unique in the execution: the ids of the containers around it,
 * each followed by its run key, then its own id, joined by "/" (an error's `path`, joined the same way).
 */
export function stepKey(within: string, stepId: string): string {
  return within ? `${within}/${stepId}` : stepId;
}

/** The execution a workflow step started (its output names it), if any. */
export function childExecutionOf(step: Step): string | undefined {
  // A string: the generated Step kinds leave out `workflow`, which the API shows.
  const kind: string = step.kind;
  if (kind !== 'workflow') return undefined;
  const output = step.output as { execution_id?: unknown } | null;
  return output && typeof output === 'object' && typeof output.execution_id === 'string'
    ? output.execution_id
    : undefined;
}

export interface PathPart {
  /** The container or the failed step's id, or the label of a run ("item 3"). */
  label: string;
  kind: 'step' | 'run';
}

/**
 * An error's `path` ([container, run key, ..., step]) for people: each run key named after its container's
 * kind ("item 1"), which the steps of the execution tell, as far as their runs are shown.
 */
export function describePath(path: readonly string[], steps: readonly Step[]): PathPart[] {
  const parts: PathPart[] = [];
  let level: readonly Step[] | undefined = steps;
  for (let index = 0; index < path.length; index += 2) {
    const stepId = path[index]!;
    parts.push({ label: stepId, kind: 'step' });
    const key = path[index + 1];
    if (key === undefined) break;
    const container: Step | undefined = level?.find((step) => step.id === stepId);
    parts.push({ label: container ? runLabel(container.kind, key) : key, kind: 'run' });
    level = container?.runs?.find((run) => run.key === key)?.steps;
  }
  return parts;
}

/**
 * The keys to open at first: the runs on the failed step's path and the step itself, so a failure inside
 * a container shows opened (a top-level failure without a path opens its step).
 */
export function pathKeys(error: Execution['error']): string[] {
  if (!error?.step) return [];
  const path = error.path ?? [error.step];
  const keys = [path.join('/')];
  for (let length = 2; length < path.length; length += 2) keys.push(path.slice(0, length).join('/'));
  return keys;
}
