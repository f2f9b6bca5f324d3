/** Workflow types registered with the worker. Deterministic code only (see eslint.config.mjs). */
export { execution } from './execution';
