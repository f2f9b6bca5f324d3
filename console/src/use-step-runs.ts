/**
 * The runs of a container step as a list to page through and filter by status, with how many runs have
 * each status. The step's entry carries its first runs: when they are all of them, everything is done
 * here; otherwise the runs endpoint (api.ts listStepRuns) gives the pages, and counting pages through it
 * all (docs/console.md#composition).
 */
import type { Step, StepRun, StepRunStatus } from '@switchyard/client/browser';
import { useEffect, useRef, useState } from 'preact/hooks';
import { listStepRuns } from './api';
import { useInterval } from './use-async';

/** Runs added by "Load more". */
export const RUNS_PAGE = 20;
/** Runs per request while counting: the API's largest page. */
const COUNT_PAGE = 100;
/**
 * Up to this many runs are counted by themselves, again every 10 s while the step runs; more on request
 * only: each page of the runs endpoint reads the execution's history again (docs/api.md#steps-that-hold-steps).
 */
const AUTO_COUNT_MAX = 1000;
const RECOUNT_MS = 10_000;

const ACTIVE = new Set(['running', 'waiting']);

export type StatusCounts = Partial<Record<StepRunStatus, number>>;

export interface StepRuns {
  runs: StepRun[];
  /** All the runs of the step, whatever the filter. */
  total: number;
  /** Runs with each status; undefined until counted. */
  counts: StatusCounts | undefined;
  /** Counts by paging through the runs endpoint, when the runs are not all here; undefined otherwise. */
  count: (() => void) | undefined;
  counting: boolean;
  filter: StepRunStatus | null;
  setFilter: (status: StepRunStatus | null) => void;
  hasMore: boolean;
  loadMore: () => Promise<void>;
  /** Runs of the step that this list cannot show (a nested container's beyond its first runs). */
  unshown: number;
  busy: boolean;
  error: unknown;
}

function countByStatus(runs: readonly StepRun[]): StatusCounts {
  const counts: StatusCounts = {};
  for (const run of runs) counts[run.status] = (counts[run.status] ?? 0) + 1;
  return counts;
}

/**
 * `pageable`: whether the runs endpoint pages through this step's runs alone (a top-level container; one
 * nested in another has runs in each of the outer one's runs, and shows the first ones of each).
 */
export function useStepRuns(executionId: string, step: Step, pageable: boolean): StepRuns {
  const embedded = step.runs ?? [];
  const total = step.runs_total ?? embedded.length;
  const paged = pageable && embedded.length < total;
  const [filter, setFilterState] = useState<StepRunStatus | null>(null);
  const [listed, setListed] = useState<{ runs: StepRun[]; cursor: string | null } | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  // Answers for an earlier filter are dropped.
  const generation = useRef(0);
  const counted = useRunCounts(executionId, step, paged, total <= AUTO_COUNT_MAX);

  const fetchPage = async (status: StepRunStatus | null, cursor: string | null, limit: number) => {
    const mine = generation.current;
    setBusy(true);
    setError(undefined);
    try {
      const page = await listStepRuns(executionId, step.id, {
        limit,
        ...(status ? { status } : {}),
        ...(cursor ? { cursor } : {}),
      });
      if (mine !== generation.current) return;
      setListed((before) => ({
        runs: [...(cursor ? (before?.runs ?? []) : []), ...page.data],
        cursor: page.next_cursor,
      }));
    } catch (caught) {
      if (mine === generation.current) setError(caught);
    } finally {
      if (mine === generation.current) setBusy(false);
    }
  };

  const setFilter = (status: StepRunStatus | null) => {
    generation.current++;
    setFilterState(status);
    setListed(null);
    setError(undefined);
    setBusy(false);
    if (paged && status) void fetchPage(status, null, RUNS_PAGE);
  };

  if (!paged) {
    return {
      runs: filter ? embedded.filter((run) => run.status === filter) : embedded,
      total,
      counts: embedded.length >= total ? countByStatus(embedded) : undefined,
      count: undefined,
      counting: false,
      filter,
      setFilter,
      hasMore: false,
      loadMore: async () => undefined,
      unshown: total - embedded.length,
      busy: false,
      error: undefined,
    };
  }
  return {
    // Unfiltered and nothing loaded yet: the first runs, as the step's entry has them now.
    runs: listed?.runs ?? (filter ? [] : embedded),
    total,
    counts: counted.counts,
    count: counted.count,
    counting: counted.counting,
    filter,
    setFilter,
    hasMore: listed ? listed.cursor !== null : !filter,
    // The first "Load more" asks for the runs already shown and the next page at once.
    loadMore: () =>
      listed
        ? fetchPage(filter, listed.cursor, RUNS_PAGE)
        : fetchPage(filter, null, embedded.length + RUNS_PAGE),
    unshown: 0,
    busy,
    error: error ?? counted.countError,
  };
}

/**
 * Every run's status, paged through the runs endpoint when `enabled`: at once and again every 10 s while
 * the step runs when `automatic`, on request (`count`) otherwise.
 */
function useRunCounts(executionId: string, step: Step, enabled: boolean, automatic: boolean) {
  const [counts, setCounts] = useState<StatusCounts | undefined>(undefined);
  const [countError, setCountError] = useState<unknown>(undefined);
  const [counting, setCounting] = useState(false);
  // Each request to count (a recount, a click) is one round; 0: none asked for yet.
  const [round, setRound] = useState(automatic ? 1 : 0);
  useInterval(() => setRound((n) => n + 1), RECOUNT_MS, enabled && automatic && ACTIVE.has(step.status));

  useEffect(() => {
    if (!enabled || round === 0) return;
    let stopped = false;
    const count = async () => {
      const found: StatusCounts = {};
      let cursor: string | null = null;
      do {
        const page = await listStepRuns(executionId, step.id, {
          limit: COUNT_PAGE,
          ...(cursor ? { cursor } : {}),
        });
        if (stopped) return;
        for (const run of page.data) found[run.status] = (found[run.status] ?? 0) + 1;
        cursor = page.next_cursor;
      } while (cursor);
      setCounts(found);
      setCountError(undefined);
    };
    setCounting(true);
    count()
      .catch((caught: unknown) => {
        if (!stopped) setCountError(caught);
      })
      .finally(() => {
        if (!stopped) setCounting(false);
      });
    return () => {
      stopped = true;
    };
    // A finished step is counted again when it changes (a retry).
  }, [executionId, step.id, enabled, automatic && step.status, automatic && step.runs_total, round]);

  return {
    counts,
    countError,
    counting,
    count: automatic ? undefined : () => setRound((n) => n + 1),
  };
}
