/** The timer of this process as loaded, so a test that fakes `setTimeout` (vi.useFakeTimers) still polls. */
const realSetTimeout = globalThis.setTimeout;
const now = Date.now;

/**
 * The one way tests wait for a condition: unit tests beside the code and the suites under test/ use it.
 * Polls `check` (sync or async) every 20 ms until it holds; throws `timed out waiting until <what>` after `ms`.
 */
export async function waitUntil(
  check: () => boolean | Promise<boolean>,
  what: string,
  ms = 30_000,
): Promise<void> {
  const deadline = now() + ms;
  for (;;) {
    if (await check()) return;
    if (now() >= deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => realSetTimeout(resolve, 20));
  }
}
