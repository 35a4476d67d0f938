import { useMemo, useState } from 'preact/hooks';
import { unwrap } from '../../api/http.ts';
import { runtime } from '../../api/runtime.ts';
import { ErrorNotice } from '../../ui/ErrorNotice.tsx';
import { useAction } from '../../ui/use-resource.ts';
import type { PluginActionSummary } from './records.ts';
import { fieldsOf, payloadOf, type SchemaField } from './schema-form.ts';

/** Runs one plugin action through `POST /api/plugins/action`, with a field per input property; shows the result. */
export function ActionForm({ plugin, action }: { plugin: string; action: PluginActionSummary }) {
  const fields = useMemo(() => fieldsOf(action.input), [action.input]);
  const [result, setResult] = useState<{ value: unknown } | undefined>(undefined);
  const run = useAction(async (form: HTMLFormElement) => {
    setResult(undefined);
    const answer = unwrap(
      await runtime.POST('/api/plugins/action', {
        body: { pluginName: plugin, actionName: action.name, payload: payloadOf(fields, new FormData(form)) },
      }),
    ) as { result: unknown };
    setResult({ value: answer.result });
  });
  const id = (field: string) => `action-${plugin}-${action.name}-${field}`;
  const title = `${plugin}.${action.name}`;
  return (
    <form
      class="card"
      aria-label={`Run ${title}`}
      onSubmit={(event) => {
        event.preventDefault();
        void run.act(event.currentTarget);
      }}
    >
      <h3>Run {title}</h3>
      <p class="muted">{action.description}</p>
      {fields ? (
        fields.map((field) => <Field key={field.name} field={field} id={id(field.name)} />)
      ) : (
        <div class="field">
          <label for={id('payload')}>Payload (JSON)</label>
          <textarea id={id('payload')} name="payload" class="mono" placeholder="{}" />
        </div>
      )}
      <button type="submit" class="primary" disabled={run.busy}>
        {run.busy ? 'Running…' : `Run ${title}`}
      </button>
      <ErrorNotice error={run.error} />
      {result && (
        <section class="field" aria-labelledby={id('result')}>
          <h4 id={id('result')}>Result</h4>
          <pre class="secret">{JSON.stringify(result.value, null, 2)}</pre>
        </section>
      )}
    </form>
  );
}

function Field({ field, id }: { field: SchemaField; id: string }) {
  const label = (
    <label for={id}>
      {field.name}
      {!field.required && <span class="hint"> (optional)</span>}
      {field.description && <span class="hint"> {field.description}</span>}
    </label>
  );
  const common = { id, name: field.name, required: field.required };
  switch (field.kind) {
    case 'boolean':
      return (
        <div class="field row">
          <input type="checkbox" {...common} required={false} />
          {label}
        </div>
      );
    case 'choice':
      return (
        <div class="field">
          {label}
          <select {...common}>
            {!field.required && <option value="" />}
            {field.choices?.map((choice) => (
              <option key={choice} value={choice}>
                {choice}
              </option>
            ))}
          </select>
        </div>
      );
    case 'long-text':
    case 'json':
      return (
        <div class="field">
          {label}
          <textarea {...common} class={field.kind === 'json' ? 'mono' : undefined} />
        </div>
      );
    default:
      return (
        <div class="field">
          {label}
          <input
            {...common}
            type={field.kind === 'text' ? 'text' : 'number'}
            step={field.kind === 'integer' ? 1 : 'any'}
          />
        </div>
      );
  }
}
