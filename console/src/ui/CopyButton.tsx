import { useState } from 'preact/hooks';

/** Copies `text` to the clipboard and says so. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [copied, setCopied] = useState<'yes' | 'failed' | undefined>(undefined);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied('yes');
    } catch {
      setCopied('failed');
    }
  };
  return (
    <span class="row">
      <button type="button" onClick={copy}>
        {label}
      </button>
      <span role="status" class="muted">
        {copied === 'yes' ? 'Copied' : copied === 'failed' ? 'Copy failed: select the text instead' : ''}
      </span>
    </span>
  );
}
