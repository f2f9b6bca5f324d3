/**
 * Paths the service serves besides /v1, as plain constants: the supervisor of `npm start`
 * (processes/main.ts) names them without loading the HTTP layer.
 */

/** The API reference page (api-reference.ts). */
export const API_REFERENCE_PATH = '/docs';

/** Temporal UI's remote codec endpoint (codec-server.ts, docs/operations.md#encrypted-step-data). */
export const CODEC_PATH = '/codec';
