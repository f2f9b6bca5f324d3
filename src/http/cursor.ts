/**
 * Opaque list cursors (docs/api.md#pagination): base64url JSON that carries a position and a fingerprint of
 * the query it belongs to, so a cursor replayed against other filters is a clear 400, not a wrong page.
 */
import { createHash } from 'node:crypto';
import { invalidRequest } from '../../platform/errors';

export function fingerprint(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('base64url').slice(0, 12);
}

export function encodeCursor(position: unknown, query: unknown): string {
  return Buffer.from(JSON.stringify({ p: position, q: fingerprint(query) })).toString('base64url');
}

/** The position stored in a cursor; throws 400 invalid_request when it is malformed or from another query. */
export function decodeCursor<T>(
  cursor: string,
  query: unknown,
  isPosition: (value: unknown) => value is T,
): T {
  let parsed: { p?: unknown; q?: unknown };
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { p?: unknown; q?: unknown };
  } catch {
    throw invalidRequest('The cursor is invalid; pass the next_cursor of a previous page as it is.', [
      { path: '/cursor', message: 'is invalid' },
    ]);
  }
  if (typeof parsed !== 'object' || parsed === null || !isPosition(parsed.p)) {
    throw invalidRequest('The cursor is invalid; pass the next_cursor of a previous page as it is.', [
      { path: '/cursor', message: 'is invalid' },
    ]);
  }
  if (parsed.q !== fingerprint(query)) {
    throw invalidRequest('The cursor belongs to a list with other filters; start again without a cursor.', [
      { path: '/cursor', message: 'does not match the filters' },
    ]);
  }
  return parsed.p;
}

export const isString = (value: unknown): value is string => typeof value === 'string';

/**
 * A page from rows fetched with limit + 1: the extra row only says there is a next page, whose cursor
 * holds the position of the last row shown.
 */
export function pageOf<Row, View>(
  rows: Row[],
  limit: number,
  positionOf: (row: Row) => unknown,
  query: unknown,
  toView: (row: Row) => View,
): { data: View[]; next_cursor: string | null } {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    data: page.map(toView),
    next_cursor: rows.length > limit && last !== undefined ? encodeCursor(positionOf(last), query) : null,
  };
}

/**
 * One page of a keyset-paginated list: the cursor decoded into the position of the last row shown (checked
 * against `scope`, the list and its filters), limit + 1 rows fetched after it, and the page built from them.
 */
export async function keysetPage<Row, Position, View>(page: {
  query: { limit: number; cursor?: string | undefined };
  scope: unknown;
  isPosition: (value: unknown) => value is Position;
  fetch: (limit: number, after: Position | undefined) => Promise<Row[]>;
  positionOf: (row: Row) => Position;
  toView: (row: Row) => View;
}): Promise<{ data: View[]; next_cursor: string | null }> {
  const { query, scope } = page;
  const after = query.cursor ? decodeCursor(query.cursor, scope, page.isPosition) : undefined;
  const rows = await page.fetch(query.limit + 1, after);
  return pageOf(rows, query.limit, page.positionOf, scope, page.toView);
}
