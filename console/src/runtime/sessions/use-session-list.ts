import { useCallback, useEffect, useState } from 'preact/hooks';
import type { Session } from '../../../../sdk/types.ts';
import { agent } from '../../api/runtime.ts';
import { asFailure } from '../failure.ts';

const PAGE = 50;

/** The sessions, newest first: the first page at once, the next ones on demand (the list's cursor). */
export function useSessionList() {
  const [items, setItems] = useState<Session[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<unknown>(undefined);
  const load = useCallback(async (after: string | null) => {
    setLoading(true);
    try {
      const page = await agent().list({ limit: PAGE, ...(after ? { cursor: after } : {}) });
      setItems((current) => (after ? [...current, ...page.items] : page.items));
      setCursor(page.next_cursor);
      setError(undefined);
    } catch (failure) {
      setError(asFailure(failure));
    } finally {
      setLoading(false);
    }
  }, []);
  useEffect(() => {
    void load(null);
  }, [load]);
  return {
    items,
    loading,
    error,
    more: cursor !== null,
    loadMore: () => load(cursor),
    /** The first page again (after a change to the list). */
    reload: () => load(null),
  };
}
