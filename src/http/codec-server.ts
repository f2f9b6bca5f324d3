/**
 * Temporal's remote codec protocol (docs/operations.md#encrypted-step-data), so that Temporal UI (and
 * `temporal` CLI users with a codec) can read payloads the service encrypted:
 * POST /codec/decode and /codec/encode with `{"payloads": [{"metadata": {k: base64}, "data": base64}]}`
 * answer the same shape. Outside /v1 and its OpenAPI document: it is an operator's tool, not the API.
 *
 * Who may call it: an operator. A payload names no workspace, so a key of a tenant's workspace could read
 * every workspace's runs through it; only `admin` keys of the `default` workspace (the operators' own:
 * BOOTSTRAP_API_KEY's) may. They come as `Authorization: Bearer` or, from a browser signed in to the
 * console (Temporal UI fetching with credentials), as the console's session cookie. The cookie path has no
 * CSRF token to show, so the request's Origin must be Temporal UI's (TEMPORAL_UI_URL, or the embedded
 * UI): that is what a cross-site page cannot forge. CORS answers that origin only; any other Origin is
 * refused before anything else happens.
 */
import type Router from '@koa/router';
import type Koa from 'koa';
import type { Payload } from '@temporalio/common';
import { AppError, invalidRequest } from '../../platform/errors';
import type { Services } from '../services';
import {
  decodePayloads,
  encodePayloads,
  PayloadDecryptionError,
} from '../../platform/temporal/encryption-codec';
import type { Authenticator } from './auth';
import { readJsonBody } from './body';
import { objectFromEntries } from '../../core/user-json';

import { CODEC_PATH } from './paths';

export { CODEC_PATH };
/** The workspace whose admin keys are operators' keys (created at first start, BOOTSTRAP_API_KEY's). */
export const OPERATOR_WORKSPACE = 'default';
/** A history page's payloads at once: Temporal allows 2 MB per payload, base64 adds a third. */
const CODEC_BODY_LIMIT_BYTES = 16 * 1024 * 1024;
const ALLOWED_HEADERS = 'Authorization, Content-Type, X-Namespace';

/** The origin of Temporal UI as configured, e.g. `http://127.0.0.1:8233`; undefined when none. */
export function temporalUiOrigin(uiUrl: string | undefined): string | undefined {
  if (!uiUrl) return undefined;
  try {
    return new URL(uiUrl).origin;
  } catch {
    return undefined;
  }
}

export function codecRoutes(router: Router, services: Services, authenticator: Authenticator): void {
  const allowedOrigin = temporalUiOrigin(services.temporalUiUrl);
  const codecs = services.temporal.payloadCodecs;

  /** CORS for Temporal UI's origin; any other Origin is refused (403) before authentication. */
  const checkOrigin = (ctx: Koa.Context): string | undefined => {
    ctx.vary('Origin');
    const origin = ctx.get('origin');
    if (!origin) return undefined;
    if (origin !== allowedOrigin) {
      throw new AppError(
        403,
        'forbidden',
        'This origin may not call the codec endpoint; only Temporal UI (TEMPORAL_UI_URL) may.',
      );
    }
    ctx.set('Access-Control-Allow-Origin', origin);
    ctx.set('Access-Control-Allow-Credentials', 'true');
    return origin;
  };

  for (const operation of ['encode', 'decode'] as const) {
    const routePath = `${CODEC_PATH}/${operation}`;
    router.options(routePath, (ctx) => {
      if (!checkOrigin(ctx)) throw new AppError(403, 'forbidden', 'A preflight request needs an Origin.');
      ctx.set('Access-Control-Allow-Methods', 'POST, OPTIONS');
      ctx.set('Access-Control-Allow-Headers', ALLOWED_HEADERS);
      ctx.set('Access-Control-Max-Age', '600');
      ctx.status = 204;
    });
    router.post(routePath, async (ctx) => {
      ctx.state['route'] = routePath;
      const origin = checkOrigin(ctx);
      // Without a key header, the cookie stands in only for a request Temporal UI's origin made.
      if (!ctx.get('authorization') && !origin) {
        throw new AppError(
          401,
          'unauthorized',
          'Missing API key: send the header Authorization: Bearer <key>.',
          {
            headers: { 'WWW-Authenticate': 'Bearer' },
          },
        );
      }
      const auth = await authenticator.authenticate(ctx, 'admin', { sessionWithoutCsrf: Boolean(origin) });
      ctx.state['keyId'] = auth.keyId;
      if (auth.workspaceId !== OPERATOR_WORKSPACE) {
        throw new AppError(
          403,
          'forbidden',
          `Only admin keys of the '${OPERATOR_WORKSPACE}' workspace may use the codec endpoint: payloads belong to every workspace.`,
        );
      }
      if (codecs.length === 0) {
        throw new AppError(
          404,
          'not_found',
          'Payload encryption is off (PAYLOAD_ENCRYPTION_KEYS is unset): there is nothing to encode or decode.',
        );
      }
      const payloads = parseCodecBody((await readJsonBody(ctx, CODEC_BODY_LIMIT_BYTES)).value);
      let result: Payload[];
      try {
        result =
          operation === 'decode'
            ? await decodePayloads(codecs, payloads)
            : await encodePayloads(codecs, payloads);
      } catch (error) {
        if (error instanceof PayloadDecryptionError) throw invalidRequest(error.message);
        throw error;
      }
      services.logger.info(
        {
          keyId: auth.keyId,
          operation,
          payloads: payloads.length,
          namespace: ctx.get('x-namespace') || undefined,
        },
        'Codec request',
      );
      ctx.body = { payloads: result.map(payloadToJson) };
    });
  }
}

interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function parseCodecBody(body: unknown): Payload[] {
  const list = (body as { payloads?: unknown } | undefined)?.payloads;
  if (!body || typeof body !== 'object' || !Array.isArray(list))
    throw invalidRequest('Send {"payloads": [{"metadata": {...}, "data": "<base64>"}]}.');
  return list.map((item, index) => {
    const problem = (message: string) =>
      invalidRequest(`payloads[${index}]: ${message}`, [{ path: `payloads.${index}`, message }]);
    if (!item || typeof item !== 'object' || Array.isArray(item)) throw problem('must be an object');
    const { metadata = {}, data = '' } = item as JsonPayload;
    if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata))
      throw problem('metadata must be an object of base64 strings');
    // Metadata keys are the caller's: defined, never assigned (core/user-json.ts).
    const decoded = objectFromEntries(
      Object.entries(metadata).map(([key, value]): [string, Uint8Array] => {
        if (typeof value !== 'string' || !BASE64.test(value)) throw problem(`metadata.${key} must be base64`);
        return [key, Buffer.from(value, 'base64')];
      }),
    );
    if (typeof data !== 'string' || !BASE64.test(data)) throw problem('data must be base64');
    return { metadata: decoded, data: Buffer.from(data, 'base64') };
  });
}

function payloadToJson(payload: Payload): JsonPayload {
  return {
    metadata: Object.fromEntries(
      Object.entries(payload.metadata ?? {}).map(([key, value]) => [
        key,
        Buffer.from(value ?? []).toString('base64'),
      ]),
    ),
    data: Buffer.from(payload.data ?? []).toString('base64'),
  };
}
