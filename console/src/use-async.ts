/** Loading data for a page: the value, the error, whether a load is under way, and a way to load again. */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface AsyncState<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  /** Loads again; the current data stays on screen until the new one arrives. */
  reload: () => Promise<void>;
}

export function useAsync<T>(load: () => Promise<T>, deps: readonly unknown[]): AsyncState<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [loading, setLoading] = useState(true);
  // Answers of an older load (filters changed meanwhile) are dropped.
  const generation = useRef(0);
  const loadRef = useRef(load);
  loadRef.current = load;

  const reload = useCallback(async () => {
    const mine = ++generation.current;
    setLoading(true);
    try {
      const value = await loadRef.current();
      if (mine !== generation.current) return;
      setData(value);
      setError(undefined);
    } catch (caught) {
      if (mine !== generation.current) return;
      setError(caught);
    } finally {
      if (mine === generation.current) setLoading(false);
    }
  }, []);

  useEffect(() => {
    setData(undefined);
    void reload();
  }, deps);

  return { data, error, loading, reload };
}

/** Calls `tick` every `ms` while `enabled`, and not while the tab is hidden. */
export function useInterval(tick: () => void, ms: number, enabled: boolean): void {
  const tickRef = useRef(tick);
  tickRef.current = tick;
  useEffect(() => {
    if (!enabled) return;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') tickRef.current();
    }, ms);
    return () => clearInterval(timer);
  }, [ms, enabled]);
}
