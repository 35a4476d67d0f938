interface Beat {
  timer: NodeJS.Timeout;
  listeners: Set<() => void>;
}

const beats = new Map<number, Beat>();

/**
 * Calls `listener` every `ms`, on one timer shared by every listener with the same period (a
 * thousand SSE connections need one timer, not a thousand). Returns the function that stops it.
 */
export function onHeartbeat(ms: number, listener: () => void): () => void {
  let beat = beats.get(ms);
  if (!beat) {
    const listeners = new Set<() => void>();
    const timer = setInterval(() => {
      for (const each of listeners) each();
    }, ms);
    timer.unref();
    beat = { timer, listeners };
    beats.set(ms, beat);
  }
  // Each caller gets its own entry, so the same function registered twice is stopped independently.
  const entry = () => listener();
  beat.listeners.add(entry);
  const current = beat;
  return () => {
    current.listeners.delete(entry);
    if (current.listeners.size === 0 && beats.get(ms) === current) {
      clearInterval(current.timer);
      beats.delete(ms);
    }
  };
}
