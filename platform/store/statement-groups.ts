/**
 * Group commit for a statement that many runs send one at a time (the gates' one-statement paths): while
 * one group's statement is in flight, the requests that arrive wait for it and then go together, as one
 * statement of arrays. A lone request goes at once (on the next turn of the event loop), so grouping adds
 * no wait when the database is idle, and under load it saves a round trip and a commit per request: on
 * PGlite, which runs one statement at a time in this process, most of a short statement's cost. Built on
 * DataLoader (batching without its cache).
 *
 * A group that fails for the database's sake (database_unavailable) fails every request in it, as each
 * would have alone. Any other error (one request's bad row failing the statement) sends each request again
 * alone, so that one request's error is its own.
 */
import DataLoader from 'dataloader';
import { AppError } from '../errors';
import type { Database } from './db';

/** At most this many requests in one statement (its arrays stay small, its locks few). */
export const MAX_GROUP = 64;

/** Groups of one statement in flight at once on a PostgreSQL server (of its pool's connections, 10 by default). */
const SERVER_GROUPS_IN_FLIGHT = 4;

/** How many groups `db` takes at once: PGlite runs one statement at a time. */
export const groupsInFlight = (db: Database): number => (db.kind === 'pglite' ? 1 : SERVER_GROUPS_IN_FLIGHT);

export type GroupedStatement<Request, Result> = (request: Request) => Promise<Result>;

/**
 * `run` answers each request of a group, in order. At most `inFlight` groups are sent at once: 1 on PGlite
 * (one statement at a time anyway); a few on a server, so that a group waiting for one key's lock does not
 * hold up every other request of the process.
 */
export function groupedStatement<Request, Result>(
  run: (requests: readonly Request[]) => Promise<Result[]>,
  inFlight = 1,
): GroupedStatement<Request, Result> {
  // Groups sent or about to be (their dispatch scheduled), at most `inFlight`; the others wait their turn.
  let busy = 0;
  const waiting: (() => void)[] = [];
  const loader = new DataLoader<Request, Result>(
    async (requests) => {
      try {
        return await answer(run, requests);
      } finally {
        // The freed place goes to the next waiting group, else it is free.
        const next = waiting.shift();
        if (next) next();
        else busy -= 1;
      }
    },
    {
      cache: false,
      maxBatchSize: MAX_GROUP,
      // The group forming now is sent once a place is free; requests join it until then.
      batchScheduleFn: (dispatch) => {
        if (busy < inFlight) {
          busy += 1;
          setImmediate(dispatch);
        } else waiting.push(dispatch);
      },
    },
  );
  return (request) => loader.load(request);
}

async function answer<Request, Result>(
  run: (requests: readonly Request[]) => Promise<Result[]>,
  requests: readonly Request[],
): Promise<(Result | Error)[]> {
  try {
    const results = await run(requests);
    if (results.length !== requests.length)
      throw new Error(`A grouped statement answered ${results.length} of ${requests.length} requests`);
    return results;
  } catch (error) {
    if (requests.length === 1 || (error instanceof AppError && error.code === 'database_unavailable'))
      return requests.map(() => asError(error));
    return Promise.all(
      requests.map((request) =>
        run([request]).then(
          ([result]) => result as Result,
          (alone: unknown) => asError(alone),
        ),
      ),
    );
  }
}

/**
 * One set of grouped statements per Database (`create` makes it on first use): requests group only with
 * those sent through the same database.
 */
export function groupsPerDatabase<Groups extends object>(
  create: (db: Database) => Groups,
): (db: Database) => Groups {
  const made = new WeakMap<Database, Groups>();
  return (db) => {
    let groups = made.get(db);
    if (!groups) {
      groups = create(db);
      made.set(db, groups);
    }
    return groups;
  };
}

const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));
