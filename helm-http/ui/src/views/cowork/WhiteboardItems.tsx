// What the whiteboard draws: each item as SVG (the editor's own shapes,
// and markup it does not understand, sanitised), the selection's outline
// and resize handles, and the text box laid over the board while a text
// or sticky note is being typed.
import { useEffect, useLayoutEffect, useMemo, useRef } from "preact/hooks";
import { bounds, stickyHeight, type Box } from "../../lib/whiteboard/geometry";
import { FONT, STICKY, markerId, penPath, type Foreign, type Item } from "../../lib/whiteboard/model";
import { handles as handlesOf } from "../../lib/whiteboard/resize";
import { sanitizeSvg } from "../../lib/whiteboard/sanitize";
import { wrap, type Editing, type View } from "./whiteboardTools";

export function TextOverlay({
  editing,
  view,
  size,
  fill,
  editingSize,
  onChange,
  onDone,
}: {
  editing: Editing;
  view: View;
  size: number;
  fill: string;
  editingSize?: Item;
  onChange: (value: string) => void;
  onDone: (keep: boolean) => void;
}) {
  const ref = useRef<HTMLInputElement & HTMLTextAreaElement>(null);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    el.focus({ preventScroll: true });
    // The caret at the end: editing a note adds to it rather than replacing it.
    el.selectionStart = el.selectionEnd = el.value.length;
  }, [editing.id, editing.kind, editing.x, editing.y]);
  const left = (editing.x - view.x) * view.s;
  const keys = (e: KeyboardEvent) => {
    if (e.key === "Escape") {
      e.preventDefault();
      e.stopPropagation();
      onDone(false);
      canvasOf(e)?.focus({ preventScroll: true });
    } else if (e.key === "Enter" && !(editing.kind === "sticky" && e.shiftKey)) {
      e.preventDefault();
      e.stopPropagation();
      onDone(true);
      canvasOf(e)?.focus({ preventScroll: true });
    }
  };
  if (editing.kind === "sticky") {
    const sticky = editingSize?.kind === "sticky" ? editingSize : undefined;
    const width = sticky?.w ?? 200;
    const height = Math.max(sticky?.h ?? STICKY.minH, stickyHeight(editing.value, width));
    return (
      <textarea
        ref={ref}
        class="wb-input wb-input-sticky"
        aria-label="Sticky note text (Enter to finish, Shift+Enter for a new line, Escape to cancel)"
        value={editing.value}
        style={{
          left: `${left}px`,
          top: `${(editing.y - view.y) * view.s}px`,
          width: `${width * view.s}px`,
          height: `${height * view.s}px`,
          fontSize: `${STICKY.size * view.s}px`,
          lineHeight: `${STICKY.line * view.s}px`,
          padding: `${(STICKY.pad - 2) * view.s}px ${STICKY.pad * view.s}px`,
          background: sticky?.fill ?? fill,
        }}
        onInput={(e) => onChange(e.currentTarget.value)}
        onKeyDown={keys}
        onBlur={() => onDone(true)}
      />
    );
  }
  const fontSize = editingSize?.kind === "text" ? editingSize.size : size;
  return (
    <input
      ref={ref}
      class="wb-input"
      aria-label="Text (Enter to finish, Escape to cancel)"
      value={editing.value}
      style={{
        left: `${left}px`,
        top: `${(editing.y - fontSize * 0.95 - view.y) * view.s}px`,
        fontSize: `${fontSize * view.s}px`,
        width: `${Math.max(160, (editing.value.length + 2) * fontSize * 0.6) * view.s}px`,
        color: editingSize?.kind === "text" ? editingSize.color : undefined,
      }}
      onInput={(e) => onChange(e.currentTarget.value)}
      onKeyDown={keys}
      onBlur={() => onDone(true)}
    />
  );
}

function canvasOf(e: Event): SVGSVGElement | null {
  return (e.currentTarget as HTMLElement).closest(".wb")?.querySelector<SVGSVGElement>(".wb-canvas") ?? null;
}

export function ItemView({ item }: { item: Item }) {
  switch (item.kind) {
    case "rect":
      return <rect data-wb={item.id} x={item.x} y={item.y} width={item.w} height={item.h} fill={item.fill} stroke={item.stroke} stroke-width={item.sw} />;
    case "ellipse":
      return <ellipse data-wb={item.id} cx={item.cx} cy={item.cy} rx={item.rx} ry={item.ry} fill={item.fill} stroke={item.stroke} stroke-width={item.sw} />;
    case "pen":
      return <path data-wb={item.id} d={penPath(item.pts)} fill="none" stroke={item.stroke} stroke-width={item.sw} stroke-linecap="round" stroke-linejoin="round" />;
    case "arrow":
      return (
        <line data-wb={item.id} x1={item.x1} y1={item.y1} x2={item.x2} y2={item.y2} stroke={item.stroke} stroke-width={item.sw} stroke-linecap="round" marker-end={`url(#${markerId(item.stroke)})`} />
      );
    case "text":
      return (
        <text data-wb={item.id} x={item.x} y={item.y} font-family={FONT} font-size={item.size} fill={item.color}>
          {item.text}
        </text>
      );
    case "sticky":
      return <StickyView item={item} />;
    case "foreign":
      return <ForeignView item={item} />;
  }
}

function StickyView({ item }: { item: Extract<Item, { kind: "sticky" }> }) {
  const lines = useMemo(() => wrap(item.text, item.w - 2 * STICKY.pad, STICKY.size), [item.text, item.w]);
  return (
    <g data-wb={item.id} transform={`translate(${item.x} ${item.y})`}>
      <rect width={item.w} height={item.h} rx="6" fill={item.fill} stroke="#00000026" stroke-width="1" />
      <text font-family={FONT} font-size={STICKY.size} fill="#1d1f23">
        {lines.map((l, i) => (
          <tspan key={i} x={STICKY.pad} y={STICKY.pad + STICKY.size + i * STICKY.line}>
            {l.text}
          </tspan>
        ))}
      </text>
    </g>
  );
}

/** Markup the editor does not understand, drawn sanitised. */
function ForeignView({ item }: { item: Foreign }) {
  const ref = useRef<SVGGElement>(null);
  useLayoutEffect(() => {
    ref.current?.replaceChildren(sanitizeSvg(item.raw));
  }, [item.raw]);
  if (!item.el) return null;
  const scale = item.scale ?? 1;
  const transform = scale !== 1 ? `translate(${item.dx} ${item.dy}) scale(${scale})` : item.dx || item.dy ? `translate(${item.dx} ${item.dy})` : undefined;
  return <g ref={ref} data-wb={item.id} transform={transform} />;
}

const SELECTED = "#2456c9";

/**
 * The selection: a dashed outline round each selected item and, when one
 * item is selected, its resize handles (drawn here; which one a pointer
 * takes is worked out from the geometry, so the handles only show where
 * to grab, and their cursor).
 */
export function SelectionMarks({
  items,
  selected,
  hidden,
  measured,
  scale,
  handles,
}: {
  items: Item[];
  selected: Set<number>;
  /** An item not outlined (its text is being typed). */
  hidden?: number;
  measured: Map<number, Box>;
  scale: number;
  handles: boolean;
}) {
  const chosen = items.filter((i) => selected.has(i.id) && i.id !== hidden);
  const line = 1.5 / scale;
  const pad = 4 / scale;
  const size = 9 / scale;
  const one = handles && chosen.length === 1 && selected.size === 1 ? chosen[0] : undefined;
  return (
    <g class="wb-selection">
      {chosen.map((item) => {
        const b = bounds(item, measured);
        if (!b) return null;
        return <rect key={item.id} x={b.x - pad} y={b.y - pad} width={b.w + 2 * pad} height={b.h + 2 * pad} fill="none" stroke={SELECTED} stroke-width={line} stroke-dasharray={`${4 / scale} ${3 / scale}`} pointer-events="none" />;
      })}
      {one &&
        handlesOf(one, measured).map((h) =>
          h.handle === "start" || h.handle === "end" ? (
            <circle key={h.handle} class={`wb-handle wb-handle-${h.handle}`} data-handle={h.handle} cx={h.x} cy={h.y} r={size * 0.6} fill="#ffffff" stroke={SELECTED} stroke-width={line} />
          ) : (
            <rect key={h.handle} class={`wb-handle wb-handle-${h.handle}`} data-handle={h.handle} x={h.x - size / 2} y={h.y - size / 2} width={size} height={size} fill="#ffffff" stroke={SELECTED} stroke-width={line} />
          ),
        )}
    </g>
  );
}
