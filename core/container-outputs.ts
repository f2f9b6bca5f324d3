/**
 * What a container step produces (docs/definitions.md#composition), from what its runs left: pure, so that
 * the workflow that runs containers and the reader that shows them (src/executions/step-lists.ts, which
 * recomputes outputs from the recorded steps: the workflow records none) can share it.
 */
import type { MapStep } from './definitions/schema';

/** How many failed items `tolerated` (a count, or a percentage like "5%") allows out of `count`. */
export function toleratedFailures(tolerated: MapStep['tolerated_failures'], count: number): number {
  if (tolerated === undefined) return 0;
  if (typeof tolerated === 'number') return tolerated;
  return Math.floor((count * Number(tolerated.slice(0, -1))) / 100);
}

/** A parallel step's output: each branch id to its last output (null for a branch that failed and went on). */
export function parallelOutput(
  branchIds: readonly string[],
  outputs: readonly unknown[],
): Record<string, unknown> {
  // Branch ids match the step id pattern: never `__proto__`, so plain assignment defines them.
  const output: Record<string, unknown> = {};
  branchIds.forEach((id, i) => (output[id] = outputs[i] ?? null));
  return output;
}

/** A switch step's output: the case that ran ("default", or null when none did) and its last output. */
export function switchOutput(
  chosen: string | null,
  output: unknown,
): { case: string | null; output: unknown } {
  return { case: chosen, output: chosen === null ? null : output };
}

/** A loop step's output: how many iterations ran, and the last one's last output. */
export function loopOutput(iterations: number, output: unknown): { iterations: number; output: unknown } {
  return { iterations, output };
}
