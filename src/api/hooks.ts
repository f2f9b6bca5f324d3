// TEMPORARY PLACEHOLDER (being implemented now): POST /v1/hooks/{workflow}, the signed inbound trigger.
import type { AnyRoute } from './route';

export function hookRoutes(): AnyRoute[] {
  return [];
}
