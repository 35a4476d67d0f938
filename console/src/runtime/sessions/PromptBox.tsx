import { useRef, useState } from 'preact/hooks';
import type { Attachment, QueuedTurn } from '../../../../sdk/types.ts';
import { agent } from '../../api/runtime.ts';
import { ErrorNotice } from '../../ui/ErrorNotice.tsx';
import { useAction } from '../../ui/use-resource.ts';
import { asFailure } from '../failure.ts';
import { queuePosition, type Transcript } from './transcript.ts';

/** The session routes take at most this many attachments of at most 5 MiB each, as text. */
const MAX_FILES = 20;
const MAX_FILE_BYTES = 5 * 1024 * 1024;

/** Read in the page: the prompt route takes each file's content inline. */
async function attachmentOf(file: File): Promise<Attachment> {
  if (file.size > MAX_FILE_BYTES) throw new Error(`${file.name} is larger than 5 MiB`);
  return {
    type: 'file',
    fileName: file.name,
    contentType: file.type || 'text/plain',
    content: await file.text(),
  };
}

/**
 * Where the prompt last sent stands, as the session's stream tells it (not as the prompt route
 * answered when it was queued): its place while it waits, then running, then nothing once it ended
 * (the transcript shows how).
 */
function statusOf(transcript: Transcript, queued: QueuedTurn | undefined): string {
  if (!queued) return '';
  const turn = transcript.turns.get(queued.queueItemId);
  if (!turn) return `Queued at position ${queued.queuePosition}`;
  if (turn.state === 'queued') return `Queued at position ${queuePosition(transcript, turn.id)}`;
  if (turn.state === 'running') return 'Running';
  return '';
}

/**
 * A prompt with attachments (chosen with the picker or dropped on the form). It is queued at once
 * (`wait: false`): the answer streams into the transcript, and the queue shows where it waits.
 */
export function PromptBox({ sessionId, transcript }: { sessionId: string; transcript: Transcript }) {
  const [text, setText] = useState('');
  const [files, setFiles] = useState<Attachment[]>([]);
  const [dragging, setDragging] = useState(false);
  const [queued, setQueued] = useState<QueuedTurn | undefined>(undefined);
  const picker = useRef<HTMLInputElement>(null);
  const attach = useAction(async (list: FileList | null) => {
    const chosen = await Promise.all([...(list ?? [])].map(attachmentOf));
    if (picker.current) picker.current.value = '';
    if (files.length + chosen.length > MAX_FILES) throw new Error(`at most ${MAX_FILES} attachments`);
    setFiles([...files, ...chosen]);
  });
  const send = useAction(async () => {
    try {
      const answer = await agent().prompt(sessionId, {
        text,
        wait: false,
        ...(files.length ? { attachments: files } : {}),
      });
      setQueued(answer);
      setText('');
      setFiles([]);
    } catch (failure) {
      throw asFailure(failure);
    }
  });
  return (
    <form
      class={`card prompt${dragging ? ' dropping' : ''}`}
      aria-label="Prompt"
      onSubmit={(event) => {
        event.preventDefault();
        void send.act();
      }}
      onDragOver={(event) => {
        event.preventDefault();
        setDragging(true);
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={(event) => {
        event.preventDefault();
        setDragging(false);
        void attach.act(event.dataTransfer?.files ?? null);
      }}
    >
      <h2>Prompt</h2>
      <div class="field">
        <label for="prompt-text">
          Message <span class="hint">(Ctrl+Enter sends)</span>
        </label>
        <textarea
          id="prompt-text"
          value={text}
          required
          onInput={(event) => setText(event.currentTarget.value)}
          onKeyDown={(event) => {
            if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
              event.preventDefault();
              event.currentTarget.form?.requestSubmit();
            }
          }}
        />
      </div>
      <div class="field">
        <label for="prompt-files">
          Attach files <span class="hint">(text, up to 5 MiB each; or drop them on this form)</span>
        </label>
        <input
          id="prompt-files"
          ref={picker}
          type="file"
          multiple
          onChange={(event) => void attach.act(event.currentTarget.files)}
        />
      </div>
      {files.length > 0 && (
        <ul aria-label="Attachments">
          {files.map((file, index) => (
            <li key={`${file.fileName}-${index}`} class="row">
              <span>
                {file.fileName} <span class="muted">({file.contentType})</span>
              </span>
              <button
                type="button"
                aria-label={`Remove ${file.fileName}`}
                onClick={() => setFiles(files.filter((_, at) => at !== index))}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      <button type="submit" class="primary" disabled={send.busy}>
        {send.busy ? 'Sending…' : 'Send'}
      </button>
      <p role="status" class="muted">
        {statusOf(transcript, queued)}
      </p>
      <ErrorNotice error={attach.error ?? send.error} />
    </form>
  );
}
