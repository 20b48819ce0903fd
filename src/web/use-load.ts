import { useCallback, useEffect, useState } from 'preact/hooks';

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => Promise<void>;
}

/** Loads with `load` when `key` changes; `reload` refreshes in place (no flash of "Loading"). */
export function useLoad<T>(load: () => Promise<T>, key: string): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  // Recreated when `key` changes: `key` names what `load` reads (a fresh closure each render).
  const reload = useCallback(async () => {
    try {
      const data = await load();
      setState({ data, loading: false });
    } catch (error) {
      setState((previous) => ({ ...previous, error, loading: false }));
    }
  }, [key]);
  useEffect(() => {
    setState({ loading: true });
    void reload();
  }, [reload]);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

/**
 * Runs `tick` every `ms` while `active` and the tab is visible, for work the service finishes
 * later (a release cut); one tick at once when the tab comes back into view.
 */
export function usePoll(active: boolean, tick: () => Promise<void>, ms = 2000): void {
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => {
      if (!document.hidden) void tick();
    }, ms);
    const visible = () => {
      if (!document.hidden) void tick();
    };
    document.addEventListener('visibilitychange', visible);
    return () => {
      clearInterval(timer);
      document.removeEventListener('visibilitychange', visible);
    };
  }, [active, tick, ms]);
}

export interface Paged<T> {
  items: T[];
  error: unknown;
  loading: boolean;
  /** Loads the next page; undefined when there is none. */
  more: (() => Promise<void>) | undefined;
  reload: () => Promise<void>;
}

/** A cursor-paged list (`next_cursor`), first page on `key` change, further pages on demand. */
export function usePaged<T>(
  page: (cursor: string | undefined) => Promise<{ items: T[]; next: string | null }>,
  key: string,
): Paged<T> {
  const [state, setState] = useState<{ items: T[]; next: string | null; error?: unknown; loading: boolean }>({
    items: [],
    next: null,
    loading: true,
  });
  // Recreated when `key` changes: `key` names what `page` reads (a fresh closure each render).
  const reload = useCallback(async () => {
    try {
      const first = await page(undefined);
      setState({ items: first.items, next: first.next, loading: false });
    } catch (error) {
      setState((previous) => ({ ...previous, error, loading: false }));
    }
  }, [key]);
  useEffect(() => {
    setState({ items: [], next: null, loading: true });
    void reload();
  }, [reload]);
  const next = state.next;
  const more =
    next === null
      ? undefined
      : async () => {
          try {
            const following = await page(next);
            setState((previous) => ({
              items: [...previous.items, ...following.items],
              next: following.next,
              loading: false,
            }));
          } catch (error) {
            setState((previous) => ({ ...previous, error }));
          }
        };
  return { items: state.items, error: state.error, loading: state.loading, more, reload };
}
