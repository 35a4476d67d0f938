import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ApiFailure } from '../api/failure.ts';
import { unwrap } from '../api/http.ts';
import { runtime, setRuntimeToken } from '../api/runtime.ts';
import { Busy } from '../ui/Busy.tsx';
import { ErrorNotice } from '../ui/ErrorNotice.tsx';
import { useAction, useResource } from '../ui/use-resource.ts';

/** Whether the runtime lets this page in as it is (on loopback without STUDIO_RUNTIME_TOKEN it does). */
async function letsUsIn(): Promise<boolean> {
  try {
    unwrap(await runtime.GET('/api/status', {}));
    return true;
  } catch (failure) {
    if (failure instanceof ApiFailure && failure.status === 401) return false;
    return true; // any other failure is the pages' to show
  }
}

/**
 * Asks for STUDIO_RUNTIME_TOKEN when the runtime answers 401, and keeps it in memory only: a reload
 * asks again, and nothing is stored in the browser.
 */
export function TokenGate({ children }: { children: ComponentChildren }) {
  const open = useResource(letsUsIn);
  const [token, setToken] = useState('');
  const enter = useAction(async () => {
    setRuntimeToken(token);
    try {
      unwrap(await runtime.GET('/api/status', {}));
    } catch (failure) {
      setRuntimeToken(undefined);
      throw failure;
    }
    setToken('');
    await open.reload();
  });
  if (open.loading && open.data === undefined) return <Busy label="Connecting to the runtime" />;
  if (open.data !== false) return <>{children}</>;
  return (
    <main class="signin">
      <h1>Studio runtime</h1>
      <p>This runtime needs its token (STUDIO_RUNTIME_TOKEN). The page keeps it in memory only.</p>
      <form
        aria-label="Connect to the runtime"
        onSubmit={(event) => {
          event.preventDefault();
          void enter.act();
        }}
      >
        <div class="field">
          <label for="runtime-token">Runtime token</label>
          <input
            id="runtime-token"
            type="password"
            autocomplete="off"
            required
            value={token}
            onInput={(event) => setToken(event.currentTarget.value)}
          />
        </div>
        <button type="submit" class="primary" disabled={enter.busy}>
          Connect
        </button>
      </form>
      <ErrorNotice error={enter.error} />
    </main>
  );
}
