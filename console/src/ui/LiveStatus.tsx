import { ErrorNotice } from './ErrorNotice.tsx';
import type { Follow } from './use-follow.ts';

const LABEL = {
  connecting: 'Connecting…',
  live: 'Live',
  reconnecting: 'Reconnecting…',
  refused: 'Not live',
} as const;
const BADGE = { connecting: 'warn', live: 'ok', reconnecting: 'warn', refused: 'bad' } as const;

/** Whether a page's live updates are flowing: a badge announced politely, and the refusal if any. */
export function LiveStatus({ follow }: { follow: Follow }) {
  if (follow.state === 'off') return null;
  return (
    <div>
      <span role="status" aria-live="polite" class={`badge ${BADGE[follow.state]}`}>
        {LABEL[follow.state]}
      </span>
      {follow.state === 'refused' && <ErrorNotice error={follow.error} />}
    </div>
  );
}
