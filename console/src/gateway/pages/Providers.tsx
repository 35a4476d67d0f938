import { useEffect, useState } from 'preact/hooks';
import {
  type ConnectionBody,
  type ConnectionKind,
  type ConnectionPreset,
  type ConnectionView,
  headersOf,
  modelLines,
  modelsOf,
  ownModelId,
} from '../../api/connections.ts';
import { gateway } from '../../api/gateway.ts';
import { unwrap } from '../../api/http.ts';
import { CardForm } from '../../ui/CardForm.tsx';
import { ConfirmDialog, useConfirmation } from '../../ui/ConfirmDialog.tsx';
import { count } from '../../ui/count.ts';
import { ErrorNotice } from '../../ui/ErrorNotice.tsx';
import { formatWhen } from '../../ui/format.ts';
import { ListTable } from '../../ui/ListTable.tsx';
import { useAction, useResource } from '../../ui/use-resource.ts';

// Records: the build fails when the API takes a kind or a preset this page does not offer.
const KIND_LABELS: Record<ConnectionKind, string> = {
  openai_compatible: 'OpenAI-compatible server',
  azure_openai: 'Azure OpenAI',
  bedrock: 'Amazon Bedrock',
  openai: 'OpenAI',
  anthropic: 'Anthropic',
  gemini: 'Google Gemini',
};
const PRESET_LABELS: Record<ConnectionPreset, string> = {
  openai: 'OpenAI',
  anthropic: 'Anthropic',
  gemini: 'Google Gemini',
  groq: 'Groq',
  together: 'Together AI',
  mistral: 'Mistral',
  deepseek: 'DeepSeek',
  xai: 'xAI',
  fireworks: 'Fireworks AI',
  openrouter: 'OpenRouter',
  perplexity: 'Perplexity',
  cerebras: 'Cerebras',
  ollama: 'Ollama (local)',
  vllm: 'vLLM (local)',
  lmstudio: 'LM Studio (local)',
};
/** The presets of a native API; every other preset is an OpenAI-compatible server. */
const NATIVE_PRESETS: readonly string[] = ['openai', 'anthropic', 'gemini'];
/** Kinds whose upstream is wherever the admin runs it: no preset or default URL. */
const NEEDS_URL: readonly ConnectionKind[] = ['openai_compatible', 'azure_openai'];

/** The form's service: a preset (`preset:groq`) or a kind at a URL of the admin's (`kind:azure_openai`). */
type Service =
  | { preset: ConnectionPreset; kind: ConnectionKind }
  | { preset?: undefined; kind: ConnectionKind };

function serviceOf(value: string): Service {
  const [what, name = ''] = value.split(':');
  if (what === 'preset') {
    const preset = name as ConnectionPreset;
    const kind = NATIVE_PRESETS.includes(preset) ? (preset as ConnectionKind) : 'openai_compatible';
    return { preset, kind };
  }
  return { kind: name as ConnectionKind };
}
const serviceValue = (c: { preset: ConnectionPreset | null; kind: ConnectionKind }) =>
  c.preset ? `preset:${c.preset}` : `kind:${c.kind}`;
const serviceLabel = (c: ConnectionView) =>
  c.preset ? `${PRESET_LABELS[c.preset]} (preset)` : KIND_LABELS[c.kind];

const text = (data: FormData, name: string) => String(data.get(name) ?? '').trim();
const given = (value: string) => (value === '' ? undefined : value);

/** What the form says, as an upsert: fields left empty are left out (on an update, secrets stay). */
function bodyOf(data: FormData, before: ConnectionView | undefined): ConnectionBody {
  const { preset, kind } = serviceOf(String(data.get('service')));
  const headerText = text(data, 'headers');
  const headers =
    headerText !== '' ? headersOf(headerText) : data.get('clear_headers') === 'on' ? {} : undefined;
  const options =
    kind === 'bedrock'
      ? {
          region: text(data, 'region'),
          access_key_id: given(text(data, 'access_key_id')),
          secret_access_key: given(text(data, 'secret_access_key')),
          session_token: given(text(data, 'session_token')),
        }
      : kind === 'azure_openai'
        ? { auth: text(data, 'auth') === 'bearer' ? ('bearer' as const) : ('api_key' as const) }
        : undefined;
  const models = modelsOf(String(data.get('models') ?? ''), before);
  return {
    id: text(data, 'id'),
    ...(preset ? { preset } : { kind }),
    base_url: given(text(data, 'base_url')),
    api_key: given(text(data, 'api_key')),
    api_version: kind === 'azure_openai' ? given(text(data, 'api_version')) : undefined,
    headers,
    options,
    ...(data.get('discover') === 'on' ? { discover: true } : {}),
    ...(models.length > 0 ? { models } : {}),
  };
}

/** The base URL an update starts from: none for a Bedrock region's own endpoint (a new region makes its own). */
const baseUrlToEdit = (c: ConnectionView) =>
  c.kind === 'bedrock' && c.base_url === `https://bedrock-runtime.${c.options?.region}.amazonaws.com`
    ? ''
    : c.base_url;

/**
 * Provider connections: upstreams the admin reaches with keys of their own, each model of one in
 * the catalog as `<connection>/<model>`. Connect or update one (a key left empty stays), remove one
 * after a confirmation. Keys and header values come back masked only.
 */
export function ProvidersPage() {
  const [editing, setEditing] = useState<ConnectionView | undefined>(undefined);
  // A new key after every save: the form starts over, empty.
  const [saves, setSaves] = useState(0);
  const connections = useResource(async () => {
    const answer = unwrap(await gateway.GET('/v1/ai/providers/list')) as { items: ConnectionView[] };
    return answer.items;
  });
  const removal = useConfirmation<string>((id) => void remove.act(id));
  const save = useAction(async (form: HTMLFormElement) => {
    unwrap(await gateway.POST('/v1/ai/providers/upsert', { body: bodyOf(new FormData(form), editing) }));
    setEditing(undefined);
    setSaves((n) => n + 1);
    await connections.reload();
  });
  const remove = useAction(async (id: string) => {
    unwrap(await gateway.POST('/v1/ai/providers/remove', { body: { id } }));
    if (editing?.id === id) setEditing(undefined);
    await connections.reload();
  });
  useEffect(() => {
    if (editing) document.getElementById('provider-service')?.focus();
  }, [editing]);

  return (
    <section aria-labelledby="providers-title">
      <h1 id="providers-title">Providers</h1>
      <p class="muted">
        Upstreams reached with keys of your own. The models of a connection join the catalog as{' '}
        <code>connection/model</code>; keys and header values are encrypted and never shown again.
      </p>
      <CardForm
        title={editing ? `Update ${editing.id}` : 'Connect a provider'}
        key={`${editing?.id ?? 'new'}-${saves}`}
        onSubmit={(form) => void save.act(form)}
      >
        <ConnectionFields editing={editing} />
        <div class="row">
          <button type="submit" class="primary" disabled={save.busy}>
            {save.busy ? 'Saving…' : editing ? 'Update connection' : 'Connect'}
          </button>
          {editing && (
            <button
              type="button"
              onClick={() => {
                setEditing(undefined);
                save.clearError();
              }}
            >
              Cancel update
            </button>
          )}
        </div>
      </CardForm>
      <ErrorNotice error={save.error ?? remove.error ?? connections.error} />
      {connections.data?.length === 0 ? (
        <div class="notice">
          <p>
            <strong>No provider connections yet.</strong> A connection is an upstream the gateway calls with
            your key: OpenAI, Anthropic, Gemini, Amazon Bedrock, Azure OpenAI, or any OpenAI-compatible server
            (Groq, Mistral, Ollama, vLLM…). Its models join the catalog, callable with every studio's tokens.
          </p>
          <p>
            To add one, fill in the form above: an id, the service (a preset, or a kind and its base URL), its
            API key, and the models it serves, or let the gateway discover the upstream's models.
          </p>
        </div>
      ) : (
        <ListTable
          label="Connections"
          list={connections}
          caption={(items) => count(items.length, 'connection')}
          columns={['Connection', 'Service', 'Base URL', 'Key', 'Models', 'Updated', 'Actions']}
          row={(c) => (
            <tr key={c.id}>
              <th scope="row">
                <code>{c.id}</code>
              </th>
              <td>{serviceLabel(c)}</td>
              <td>
                <code>{c.base_url}</code>
              </td>
              <td>
                <Credentials connection={c} />
              </td>
              <td>
                <details>
                  <summary>
                    {count(c.models.length, 'model')}{' '}
                    <span class={c.discovered ? 'badge ok' : 'badge'}>
                      {c.discovered ? 'discovered' : 'named'}
                    </span>
                  </summary>
                  <ul class="targets">
                    {c.models.map((model) => (
                      <li key={model.id}>
                        <code>{model.id}</code>
                        {model.upstream_id !== ownModelId(c.id, model.id) && (
                          <span class="muted"> → {model.upstream_id}</span>
                        )}
                        {model.modalities.includes('embed') && <span class="muted"> (embeddings)</span>}
                      </li>
                    ))}
                  </ul>
                </details>
              </td>
              <td>{formatWhen(c.updated_at)}</td>
              <td>
                <div class="row">
                  <button
                    type="button"
                    onClick={() => {
                      save.clearError();
                      setEditing(c);
                    }}
                  >
                    Edit <span class="skip">{c.id}</span>
                  </button>
                  <button
                    type="button"
                    class="danger"
                    disabled={remove.busy}
                    onClick={() => removal.ask(c.id)}
                  >
                    Remove <span class="skip">{c.id}</span>
                  </button>
                </div>
              </td>
            </tr>
          )}
        />
      )}
      <ConfirmDialog
        {...removal.dialog}
        title={`Remove connection ${removal.item ?? ''}?`}
        confirmLabel="Remove connection"
        danger
      >
        <p>
          Its models leave the catalog: calls to them fail from now on, and routes over them skip them. Its
          key is forgotten.
        </p>
      </ConfirmDialog>
    </section>
  );
}

/** The key of a connection as the list shows it (masked), its key pair or headers' names if any. */
function Credentials({ connection: c }: { connection: ConnectionView }) {
  const headers = Object.keys(c.headers);
  return (
    <>
      {c.api_key ? <code>{c.api_key}</code> : <span class="muted">no key</span>}
      {c.options?.access_key_id && (
        <div>
          AWS key pair <code>{c.options.access_key_id}</code>
        </div>
      )}
      {c.kind === 'bedrock' && !c.api_key && !c.options?.access_key_id && (
        <div class="muted">AWS credential chain</div>
      )}
      {c.options?.auth === 'bearer' && <div class="muted">sent as a bearer token</div>}
      {headers.length > 0 && <div class="muted">Headers: {headers.join(', ')}</div>}
    </>
  );
}

/** The fields of the form: those of the service picked (its kind's options), started from `editing`. */
function ConnectionFields({ editing }: { editing: ConnectionView | undefined }) {
  const [service, setService] = useState(editing ? serviceValue(editing) : 'kind:openai_compatible');
  const [discover, setDiscover] = useState(editing?.discovered ?? false);
  const { preset, kind } = serviceOf(service);
  const needsUrl = !preset && NEEDS_URL.includes(kind);
  const headerNames = Object.keys(editing?.headers ?? {});
  const keyPair = editing?.options?.access_key_id;
  return (
    <>
      <div class="row">
        <div class="field">
          <label for="provider-id">
            Id <span class="hint">(its models are called as id/model)</span>
          </label>
          <input
            id="provider-id"
            name="id"
            required
            maxLength={63}
            placeholder="groq-eu"
            autoComplete="off"
            spellcheck={false}
            readOnly={editing !== undefined}
            defaultValue={editing?.id ?? ''}
          />
        </div>
        <div class="field">
          <label for="provider-service">Service</label>
          <select
            id="provider-service"
            name="service"
            value={service}
            onChange={(event) => setService(event.currentTarget.value)}
          >
            <optgroup label="A server of yours (its URL)">
              {(Object.entries(KIND_LABELS) as [ConnectionKind, string][]).map(([value, label]) => (
                <option key={value} value={`kind:${value}`}>
                  {NEEDS_URL.includes(value) || value === 'bedrock'
                    ? label
                    : `${label} API at a URL of yours`}
                </option>
              ))}
            </optgroup>
            <optgroup label="A known service (preset)">
              {(Object.entries(PRESET_LABELS) as [ConnectionPreset, string][]).map(([value, label]) => (
                <option key={value} value={`preset:${value}`}>
                  {label}
                </option>
              ))}
            </optgroup>
          </select>
        </div>
      </div>
      <div class="field">
        <label for="provider-base-url">
          Base URL{' '}
          {!needsUrl && (
            <span class="hint">
              (optional:{' '}
              {kind === 'bedrock' ? "the region's endpoint" : preset ? "the preset's" : "the API's own"})
            </span>
          )}
        </label>
        <input
          id="provider-base-url"
          name="base_url"
          type="url"
          required={needsUrl}
          maxLength={2000}
          size={50}
          placeholder={
            kind === 'azure_openai' ? 'https://my-resource.openai.azure.com' : 'https://llm.example.com/v1'
          }
          autoComplete="off"
          spellcheck={false}
          defaultValue={editing ? baseUrlToEdit(editing) : ''}
        />
      </div>
      <div class="field">
        <label for="provider-api-key">
          API key{' '}
          <span class="hint">
            {editing?.api_key
              ? `(left empty, ${editing.api_key} stays)`
              : kind === 'bedrock'
                ? '(optional: a Bedrock API key)'
                : '(optional for a server that needs none)'}
          </span>
        </label>
        <input id="provider-api-key" name="api_key" type="password" maxLength={4096} autoComplete="off" />
      </div>
      {kind === 'azure_openai' && (
        <div class="row">
          <div class="field">
            <label for="provider-api-version">
              API version <span class="hint">(default 2024-10-21)</span>
            </label>
            <input
              id="provider-api-version"
              name="api_version"
              placeholder="2024-10-21"
              autoComplete="off"
              defaultValue={editing?.api_version ?? ''}
            />
          </div>
          <div class="field">
            <label for="provider-auth">Key sent as</label>
            {/* `selected`, not `defaultValue`: a select has no default value of its own in the DOM. */}
            <select id="provider-auth" name="auth">
              <option value="api_key">api-key header</option>
              <option value="bearer" selected={editing?.options?.auth === 'bearer'}>
                Bearer token (Entra ID)
              </option>
            </select>
          </div>
        </div>
      )}
      {kind === 'bedrock' && (
        <div class="row">
          <div class="field">
            <label for="provider-region">AWS region</label>
            <input
              id="provider-region"
              name="region"
              required
              placeholder="us-east-1"
              autoComplete="off"
              spellcheck={false}
              defaultValue={editing?.options?.region ?? ''}
            />
          </div>
          <div class="field">
            <label for="provider-access-key-id">
              Access key id{' '}
              <span class="hint">
                {keyPair ? `(left empty, ${keyPair} stays)` : '(optional: else the AWS credential chain)'}
              </span>
            </label>
            <input id="provider-access-key-id" name="access_key_id" autoComplete="off" spellcheck={false} />
          </div>
          <div class="field">
            <label for="provider-secret-access-key">Secret access key</label>
            <input
              id="provider-secret-access-key"
              name="secret_access_key"
              type="password"
              autoComplete="off"
            />
          </div>
          <div class="field">
            <label for="provider-session-token">
              Session token <span class="hint">(optional)</span>
            </label>
            <input id="provider-session-token" name="session_token" type="password" autoComplete="off" />
          </div>
        </div>
      )}
      {kind !== 'azure_openai' && (
        <div class="field">
          <label class="inline" for="provider-discover">
            <input
              id="provider-discover"
              name="discover"
              type="checkbox"
              checked={discover}
              onChange={(event) => setDiscover(event.currentTarget.checked)}
            />
            Discover the upstream's models (read its model list now)
          </label>
        </div>
      )}
      <div class="field">
        <label for="provider-models">
          Models{' '}
          <span class="hint">
            {discover && kind !== 'azure_openai'
              ? '(optional: added to the discovered ones; one id[=upstream id] a line)'
              : kind === 'azure_openai'
                ? '(one id=deployment a line)'
                : '(one id[=upstream id] a line)'}
          </span>
        </label>
        <textarea
          id="provider-models"
          name="models"
          spellcheck={false}
          placeholder={'fast=llama-3.1-8b-instant\nllama-3.3-70b-versatile'}
          defaultValue={editing && !editing.discovered ? modelLines(editing) : ''}
        />
      </div>
      <div class="field">
        <label for="provider-headers">
          Headers{' '}
          <span class="hint">
            {headerNames.length > 0
              ? `(sent with every call; left empty, ${headerNames.join(', ')} stay)`
              : '(optional, sent with every call: one Name: value a line)'}
          </span>
        </label>
        <textarea
          id="provider-headers"
          name="headers"
          spellcheck={false}
          placeholder="OpenAI-Organization: org-123"
        />
        {headerNames.length > 0 && (
          <label class="inline" for="provider-clear-headers">
            <input id="provider-clear-headers" name="clear_headers" type="checkbox" /> Remove the headers set
            before
          </label>
        )}
      </div>
    </>
  );
}
