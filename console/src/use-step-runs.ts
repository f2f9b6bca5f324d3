/**
 * The runs of a container step as a list to page through and filter by status, with how many runs have
 * each status. The step's entry carries its first runs: when they are all of them, everything is done
 * here; otherwise the runs endpoint (api.ts listStepRuns) gives the pages, and counting pages through it
 * all, again while the step runs.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { listStepRuns } from './api';
import type { RunStep, StepRun } from './composition';
import { useInterval } from './use-async';

/** Runs added by "Load more". */
export const RUNS_PAGE = 20;
/** Runs per request while counting: the API's largest page. */
const COUNT_PAGE = 100;
/** While the step runs, its counts are read again this often. */
const RECOUNT_MS = 10_000;

const ACTIVE = new Set(['running', 'waiting']);

export interface StepRuns {
  runs: StepRun[];
  /** All the runs of the step, whatever the filter. */
  total: number;
  /** Runs with each status; undefined until counted (or when they cannot be: `pageable` false). */
  counts: Record<string, number> | undefined;
  filter: string | null;
  setFilter: (status: string | null) => void;
  hasMore: boolean;
  loadMore: () => Promise<void>;
  /** Runs of the step that this list cannot show (a nested container's beyond its first runs). */
  unshown: number;
  busy: boolean;
  error: unknown;
}

function countByStatus(runs: readonly StepRun[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const run of runs) counts[run.status] = (counts[run.status] ?? 0) + 1;
  return counts;
}

/**
 * `pageable`: whether the runs endpoint names this step's runs (a top-level container; one nested in
 * another has runs in each of the outer one's runs, and shows its first ones only).
 */
export function useStepRuns(executionId: string, step: RunStep, pageable: boolean): StepRuns {
  const embedded = step.runs ?? [];
  const total = step.runs_total ?? embedded.length;
  const paged = pageable && embedded.length < total;
  const [filter, setFilterState] = useState<string | null>(null);
  const [listed, setListed] = useState<{ runs: StepRun[]; cursor: string | null } | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  // Answers for an earlier filter are dropped.
  const generation = useRef(0);

  const fetchPage = async (status: string | null, cursor: string | null, limit: number) => {
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

  const setFilter = (status: string | null) => {
    generation.current++;
    setFilterState(status);
    setListed(null);
    setError(undefined);
    setBusy(false);
    if (paged && status) void fetchPage(status, null, RUNS_PAGE);
  };

  const counts = useRunCounts(executionId, step, paged);

  if (!paged) {
    return {
      runs: filter ? embedded.filter((run) => run.status === filter) : embedded,
      total,
      counts: embedded.length >= total ? countByStatus(embedded) : undefined,
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
    counts,
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
    error,
  };
}

/** Every run's status, paged through the runs endpoint (when `enabled`); again every 10 s while it runs. */
function useRunCounts(
  executionId: string,
  step: RunStep,
  enabled: boolean,
): Record<string, number> | undefined {
  const [counts, setCounts] = useState<Record<string, number> | undefined>(undefined);
  const [round, setRound] = useState(0);
  const active = ACTIVE.has(step.status);
  useInterval(() => setRound((n) => n + 1), RECOUNT_MS, enabled && active);

  useEffect(() => {
    if (!enabled) return;
    let stopped = false;
    const count = async () => {
      const found: Record<string, number> = {};
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
    };
    // A failed count leaves the last one shown; the list itself reports errors.
    count().catch(() => undefined);
    return () => {
      stopped = true;
    };
  }, [executionId, step.id, enabled, step.status, step.runs_total, round]);

  return counts;
}
