import type { ComponentChildren } from 'preact';

/**
 * A table that scrolls sideways when the screen is narrower than it. The region takes focus, so a
 * keyboard can scroll it even when it holds nothing else to focus (a read-only list).
 */
export function TableScroll({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard (WCAG 2.1.1).
    <section class="table-wrap" aria-label={label} tabIndex={0}>
      {children}
    </section>
  );
}
