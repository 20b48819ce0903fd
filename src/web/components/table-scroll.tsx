import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

/**
 * A wide table that scrolls sideways on a phone. The scrolling box takes keyboard focus (arrow
 * keys scroll it) and is named for screen readers, as a region holding the table. When the table
 * is wider than the screen, shadows at the clipped edges and a line above it say there is more.
 */
export function TableScroll({ label, children }: { label: string; children: ComponentChildren }) {
  const box = useRef<HTMLElement>(null);
  const [clipped, setClipped] = useState(false);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const measure = () => setClipped(element.scrollWidth > element.clientWidth + 1);
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    if (element.firstElementChild) observer.observe(element.firstElementChild);
    return () => observer.disconnect();
  }, []);
  return (
    <>
      {clipped ? (
        <p class="muted small scroll-hint" aria-hidden="true">
          Scroll sideways for more columns →
        </p>
      ) : null}
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard. */}
      <section ref={box} class="table-scroll" aria-label={label} tabIndex={0}>
        {children}
      </section>
    </>
  );
}
