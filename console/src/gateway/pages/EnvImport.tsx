import { useState } from 'preact/hooks';
import { gateway } from '../../api/gateway.ts';
import { unwrap } from '../../api/http.ts';
import { count } from '../../ui/count.ts';
import { ErrorNotice } from '../../ui/ErrorNotice.tsx';
import { TableScroll } from '../../ui/TableScroll.tsx';
import { useAction } from '../../ui/use-resource.ts';

interface ImportAnswer {
  imported: string[];
  skipped: string[];
  errors: { line: number; message: string }[];
}

/**
 * A .env file into the env in one import: pasted, picked, or dropped on the form. The file is read
 * in the page and sent as text; what the gateway could not take comes back line by line.
 */
export function EnvImport({ onImported }: { onImported(): Promise<void> }) {
  const [content, setContent] = useState('');
  const [fileName, setFileName] = useState<string | undefined>(undefined);
  const [dragging, setDragging] = useState(false);
  const [result, setResult] = useState<ImportAnswer | undefined>(undefined);
  const load = async (file: File | undefined) => {
    if (!file) return;
    setContent(await file.text());
    setFileName(file.name);
  };
  const submit = useAction(async (form: HTMLFormElement) => {
    const data = new FormData(form);
    const publicKeys = String(data.get('public') ?? '')
      .split(/[\s,]+/)
      .filter((key) => key !== '');
    setResult(undefined);
    const answer = unwrap(
      await gateway.POST('/v1/env/import', {
        body: { content, overwrite: data.get('overwrite') === 'on', public: publicKeys },
      }),
    ) as ImportAnswer;
    setResult(answer);
    // The values were secrets: once the gateway has them, they do not stay on screen.
    setContent('');
    setFileName(undefined);
    await onImported();
  });

  return (
    <form
      class="card"
      style={dragging ? { outline: '2px dashed var(--accent)' } : undefined}
      aria-label="Import a .env file"
      onSubmit={(event) => {
        event.preventDefault();
        void submit.act(event.currentTarget);
      }}
      onDragOver={(event) => {
        event.preventDefault();
        setDragging(true);
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={(event) => {
        event.preventDefault();
        setDragging(false);
        void load(event.dataTransfer?.files[0]);
      }}
    >
      <h2>Import a .env file</h2>
      <p class="muted">
        Paste it, pick it, or drop it on this form. Every value is encrypted but the public keys.
      </p>
      <div class="field">
        <label for="env-file">File</label>
        <input
          id="env-file"
          type="file"
          accept=".env,text/plain"
          onChange={(event) => void load(event.currentTarget.files?.[0])}
        />
        {fileName && <span class="muted"> read {fileName}</span>}
      </div>
      <div class="field">
        <label for="env-content">Content</label>
        <textarea
          id="env-content"
          rows={8}
          spellcheck={false}
          class="mono"
          value={content}
          placeholder={'OPENAI_API_KEY=sk-…\nOPENAI_BASE_URL=https://…'}
          onInput={(event) => setContent(event.currentTarget.value)}
        />
      </div>
      <div class="row">
        <div class="field">
          <label for="env-import-public">
            Public keys <span class="hint">(comma separated, stored in clear)</span>
          </label>
          <input id="env-import-public" name="public" autoComplete="off" spellcheck={false} />
        </div>
        <div class="field">
          <label for="env-overwrite">
            <input id="env-overwrite" name="overwrite" type="checkbox" defaultChecked /> Overwrite keys
            already set
          </label>
        </div>
        <div class="field">
          <button type="submit" class="primary" disabled={submit.busy || content === ''}>
            {submit.busy ? 'Importing…' : 'Import'}
          </button>
        </div>
      </div>
      <ErrorNotice error={submit.error} />
      {result && <ImportResult result={result} />}
    </form>
  );
}

function ImportResult({ result }: { result: ImportAnswer }) {
  return (
    <div role="status" class={`notice ${result.errors.length > 0 ? 'error' : 'ok'}`}>
      <p>
        Imported {count(result.imported.length, 'key')}
        {result.imported.length > 0 && (
          <>
            : <code>{result.imported.join(', ')}</code>
          </>
        )}
        . Skipped {count(result.skipped.length, 'key')} (already set)
        {result.skipped.length > 0 && (
          <>
            : <code>{result.skipped.join(', ')}</code>
          </>
        )}
        .
      </p>
      {result.errors.length > 0 && (
        <TableScroll label="Lines not imported">
          <table>
            <caption>{count(result.errors.length, 'line')} not imported</caption>
            <thead>
              <tr>
                <th scope="col">Line</th>
                <th scope="col">Problem</th>
              </tr>
            </thead>
            <tbody>
              {result.errors.map((error, index) => (
                <tr key={`${error.line}-${index}`}>
                  <td>{error.line > 0 ? error.line : '—'}</td>
                  <td>{error.message}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
    </div>
  );
}
