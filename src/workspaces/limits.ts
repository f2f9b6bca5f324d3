/**
 * The workspace limits a request runs into (docs/operations.md#workspace-limits): the maximum in effect
 * for the caller's workspace (an operator's override, else the default from WORKSPACE_MAX_*), and the
 * checks of a definition against it.
 */
import { describeStepCount, placeSteps } from '../definitions/nested';
import { invalidDefinition } from '../definitions/validate';
import type { Services } from '../services';
import { effectiveLimit, type CountLimit } from '../../platform/store/workspace-limits';
import type { Definition } from '../../core/definitions/schema';
import type { CountedLimit, LimitName, LimitValue } from '../../core/workspace-limits';

export function limitOf(services: Services, workspaceId: string, name: LimitName): Promise<LimitValue> {
  return effectiveLimit(services.db, workspaceId, name, services.config.workspaceLimits[name]);
}

/** A count limit of the workspace, to create within (platform/store/workspace-limits.ts createWithinLimit). */
export async function countLimit(
  services: Services,
  workspaceId: string,
  name: CountedLimit,
): Promise<CountLimit> {
  return { workspaceId, name, max: await limitOf(services, workspaceId, name) };
}

/** Throws 400 invalid_definition (at /steps) when the definition has more steps than the workspace allows. */
export async function checkStepsLimit(
  services: Services,
  workspaceId: string,
  definition: Definition,
): Promise<void> {
  const max = await limitOf(services, workspaceId, 'steps_per_definition');
  // Nested steps count too, and so does each container.
  const placed = placeSteps(definition);
  if (max !== null && placed.length > max) {
    throw invalidDefinition([
      {
        path: '/steps',
        message: `has ${describeStepCount(placed)}; this workspace allows at most ${max} per definition (limit steps_per_definition)`,
      },
    ]);
  }
}
