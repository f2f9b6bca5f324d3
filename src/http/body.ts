/**
 * Request bodies (CONTRACT §1): JSON only (415 otherwise), size-limited (413), parsed here so malformed
 * JSON is a 400 `invalid_request` with the parser's reason. The raw bytes are kept for signature checks.
 */
import type Koa from 'koa';
import getRawBody from 'raw-body';
import { AppError, invalidRequest } from '../errors';

export interface ParsedBody {
  present: boolean;
  raw: Buffer;
  value: unknown;
}

function hasBody(ctx: Koa.Context): boolean {
  const length = ctx.get('content-length');
  if (length !== '') return Number(length) > 0;
  return ctx.get('transfer-encoding') !== '';
}

export async function readJsonBody(ctx: Koa.Context, limitBytes: number): Promise<ParsedBody> {
  if (!hasBody(ctx)) return { present: false, raw: Buffer.alloc(0), value: undefined };
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
  let raw: Buffer;
  try {
    const length = ctx.get('content-length');
    raw = await getRawBody(ctx.req, { limit: limitBytes, ...(length ? { length } : {}) });
  } catch (error) {
    const type = (error as { type?: string }).type;
    if (type === 'entity.too.large') {
      throw new AppError(
        413,
        'payload_too_large',
        `The request body is larger than the limit of ${limitBytes} bytes.`,
      );
    }
    throw invalidRequest('The request body could not be read completely.');
  }
  try {
    return { present: true, raw, value: JSON.parse(raw.toString('utf8')) as unknown };
  } catch (error) {
    throw invalidRequest(`Malformed JSON: ${(error as Error).message}`, [
      { path: '', message: 'is not valid JSON' },
    ]);
  }
}
