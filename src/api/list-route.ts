/**
 * A keyset-paginated list endpoint (docs/api.md#pagination). Every such list takes `limit` and `cursor`,
 * answers a page of its items with a next_cursor, and a 400 for a cursor it did not issue (LIST_CURSOR);
 * its declaration names only what is its own: the items, what its cursors are bound to, where the rows come
 * from and the position of a row.
 */
import { z } from 'zod';
import type { Scope } from '../../platform/store/api-keys';
import type { PageRequest } from '../../platform/store/keyset-pages';
import { keysetPage } from '../http/cursor';
import {
  cursorParam,
  defineRoute,
  limitParam,
  paginated,
  type AnyRoute,
  type Infer,
  type RouteContext,
} from './route';
import { pageExample } from './schemas';
import { LIST_CURSOR } from './semantic-errors';

const listQuery = <F extends z.ZodRawShape>(filters: F) =>
  z.strictObject({ ...filters, limit: limitParam, cursor: cursorParam });

type ListContext<P, F extends z.ZodRawShape> = RouteContext<
  Infer<P>,
  z.output<ReturnType<typeof listQuery<F>>>,
  undefined
>;

export interface ListRouteDefinition<
  P extends z.ZodType | undefined,
  Row,
  Position,
  View,
  F extends z.ZodRawShape = Record<never, never>,
> {
  /** OpenAPI form: /v1/webhooks/{id}/deliveries */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  auth: Scope;
  params?: P;
  /** Query parameters that filter the list, besides `limit` and `cursor` (`scope` must include them). */
  filters?: F;
  /** The 200 response: a page of `item` (the list's OpenAPI schema is named `id`), shown with one `example`. */
  page: { description: string; item: z.ZodType; id: string; example: unknown };
  /** Error statuses besides the 400 every list answers: 404 for a list under a resource that may be missing. */
  errors?: number[];
  /** Runs before the page is read; throws when the request must not be answered (the resource is missing). */
  check?: (ctx: ListContext<P, F>) => Promise<void>;
  /** What a cursor is bound to: the list, its workspace and filters; a cursor of another is a 400. */
  scope: (ctx: ListContext<P, F>) => unknown;
  isPosition: (value: unknown) => value is Position;
  /** The rows of one page, in the list's order. */
  fetch: (ctx: ListContext<P, F>, page: PageRequest<Position>) => Promise<Row[]>;
  /** The position of a row, which a cursor after it holds. */
  positionOf: (row: Row) => Position;
  toView: (row: Row) => View;
}

export function defineListRoute<
  P extends z.ZodType | undefined = undefined,
  Row = unknown,
  Position = unknown,
  View = unknown,
  F extends z.ZodRawShape = Record<never, never>,
>(list: ListRouteDefinition<P, Row, Position, View, F>): AnyRoute {
  const { page } = list;
  return defineRoute<P, ReturnType<typeof listQuery<F>>>({
    method: 'get',
    path: list.path,
    operationId: list.operationId,
    summary: list.summary,
    tag: list.tag,
    auth: list.auth,
    params: list.params,
    query: listQuery((list.filters ?? {}) as F),
    responses: {
      200: {
        description: page.description,
        schema: paginated(page.item, page.id),
        example: pageExample(page.example),
      },
    },
    errors: [400, ...(list.errors ?? [])],
    semanticErrors: [LIST_CURSOR],
    handler: async (ctx) => {
      await list.check?.(ctx);
      return {
        status: 200,
        body: await keysetPage({
          // Generic in the filters, the query's type loses sight of its own `limit` and `cursor`.
          query: ctx.query as { limit: number; cursor?: string | undefined },
          scope: list.scope(ctx),
          isPosition: list.isPosition,
          fetch: (limit, after) => list.fetch(ctx, { limit, after }),
          positionOf: list.positionOf,
          toView: list.toView,
        }),
      };
    },
  });
}
