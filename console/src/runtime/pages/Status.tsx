import { unwrap } from '../../api/http.ts';
import { runtime } from '../../api/runtime.ts';
import { Busy } from '../../ui/Busy.tsx';
import { ErrorNotice } from '../../ui/ErrorNotice.tsx';
import { useResource } from '../../ui/use-resource.ts';

/** The runtime's health and what it runs: its model, its gateway, its sessions. */
export function StatusPage() {
  const status = useResource(
    async () => unwrap(await runtime.GET('/api/status', {})) as Record<string, unknown>,
  );
  const health = useResource(async () => {
    const response = await fetch('/health');
    return (await response.json()) as { status?: string };
  });
  return (
    <section aria-labelledby="status-title">
      <h1 id="status-title">Status</h1>
      <ErrorNotice error={status.error ?? health.error} />
      {(status.loading || health.loading) && <Busy label="Loading status" />}
      {health.data && (
        <p>
          Health:{' '}
          <span class={`badge ${health.data.status === 'ok' ? 'ok' : 'warn'}`}>
            {health.data.status ?? 'unknown'}
          </span>
        </p>
      )}
      {status.data && (
        <dl>
          {Object.entries(status.data).map(([key, value]) => (
            <div key={key} class="row">
              <dt class="muted">{key}</dt>
              <dd>
                <code>{typeof value === 'string' ? value : JSON.stringify(value)}</code>
              </dd>
            </div>
          ))}
        </dl>
      )}
    </section>
  );
}
