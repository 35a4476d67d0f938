import { useState } from 'preact/hooks';
import { unwrap } from '../../api/http.ts';
import { runtime } from '../../api/runtime.ts';
import { Busy } from '../../ui/Busy.tsx';
import { EmptyState } from '../../ui/EmptyState.tsx';
import { ErrorNotice } from '../../ui/ErrorNotice.tsx';
import { useAction, useResource } from '../../ui/use-resource.ts';
import { ActionForm } from '../plugins/ActionForm.tsx';
import type { PluginActionSummary, PluginStatus, PluginSummary } from '../plugins/records.ts';

const STATE_BADGE = { running: 'ok', starting: 'warn', stopped: 'warn', failed: 'bad' } as const;

/** The plugins: availability and its reasons, start/stop/restart, and a form to run each action. */
export function PluginsPage() {
  const plugins = useResource(async () => {
    const [summary, list] = await Promise.all([
      runtime.GET('/api/ui/plugins', {}),
      runtime.GET('/api/plugins/list', {}),
    ]);
    const states = new Map(
      (unwrap(list) as { plugins: PluginStatus[] }).plugins.map((status) => [status.name, status]),
    );
    return (unwrap(summary) as { plugins: PluginSummary[] }).plugins.map((plugin) => ({
      plugin,
      status: states.get(plugin.name),
    }));
  });
  const control = useAction(async (pluginName: string, action: 'start' | 'stop' | 'restart') => {
    try {
      unwrap(await runtime.POST('/api/plugins/control', { body: { pluginName, action } }));
    } finally {
      await plugins.reload();
    }
  });
  return (
    <section aria-labelledby="plugins-title">
      <h1 id="plugins-title">Plugins</h1>
      <ErrorNotice error={control.error ?? plugins.error} />
      {plugins.loading && !plugins.data && <Busy label="Loading plugins" />}
      {plugins.data?.length === 0 && (
        <EmptyState
          what="No plugins."
          how="Plugins give the agent its tools (files, chat, MCP): every built-in one is listed here unless STUDIO_PLUGINS_DISABLED names it."
        />
      )}
      {plugins.data?.map(({ plugin, status }) => (
        <PluginCard
          key={plugin.name}
          plugin={plugin}
          status={status}
          busy={control.busy}
          onControl={(action) => void control.act(plugin.name, action)}
        />
      ))}
    </section>
  );
}

function PluginCard(props: {
  plugin: PluginSummary;
  status: PluginStatus | undefined;
  busy: boolean;
  onControl(action: 'start' | 'stop' | 'restart'): void;
}) {
  const { plugin, status } = props;
  const [running, setRunning] = useState<PluginActionSummary | undefined>(undefined);
  const titleId = `plugin-${plugin.name}`;
  const { availability } = plugin;
  return (
    <section class="card" aria-labelledby={titleId}>
      <h2 id={titleId}>{plugin.name}</h2>
      <p class="row">
        {status && (
          <>
            <span class="muted">v{status.version}</span>
            <span class={`badge ${STATE_BADGE[status.state]}`}>{status.state}</span>
          </>
        )}
        <span class={`badge ${availability.available ? 'ok' : 'bad'}`}>
          {availability.available ? 'available' : 'unavailable'}
        </span>
      </p>
      {availability.reasons.length > 0 && (
        <ul aria-label={`Why ${plugin.name} is unavailable`}>
          {availability.reasons.map((reason) => (
            <li key={reason}>{reason}</li>
          ))}
        </ul>
      )}
      {status?.error && <p class="notice error">{status.error}</p>}
      <div class="row">
        {(['start', 'stop', 'restart'] as const).map((action) => (
          <button
            key={action}
            type="button"
            disabled={props.busy}
            aria-label={`${action[0]?.toUpperCase()}${action.slice(1)} ${plugin.name}`}
            onClick={() => props.onControl(action)}
          >
            {action[0]?.toUpperCase()}
            {action.slice(1)}
          </button>
        ))}
      </div>
      {plugin.config.actions.length > 0 && (
        <div class="table-wrap">
          <table>
            <caption class="muted">Actions of {plugin.name}</caption>
            <thead>
              <tr>
                <th scope="col">Action</th>
                <th scope="col">Description</th>
                <th scope="col">Served at</th>
                <th scope="col">Run</th>
              </tr>
            </thead>
            <tbody>
              {plugin.config.actions.map((action) => (
                <tr key={action.name}>
                  <th scope="row">
                    <code>{action.name}</code>
                  </th>
                  <td>{action.description}</td>
                  <td>
                    <code>POST /api/plugins/action</code>
                    {action.supportsApi && action.apiPath && (
                      <div>
                        <code>
                          {action.apiMethod || 'POST'} {action.apiPath}
                        </code>
                      </div>
                    )}
                    {action.supportsCommand && <div class="muted">also a command</div>}
                  </td>
                  <td>
                    <button
                      type="button"
                      aria-expanded={running?.name === action.name}
                      aria-label={`Run ${plugin.name}.${action.name}…`}
                      onClick={() => setRunning(running?.name === action.name ? undefined : action)}
                    >
                      Run…
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {running && <ActionForm key={running.name} plugin={plugin.name} action={running} />}
    </section>
  );
}
