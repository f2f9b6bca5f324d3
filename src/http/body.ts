/**
 * Request bodies (docs/api.md#requests-and-responses): JSON only (415 otherwise), size-limited (413), parsed
 * here so malformed JSON is a 400 `invalid_request` with the parser's reason. The raw bytes are kept for
 * signature checks, and a route can read them without parsing (inbound hooks verify a signature first).
 */
import type Koa from 'koa';
import getRawBody from 'raw-body';
import { AppError, invalidRequest } from '../../platform/errors';
import { nestedDeeperThan } from '../../core/step-data';

export interface ParsedBody {
  present: boolean;
  raw: Buffer;
  value: unknown;
}

const NO_BODY: ParsedBody = { present: false, raw: Buffer.alloc(0), value: undefined };

function hasBody(ctx: Koa.Context): boolean {
  const length = ctx.get('content-length');
  if (length !== '') return Number(length) > 0;
  return ctx.get('transfer-encoding') !== '';
}

/** 415 unless the body is declared JSON in UTF-8. */
function checkJsonContentType(ctx: Koa.Context): void {
  if (!ctx.is('application/json', '+json')) {
    throw new AppError(
      415,
      'unsupported_media_type',
      'Send the body as JSON with Content-Type: application/json.',
    );
  }
  const charset = /charset=([^;]+)/i.exec(ctx.get('content-type'))?.[1]?.trim().toLowerCase();
  if (charset && charset !== 'utf-8' && charset !== 'utf8') {
    throw new AppError(415, 'unsupported_media_type', 'JSON bodies must be UTF-8.');
  }
}

/**
 * Deepest nesting of arrays and objects a JSON body may have. JSON.parse reads any depth, but
 * JSON.stringify, validators and the workflow engine recurse: a body nested some thousands deep would
 * overflow the stack wherever it went next.
 */
export const MAX_JSON_DEPTH = 100;

function parseJson(raw: Buffer): unknown {
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8')) as unknown;
  } catch (error) {
    throw invalidRequest(`Malformed JSON: ${(error as Error).message}`, [
      { path: '', message: 'is not valid JSON' },
    ]);
  }
  if (nestedDeeperThan(value, MAX_JSON_DEPTH)) {
    throw invalidRequest(`The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels.`, [
      { path: '', message: `is nested deeper than ${MAX_JSON_DEPTH} levels` },
    ]);
  }
  return value;
}

/** The body's bytes, within the size limit (413), neither checked nor parsed. */
export async function readRawBody(ctx: Koa.Context, limitBytes: number): Promise<ParsedBody> {
  if (!hasBody(ctx)) return NO_BODY;
  try {
    const length = ctx.get('content-length');
    return {
      present: true,
      raw: await getRawBody(ctx.req, { limit: limitBytes, ...(length ? { length } : {}) }),
      value: undefined,
    };
  } catch (error) {
    if ((error as { type?: string }).type === 'entity.too.large') {
      throw new AppError(
        413,
        'payload_too_large',
        `The request body is larger than the limit of ${limitBytes} bytes.`,
      );
    }
    throw invalidRequest('The request body could not be read completely.');
  }
}

/** Reads and parses a JSON body; the content type is checked before anything is read. */
export async function readJsonBody(ctx: Koa.Context, limitBytes: number): Promise<ParsedBody> {
  if (!hasBody(ctx)) return NO_BODY;
  checkJsonContentType(ctx);
  const body = await readRawBody(ctx, limitBytes);
  return { ...body, value: parseJson(body.raw) };
}

/** Parses bytes read by readRawBody as readJsonBody would have (415, 400); undefined without a body. */
export function parseJsonBody(ctx: Koa.Context, raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  checkJsonContentType(ctx);
  return parseJson(raw);
}
