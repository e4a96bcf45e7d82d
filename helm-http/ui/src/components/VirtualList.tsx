// A list that renders only what is on screen (plus a margin), so a channel
// with ten thousand messages opens and scrolls as fast as one with ten.
//
// Items have their own heights: each rendered item is measured (a
// ResizeObserver) and the rest are estimated; spacers above and below
// stand in for what is not rendered. The browser's scroll anchoring keeps
// the view still when heights above it change or older items are added on
// top. With `stickToBottom` (chat), a view resting at the bottom stays
// there as messages arrive or a reply streams in. A height change that does
// not move the rendered range re-renders nothing: a streaming reply
// updates only itself.
import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";

export interface VirtualListProps<T> {
  items: readonly T[];
  keyOf: (item: T) => string | number;
  render: (item: T, index: number) => ComponentChildren;
  /** The accessible name of the list. */
  label: string;
  estimate?: number;
  /** Pixels rendered beyond each edge of the viewport. */
  overscan?: number;
  stickToBottom?: boolean;
  /** Called when the view nears the top (to load older items). */
  onNearTop?: () => void;
  /** Shown above the first item (a "loading older" line, say). */
  header?: ComponentChildren;
  footer?: ComponentChildren;
  class?: string;
}

const NEAR_BOTTOM = 48;

function lowerBound(offsets: Float64Array, value: number): number {
  let lo = 0;
  let hi = offsets.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (offsets[mid]! <= value) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

export function VirtualList<T>(props: VirtualListProps<T>) {
  const { items, keyOf, render, label, estimate = 96, overscan = 600, stickToBottom = false, onNearTop, header, footer } = props;
  const scroller = useRef<HTMLDivElement>(null);
  const heights = useRef(new Map<string | number, number>());
  const atBottom = useRef(stickToBottom);
  const [, setVersion] = useState(0);
  const range = useRef({ start: 0, end: 0 });
  const frame = useRef(0);

  // Offsets of each item's top, from measured or estimated heights.
  const layout = useCallback(() => {
    const offsets = new Float64Array(items.length + 1);
    for (let i = 0; i < items.length; i++) {
      offsets[i + 1] = offsets[i]! + (heights.current.get(keyOf(items[i]!)) ?? estimate);
    }
    return offsets;
  }, [items, keyOf, estimate]);

  const visibleRange = useCallback(
    (offsets: Float64Array) => {
      const el = scroller.current;
      const top = el ? el.scrollTop : 0;
      const height = el ? el.clientHeight : 800;
      const headerHeight = el?.firstElementChild instanceof HTMLElement ? el.firstElementChild.offsetHeight : 0;
      const from = Math.max(0, top - headerHeight - overscan);
      const to = top - headerHeight + height + overscan;
      const start = Math.max(0, Math.min(items.length - 1, lowerBound(offsets, from)));
      let end = lowerBound(offsets, to) + 1;
      end = Math.min(items.length, Math.max(end, start + 1));
      return { start, end };
    },
    [items.length, overscan],
  );

  // Re-render only when the rendered range would change.
  const update = useCallback(() => {
    frame.current = 0;
    if (scroller.current && scroller.current.clientHeight === 0) return;
    const next = visibleRange(layout());
    if (next.start !== range.current.start || next.end !== range.current.end) {
      range.current = next;
      setVersion((v) => v + 1);
    }
    const el = scroller.current;
    if (el && stickToBottom && atBottom.current) el.scrollTop = el.scrollHeight;
  }, [visibleRange, layout, stickToBottom]);

  const schedule = useCallback(() => {
    if (!frame.current) frame.current = requestAnimationFrame(update);
  }, [update]);

  const observer = useMemo(
    () =>
      new ResizeObserver((entries) => {
        let changed = false;
        for (const entry of entries) {
          const el = entry.target as HTMLElement;
          const key = el.dataset.key;
          if (key === undefined) continue;
          const height = el.offsetHeight;
          // A hidden list (display: none on a phone, say) measures nothing.
          if (height === 0 && !el.isConnected) continue;
          if (height === 0 && el.offsetParent === null) continue;
          const k = el.dataset.numeric === "1" ? Number(key) : key;
          if (heights.current.get(k) !== height) {
            heights.current.set(k, height);
            changed = true;
          }
        }
        if (changed) schedule();
      }),
    [],
  );
  useEffect(() => () => observer.disconnect(), [observer]);

  const offsets = layout();
  const computed = visibleRange(offsets);
  range.current = computed;
  const { start, end } = computed;

  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    if (stickToBottom && atBottom.current) el.scrollTop = el.scrollHeight;
  });

  // Start at the bottom in chat.
  useLayoutEffect(() => {
    const el = scroller.current;
    if (el && stickToBottom) el.scrollTop = el.scrollHeight;
  }, []);

  const onScroll = () => {
    const el = scroller.current;
    if (!el) return;
    atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < NEAR_BOTTOM;
    if (onNearTop && el.scrollTop < 400) onNearTop();
    schedule();
  };

  useEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const resize = new ResizeObserver(() => schedule());
    resize.observe(el);
    return () => resize.disconnect();
  }, [schedule]);

  const rendered: ComponentChildren[] = [];
  for (let i = start; i < end; i++) {
    const item = items[i]!;
    const key = keyOf(item);
    rendered.push(
      <Measured key={key} itemKey={key} observer={observer} position={i + 1} size={items.length}>
        {render(item, i)}
      </Measured>,
    );
  }

  return (
    <div ref={scroller} class={`vl ${props.class ?? ""}`} onScroll={onScroll} role="region" aria-label={label} tabIndex={0}>
      <div class="vl-header">{header}</div>
      <div style={{ height: `${offsets[start]}px` }} aria-hidden="true" />
      {rendered.length > 0 && (
        <div role="feed" aria-label={label}>
          {rendered}
        </div>
      )}
      <div style={{ height: `${offsets[items.length]! - offsets[end]!}px` }} aria-hidden="true" />
      <div class="vl-footer">{footer}</div>
    </div>
  );
}

/** One rendered item, measured while it is on the page. */
function Measured({
  itemKey,
  observer,
  position,
  size,
  children,
}: {
  itemKey: string | number;
  observer: ResizeObserver;
  position: number;
  size: number;
  children: ComponentChildren;
}) {
  const ref = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    observer.observe(el);
    return () => observer.unobserve(el);
  }, [observer]);
  return (
    <div
      ref={ref}
      class="vl-item"
      data-key={String(itemKey)}
      data-numeric={typeof itemKey === "number" ? "1" : "0"}
      role="article"
      aria-posinset={position}
      aria-setsize={size}
    >
      {children}
    </div>
  );
}
