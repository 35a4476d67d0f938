import type { EventSourceMessage } from 'eventsource-parser';
import { useEffect, useRef, useState } from 'preact/hooks';
import { type FollowState, followLog } from '../api/follow.ts';

export interface Follow {
  state: FollowState | 'off';
  /** Why it is reconnecting or was refused. */
  error: unknown;
}

/**
 * Follows the log with `query` while the component is shown (none while `query` is undefined);
 * `onEvent` sees each event. A new query starts a new follow.
 */
export function useFollow(
  query: Record<string, string> | undefined,
  onEvent: (event: EventSourceMessage) => void,
): Follow {
  const [follow, setFollow] = useState<Follow>({ state: 'off', error: undefined });
  const handler = useRef(onEvent);
  handler.current = onEvent;
  const key = query === undefined ? undefined : JSON.stringify(query);
  // The query rendered last: a follow of an earlier one is closed only after the render, and an
  // event it delivers in between must not reach a page that already shows the new query's.
  const current = useRef(key);
  current.current = key;
  useEffect(() => {
    if (query === undefined) {
      setFollow({ state: 'off', error: undefined });
      return;
    }
    const controller = new AbortController();
    void followLog(
      query,
      {
        onEvent: (event) => {
          if (current.current === key && !controller.signal.aborted) handler.current(event);
        },
        onState: (state, error) => setFollow({ state, error }),
      },
      controller.signal,
    );
    return () => controller.abort();
  }, [key]);
  return follow;
}

/** Calls `reload` after events of `query` arrive, once per burst (a burst of generations, one reload). */
export function useReloadOnEvents(
  query: Record<string, string> | undefined,
  reload: () => Promise<void>,
  quietMs = 250,
): Follow {
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  return useFollow(query, () => {
    clearTimeout(timer.current);
    timer.current = setTimeout(() => void reload(), quietMs);
  });
}
