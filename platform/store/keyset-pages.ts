/**
 * Keyset pagination for the stores' listings (docs/api.md#pagination): a page is at most `limit` rows, those
 * that sort after the position of the last row of the previous page. Each listing sorts on a key no two rows
 * share, so a page neither repeats nor skips a row when rows are added or removed between two pages.
 */
import type { Queryable } from './db';

/** Which page: at most `limit` rows, after `after` (from the start without one). */
export interface PageRequest<Position = string> {
  limit: number;
  /** The position of the last row already seen; without one, or with an empty one, the page is the first. */
  after?: Position | undefined;
}

/** The position as a query parameter: null (no cursor condition) without one. */
const positionParam = <Position>(page: PageRequest<Position>): Position | null => page.after || null;

/** How a later row compares with a position, and the `order by` suffix, for either direction. */
const directionOf = (descending = false) =>
  descending ? { later: '<', suffix: ' desc' } : { later: '>', suffix: '' };

/**
 * The rows of `select` (which ends in a `where` clause over `params`) whose `key` sorts after `page.after`, by
 * that key: ascending, or descending (newest first) where `descending` says so.
 */
export function pageByKey<Row>(
  db: Queryable,
  select: string,
  params: unknown[],
  order: { key: string; type: 'text' | 'int' | 'bigint'; descending?: boolean },
  page: PageRequest<string | number>,
): Promise<Row[]> {
  const after = `$${params.length + 1}`;
  const limit = `$${params.length + 2}`;
  const { later, suffix } = directionOf(order.descending);
  return db.query<Row>(
    `${select} and (${after}::${order.type} is null or ${order.key} ${later} ${after})
      order by ${order.key}${suffix} limit ${limit}`,
    [...params, positionParam(page), page.limit],
  );
}

/**
 * The rows of `table` where the `scope` column is `scopeValue`, in order of creation (`created_at, id`;
 * descending: newest first), after the row whose id is `page.after`. The position is that row's stored
 * (microsecond) timestamp, not a rounded copy a cursor could carry.
 */
export function pageByCreation<Row>(
  db: Queryable,
  listing: { table: string; columns: string; scope: string; descending?: boolean },
  scopeValue: string,
  page: PageRequest,
): Promise<Row[]> {
  const { table, columns, scope } = listing;
  const { later, suffix } = directionOf(listing.descending);
  return db.query<Row>(
    `select ${columns} from ${table}
      where ${scope} = $1
        and ($3::text is null or (created_at, id) ${later} (select created_at, id from ${table} where ${scope} = $1 and id = $3))
      order by created_at${suffix}, id${suffix} limit $2`,
    [scopeValue, page.limit, positionParam(page)],
  );
}
