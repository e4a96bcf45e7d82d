// A list that renders only what is on screen (plus a margin), so a channel
// with ten thousand messages opens and scrolls as fast as one with ten.
//
// Items have their own heights: each rendered item is measured (a
// ResizeObserver) and the rest are estimated; spacers above and below
// stand in for what is not rendered. The view is anchored to the first
// item on screen: when heights above it change (an estimate replaced by a
// measurement) or older items are added on top, the scroll position moves
// with it, so what the person reads stays still. With `stickToBottom`
// (chat), a view resting at the bottom stays there as messages arrive or a
// reply streams in. A height change that does not move the rendered range
// re-renders nothing: a streaming reply updates only itself.
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
  /**
   * An item to bring to the top of the view (a link to one message): once
   * it is among the items, the view rests on it, until the person scrolls.
   */
  reveal?: string | number;
  /** Shown above the first item (a "loading older" line, say). */
  header?: ComponentChildren;
  footer?: ComponentChildren;
  class?: string;
}

const NEAR_BOTTOM = 48;
/** How far below the top a revealed item rests, so a little of what came before shows. */
const REVEAL_MARGIN = 48;
const NEAR_TOP = 600;
/**
 * How many items may mount in one frame while the view moves. Mounting
 * is the costly part (Markdown, layout): the margin around the view, and
 * the screen's new items during a scroll, fill in over a few frames, so no
 * frame does it all at once.
 */
const MOUNT_PER_FRAME = 5;

/** The last index whose offset is at most `value`. */
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
  const { items, keyOf, render, label, estimate = 96, overscan = 600, stickToBottom = false, onNearTop, reveal, header, footer } = props;
  const scroller = useRef<HTMLDivElement>(null);
  const headerRef = useRef<HTMLDivElement>(null);
  const heights = useRef(new Map<string | number, number>());
  const atBottom = useRef(stickToBottom);
  /** The first item on screen, and how far below the viewport's top it starts. */
  const anchor = useRef<{ key: string | number; offset: number } | null>(null);
  const [, setVersion] = useState(0);
  const range = useRef({ start: 0, end: 0 });
  const frame = useRef(0);
  // Where each key is, for the current items.
  const indexOf = useMemo(() => new Map(items.map((item, i) => [keyOf(item), i])), [items]);
  const latest = useRef({ items, keyOf, onNearTop, indexOf });
  latest.current = { items, keyOf, onNearTop, indexOf };
  // Each item's height by index, and the offsets summed from them: a height
  // measured writes one slot and marks the sums stale, so a scroll that
  // mounts items re-adds a typed array instead of looking up every key of
  // a ten-thousand-item list again. Rebuilt from `heights` only when the
  // items change.
  const cached = useRef<{ items: readonly T[]; sizes: Float64Array; offsets: Float64Array; stale: boolean } | null>(null);

  /** Bumped whenever the offsets change; the anchor is restored only then. */
  const layoutVersion = useRef(0);
  const anchorVersion = useRef(-1);
  /**
   * An item to reveal is the anchor, held at the top of the view while
   * heights are measured and items come and go, until the person moves the
   * view themselves (wheel, touch, keys, a press): scroll events alone do
   * not say who scrolled.
   */
  const revealing = useRef(false);

  const layout = useCallback(() => {
    const list = latest.current.items;
    let c = cached.current;
    if (!c || c.items !== list) {
      const key = latest.current.keyOf;
      const sizes = new Float64Array(list.length);
      for (let i = 0; i < list.length; i++) sizes[i] = heights.current.get(key(list[i]!)) ?? estimate;
      c = { items: list, sizes, offsets: new Float64Array(list.length + 1), stale: true };
      cached.current = c;
    }
    if (c.stale) {
      layoutVersion.current += 1;
      const { sizes, offsets } = c;
      for (let i = 0; i < sizes.length; i++) offsets[i + 1] = offsets[i]! + sizes[i]!;
      c.stale = false;
    }
    return c.offsets;
  }, [estimate]);

  // Kept by a ResizeObserver, so reading it never forces a layout.
  const headerSize = useRef(0);
  const headerHeight = () => headerSize.current;

  /** The range `update` chose for the render it asked for (with the offsets it was chosen on). */
  const planned = useRef<{ range: { start: number; end: number }; offsets: Float64Array } | null>(null);

  /** Whether the margin around the view still has items to mount. */
  const pending = useRef(false);

  const visibleRange = useCallback(
    (offsets: Float64Array) => {
      const el = scroller.current;
      const count = latest.current.items.length;
      if (count === 0) return { start: 0, end: 0 };
      const top = (el ? el.scrollTop : 0) - headerHeight();
      const height = el && el.clientHeight > 0 ? el.clientHeight : 800;
      const clamp = (i: number) => Math.max(0, Math.min(count, i));
      // What is on screen is always rendered…
      const seenStart = clamp(Math.min(count - 1, lowerBound(offsets, Math.max(0, top))));
      const seenEnd = clamp(Math.max(seenStart + 1, lowerBound(offsets, top + height) + 1));
      // …and the margin grows toward its full size a few items per frame.
      const wantStart = clamp(Math.min(count - 1, lowerBound(offsets, Math.max(0, top - overscan))));
      const wantEnd = clamp(Math.max(wantStart + 1, lowerBound(offsets, top + height + overscan) + 1));
      const before = range.current;
      const overlaps = before.end > seenStart && before.start < seenEnd;
      let start: number;
      let end: number;
      let budget = MOUNT_PER_FRAME;
      if (overlaps) {
        // What stays mounted, grown toward what is on screen by at most the
        // frame's budget (a fast scroll fills in over a frame or two rather
        // than in one long task).
        start = Math.max(wantStart, Math.min(before.start, seenStart));
        end = Math.min(wantEnd, Math.max(before.end, seenEnd));
        const above = Math.max(0, before.start - start);
        const below = Math.max(0, end - before.end);
        if (above + below > budget) {
          // Above first when scrolling up (the list is anchored there), else below.
          const up = above >= below;
          const first = Math.min(up ? above : below, budget);
          const second = Math.min(up ? below : above, budget - first);
          start = before.start - (up ? first : second);
          end = before.end + (up ? second : first);
        }
        budget -= Math.max(0, before.start - start) + Math.max(0, end - before.end);
      } else {
        // A jump (or the first render): everything on screen at once.
        // (Capping this too made a channel's first view 90 ms slower in the
        // benchmark: the screen then took several frames to fill.)
        start = seenStart;
        end = seenEnd;
        budget = 0;
      }
      while (budget > 0 && (start > wantStart || end < wantEnd)) {
        // The screen first, then the margin (above first: scrolling up is
        // what brings unmeasured items in).
        if (end < seenEnd) end += 1;
        else if (start > wantStart) start -= 1;
        else end += 1;
        budget -= 1;
      }
      pending.current = start > wantStart || end < wantEnd;
      return { start, end };
    },
    [overscan],
  );

  /** Remembers which item is at the top of the view. */
  const rememberAnchor = useCallback((offsets: Float64Array) => {
    const el = scroller.current;
    const list = latest.current.items;
    if (!el || list.length === 0) return;
    const top = el.scrollTop - headerHeight();
    const index = Math.min(list.length - 1, lowerBound(offsets, Math.max(0, top)));
    anchor.current = { key: latest.current.keyOf(list[index]!), offset: offsets[index]! - top };
    anchorVersion.current = layoutVersion.current;
  }, []);

  /** Puts the remembered item back where it was (or at the bottom, in chat at rest). */
  const restore = useCallback((offsets: Float64Array) => {
    const el = scroller.current;
    if (!el || el.clientHeight === 0) return;
    if (stickToBottom && atBottom.current && !revealing.current) {
      el.scrollTop = el.scrollHeight;
      return;
    }
    const a = anchor.current;
    // Only a change of layout moves the view; the person's own scrolling
    // is left alone.
    if (!a || anchorVersion.current === layoutVersion.current) return;
    const index = latest.current.indexOf.get(a.key);
    if (index === undefined) return;
    const wanted = offsets[index]! + headerHeight() - a.offset;
    if (Math.abs(el.scrollTop - wanted) > 1) el.scrollTop = wanted;
    anchorVersion.current = layoutVersion.current;
  }, [stickToBottom]);

  const nearTop = () => {
    const el = scroller.current;
    if (el && el.clientHeight > 0 && el.scrollTop < NEAR_TOP) latest.current.onNearTop?.();
  };

  // After heights change or the view scrolls: re-render only when the
  // rendered range would change.
  const update = useCallback(() => {
    frame.current = 0;
    const el = scroller.current;
    if (!el || el.clientHeight === 0) return;
    const offsets = layout();
    restore(offsets);
    const next = visibleRange(offsets);
    if (next.start !== range.current.start || next.end !== range.current.end) {
      range.current = next;
      // The render this asks for draws this range, rather than growing it
      // by another frame's budget.
      planned.current = { range: next, offsets };
      setVersion((v) => v + 1);
    }
    if (!revealing.current) rememberAnchor(offsets);
    nearTop();
    if (pending.current) schedule();
  }, [layout, restore, visibleRange, rememberAnchor]);

  const schedule = useCallback(() => {
    if (!frame.current) frame.current = requestAnimationFrame(() => updateRef.current());
  }, []);
  const updateRef = useRef(update);
  updateRef.current = update;

  const observer = useMemo(
    () =>
      new ResizeObserver((entries) => {
        let changed = false;
        for (const entry of entries) {
          const el = entry.target as HTMLElement;
          const key = el.dataset.key;
          // The observer's own box sizes: reading offsetHeight here would
          // force a layout per item.
          const box = entry.borderBoxSize?.[0];
          const height = box ? Math.round(box.blockSize) : el.offsetHeight;
          const width = box ? box.inlineSize : el.offsetWidth;
          // A hidden list (display: none on a phone, say) measures nothing.
          if (key === undefined || width === 0) continue;
          const k = el.dataset.numeric === "1" ? Number(key) : key;
          if (heights.current.get(k) !== height) {
            heights.current.set(k, height);
            const c = cached.current;
            const index = latest.current.indexOf.get(k);
            if (c && c.items === latest.current.items && index !== undefined) {
              c.sizes[index] = height;
              c.stale = true;
            }
            changed = true;
          }
        }
        if (changed) schedule();
      }),
    [schedule],
  );
  useEffect(() => () => observer.disconnect(), [observer]);

  const offsets = layout();
  const plan = planned.current;
  planned.current = null;
  const computed = plan && plan.offsets === offsets ? plan.range : visibleRange(offsets);
  range.current = computed;
  const { start, end } = computed;
  // The margin is not full yet: go on next frame.
  useEffect(() => {
    if (pending.current) schedule();
  });

  // A render that changed the layout (new items, older ones on top) keeps
  // the view where it was; one that only moved the range touches nothing.
  useLayoutEffect(() => {
    if (anchorVersion.current !== layoutVersion.current) {
      restore(offsets);
      if (!revealing.current) rememberAnchor(offsets);
      nearTop();
    }
  });

  // Chat starts at the bottom.
  useLayoutEffect(() => {
    const el = scroller.current;
    if (el && stickToBottom) el.scrollTop = el.scrollHeight;
  }, []);

  // The item to reveal becomes the anchor, as if the person had scrolled it
  // to the top: measurements then keep it there, as they keep any anchor.
  const revealed = useRef<string | number | undefined>(undefined);
  useLayoutEffect(() => {
    if (reveal === undefined || revealed.current === reveal || !indexOf.has(reveal)) return;
    revealed.current = reveal;
    atBottom.current = false;
    revealing.current = true;
    anchor.current = { key: reveal, offset: REVEAL_MARGIN };
    anchorVersion.current = -1;
    schedule();
  }, [reveal, indexOf]);

  useEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const resize = new ResizeObserver(() => {
      // The viewport or the header changed size: lay out again.
      headerSize.current = headerRef.current?.offsetHeight ?? 0;
      cached.current = null;
      schedule();
    });
    resize.observe(el);
    if (headerRef.current) resize.observe(headerRef.current);
    return () => resize.disconnect();
  }, [schedule]);

  const onScroll = () => {
    const el = scroller.current;
    if (!el) return;
    // Held on an item to reveal: the scroll is the list's own.
    if (revealing.current) return;
    atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < NEAR_BOTTOM;
    // The person moved the view: what is at its top now is the anchor.
    if (anchorVersion.current === layoutVersion.current) rememberAnchor(layout());
    schedule();
  };

  // The person moves the view: an item revealed is no longer held.
  const letGo = () => {
    revealing.current = false;
  };

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
    <div ref={scroller} class={`vl ${props.class ?? ""}`} onScroll={onScroll} onWheel={letGo} onTouchStart={letGo} onKeyDown={letGo} onPointerDown={letGo} role="region" aria-label={label} tabIndex={0}>
      <div ref={headerRef} class="vl-header">
        {header}
      </div>
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
