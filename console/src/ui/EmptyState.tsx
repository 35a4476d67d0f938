import type { ComponentChildren } from 'preact';

/**
 * What an empty list or chart would show, and how to get something there: said in words where the
 * table or chart would be, so an empty page is never just a header.
 */
export function EmptyState({ what, how }: { what: string; how?: ComponentChildren }) {
  return (
    <p class="empty">
      <strong>{what}</strong>
      {how !== undefined && <> {how}</>}
    </p>
  );
}
