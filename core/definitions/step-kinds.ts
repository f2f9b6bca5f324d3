/**
 * Which step kinds are leaves and which hold steps. Apart from the schema (which imports zod), so that
 * workflow code can import it without bundling zod.
 */
import type { LeafStep, Step } from './schema';

const LEAF_KINDS: ReadonlySet<Step['kind']> = new Set([
  'rules',
  'connector',
  'ai',
  'approval',
  'sleep',
  'wait_for_event',
]);

/** Whether the `run_steps` local activity runs this step (as opposed to a container or a sub-workflow). */
export function isLeafStep(step: Step): step is LeafStep {
  return LEAF_KINDS.has(step.kind);
}
