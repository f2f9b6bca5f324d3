/** Workflow types registered with the worker. Deterministic code only (see eslint.config.mjs). */
export { delivery } from './delivery';
export { execution } from './execution';
export { housekeeping } from './housekeeping';
export { map_chunk } from './map-chunk';
