/** Counts iterations of the event loop: a check-phase callback that queues itself for the next. */
export function loopCounter() {
  let iterations = 0;
  let running = true;
  const tick = () => {
    iterations++;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  return {
    now: () => iterations,
    stop: () => {
      running = false;
    },
  };
}
