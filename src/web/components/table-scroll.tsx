import type { ComponentChildren } from 'preact';

/**
 * A wide table that scrolls sideways on a phone. The scrolling box takes keyboard focus (arrow
 * keys scroll it) and is named for screen readers, as a region holding the table.
 */
export function TableScroll({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard.
    <section class="table-scroll" aria-label={label} tabIndex={0}>
      {children}
    </section>
  );
}
