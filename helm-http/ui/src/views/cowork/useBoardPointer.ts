// The whiteboard's pointer handling: drawing, selecting (a click or a
// rubber band), moving, resizing by a handle, panning (H, Space or the
// middle button), pinching with two fingers, and wheel zoom and pan; the
// keyboard's shortcuts are in boardKeys.ts. The gesture under way, the
// shape being drawn and the rubber band live here; the board's items,
// selection and view are the editor's.
import type { RefObject } from "preact";
import { useRef, useState } from "preact/hooks";
import { boxOf, hitTest, itemsIn, moved, simplify, snapAngle, type Box, type Point } from "../../lib/whiteboard/geometry";
import { newId, type Board, type Item } from "../../lib/whiteboard/model";
import { handleAt, resized } from "../../lib/whiteboard/resize";
import { boardKeys } from "./boardKeys";
import { COLORS, textSize, type Editing, type Gesture, type Tool, type View } from "./whiteboardTools";

/** The board's items and how they change. */
export interface BoardState {
  meta: Omit<Board, "items"> | undefined;
  readOnly: boolean;
  itemsRef: RefObject<Item[]>;
  /** Boxes the browser measured (foreign items). */
  measured: RefObject<Map<number, Box>>;
  /** Shows items without an undo step (a gesture under way). */
  setItems: (next: Item[]) => void;
  /** Makes `next` the board, `before` the undo step. */
  commit: (next: Item[], before?: Item[]) => void;
}

/** The tool, the style new items take, and the selection. */
export interface BoardTools {
  tool: Tool;
  setTool: (t: Tool) => void;
  chooseTool: (t: Tool) => void;
  ink: (typeof COLORS)[number];
  sw: number;
  fill: string;
  selected: Set<number>;
  setSelected: (s: Set<number>) => void;
}

/** The view: the elements it is drawn in, panning and zooming. */
export interface BoardView {
  viewRef: RefObject<View>;
  stage: RefObject<HTMLDivElement | null>;
  canvas: RefObject<SVGSVGElement | null>;
  setView: (next: View, auto?: boolean) => void;
  zoomAt: (factor: number, sx?: number, sy?: number) => void;
  fit: () => void;
}

/** Text being typed over the board. */
export interface BoardText {
  editingRef: RefObject<Editing | undefined>;
  startEditing: (next: Editing) => void;
  finishEditing: (keep: boolean) => void;
  editItem: (item: Item) => void;
}

/** What the keyboard's shortcuts do (the toolbar's buttons do the same). */
export interface BoardCommands {
  save: () => Promise<void>;
  undo: () => void;
  redo: () => void;
  remove: () => void;
  nudge: (dx: number, dy: number) => void;
  copy: () => void;
  cut: () => void;
  paste: () => void;
  duplicate: () => void;
}

export interface BoardPointerInput {
  board: BoardState;
  tools: BoardTools;
  view: BoardView;
  text: BoardText;
  commands: BoardCommands;
}

export function useBoardPointer(input: BoardPointerInput) {
  const { meta, readOnly, itemsRef, measured, setItems, commit } = input.board;
  const { tool, ink, sw, fill, selected, setSelected } = input.tools;
  const { viewRef, stage, setView, zoomAt } = input.view;
  const { editingRef, startEditing, finishEditing, editItem } = input.text;
  const [draft, setDraft] = useState<Item>();
  const [band, setBand] = useState<Box>();
  const [spaceHeld, setSpaceHeld] = useState(false);
  const gesture = useRef<Gesture | undefined>(undefined);
  const pointers = useRef(new Map<number, Point>());

  const toWorld = (clientX: number, clientY: number): Point => {
    const r = stage.current!.getBoundingClientRect();
    const v = viewRef.current;
    return { x: v.x + (clientX - r.left) / v.s, y: v.y + (clientY - r.top) / v.s };
  };

  // Pointer input: mouse, pen and touch alike; two fingers pinch and pan.
  const down = (e: PointerEvent) => {
    if (!meta) return;
    const svg = e.currentTarget as SVGSVGElement;
    svg.focus({ preventScroll: true });
    if (editingRef.current) finishEditing(true);
    svg.setPointerCapture(e.pointerId);
    pointers.current.set(e.pointerId, { x: e.clientX, y: e.clientY });
    if (pointers.current.size === 2) {
      const g = gesture.current;
      if (g?.type === "move" || g?.type === "resize" || g?.type === "draw") setItems(g.type === "draw" ? itemsRef.current : g.before);
      setDraft(undefined);
      setBand(undefined);
      const [a, b] = [...pointers.current.values()] as [Point, Point];
      const r = stage.current!.getBoundingClientRect();
      gesture.current = { type: "pinch", d: Math.hypot(a.x - b.x, a.y - b.y) || 1, mx: (a.x + b.x) / 2 - r.left, my: (a.y + b.y) / 2 - r.top, view: viewRef.current, before: itemsRef.current };
      return;
    }
    if (pointers.current.size > 2) return;
    const p = toWorld(e.clientX, e.clientY);
    if (e.button === 1 || spaceHeld || tool === "pan" || (readOnly && tool !== "select")) {
      e.preventDefault();
      gesture.current = { type: "pan", sx: e.clientX, sy: e.clientY, view: viewRef.current };
      return;
    }
    if (e.button !== 0) return;
    if (tool === "select") {
      const one = selected.size === 1 && !readOnly ? itemsRef.current.find((i) => selected.has(i.id)) : undefined;
      // A finger is less precise than a mouse: its handles reach further.
      const reach = (e.pointerType === "touch" ? 16 : 8) / viewRef.current.s;
      const handle = one && handleAt(one, p, reach, measured.current);
      if (one && handle) {
        gesture.current = { type: "resize", start: p, before: itemsRef.current, item: one, handle, started: false };
        return;
      }
      const hit = hitTest(itemsRef.current, p, 6 / viewRef.current.s, measured.current);
      if (hit) {
        let next = selected;
        if (e.shiftKey) {
          next = new Set(selected);
          if (next.has(hit.id)) next.delete(hit.id);
          else next.add(hit.id);
        } else if (!selected.has(hit.id)) next = new Set([hit.id]);
        setSelected(next);
        gesture.current = next.has(hit.id) && !readOnly ? { type: "move", start: p, before: itemsRef.current, ids: next, started: false } : undefined;
      } else {
        if (!e.shiftKey) setSelected(new Set());
        gesture.current = { type: "band", start: p, add: e.shiftKey ? selected : new Set() };
      }
      return;
    }
    if (readOnly) return;
    const common = { id: newId(), stroke: ink.ink, sw };
    let item: Item | undefined;
    if (tool === "pen") item = { ...common, kind: "pen", pts: [p.x, p.y] };
    else if (tool === "rect") item = { ...common, kind: "rect", x: p.x, y: p.y, w: 0, h: 0, fill };
    else if (tool === "ellipse") item = { ...common, kind: "ellipse", cx: p.x, cy: p.y, rx: 0, ry: 0, fill };
    else if (tool === "arrow") item = { ...common, kind: "arrow", x1: p.x, y1: p.y, x2: p.x, y2: p.y };
    if (item) {
      gesture.current = { type: "draw", start: p, item };
      setDraft(item);
    } else gesture.current = { type: "place", start: p };
  };

  const move = (e: PointerEvent) => {
    const g = gesture.current;
    if (!pointers.current.has(e.pointerId) || !g) return;
    pointers.current.set(e.pointerId, { x: e.clientX, y: e.clientY });
    if (g.type === "pinch") {
      const [a, b] = [...pointers.current.values()] as [Point, Point];
      if (!a || !b) return;
      const r = stage.current!.getBoundingClientRect();
      const s = Math.min(8, Math.max(0.1, (g.view.s * Math.hypot(a.x - b.x, a.y - b.y)) / g.d));
      const mx = (a.x + b.x) / 2 - r.left;
      const my = (a.y + b.y) / 2 - r.top;
      setView({ x: g.view.x + g.mx / g.view.s - mx / s, y: g.view.y + g.my / g.view.s - my / s, s });
      return;
    }
    if (g.type === "pan") {
      setView({ ...g.view, x: g.view.x - (e.clientX - g.sx) / g.view.s, y: g.view.y - (e.clientY - g.sy) / g.view.s });
      return;
    }
    const p = toWorld(e.clientX, e.clientY);
    const s = viewRef.current.s;
    if (g.type === "move") {
      const dx = p.x - g.start.x;
      const dy = p.y - g.start.y;
      if (!g.started && Math.hypot(dx, dy) * s < 3) return;
      g.started = true;
      setItems(g.before.map((i) => (g.ids.has(i.id) ? moved(i, dx, dy) : i)));
    } else if (g.type === "resize") {
      const dx = p.x - g.start.x;
      const dy = p.y - g.start.y;
      if (!g.started && Math.hypot(dx, dy) * s < 2) return;
      g.started = true;
      const next = resized(g.item, g.handle, dx, dy, e.shiftKey, measured.current);
      setItems(g.before.map((i) => (i.id === g.item.id ? next : i)));
    } else if (g.type === "band") {
      setBand(boxOf(g.start, p));
    } else if (g.type === "draw") {
      const it = g.item;
      let next: Item = it;
      if (it.kind === "pen") {
        const samples = e.getCoalescedEvents?.() ?? [];
        const pts = (samples.length ? samples : [e]).flatMap((c) => {
          const q = toWorld(c.clientX, c.clientY);
          return [q.x, q.y];
        });
        next = { ...it, pts: [...it.pts, ...pts] };
      } else {
        let q = p;
        if (e.shiftKey && it.kind === "arrow") q = snapAngle(g.start, p);
        else if (e.shiftKey) {
          const side = Math.max(Math.abs(p.x - g.start.x), Math.abs(p.y - g.start.y));
          q = { x: g.start.x + Math.sign(p.x - g.start.x || 1) * side, y: g.start.y + Math.sign(p.y - g.start.y || 1) * side };
        }
        const b = boxOf(g.start, q);
        if (it.kind === "rect") next = { ...it, ...b };
        else if (it.kind === "ellipse") next = { ...it, cx: b.x + b.w / 2, cy: b.y + b.h / 2, rx: b.w / 2, ry: b.h / 2 };
        else if (it.kind === "arrow") next = { ...it, x2: q.x, y2: q.y };
      }
      g.item = next;
      setDraft(next);
    }
  };

  const up = (e: PointerEvent) => {
    if (!pointers.current.delete(e.pointerId)) return;
    const g = gesture.current;
    if (pointers.current.size > 0) {
      // One finger lifted from a pinch: nothing more until all are up.
      if (g?.type === "pinch") gesture.current = undefined;
      return;
    }
    gesture.current = undefined;
    if (!g) return;
    const cancelled = e.type === "pointercancel";
    const p = toWorld(e.clientX, e.clientY);
    const s = viewRef.current.s;
    if (g.type === "move" || g.type === "resize") {
      if (cancelled) setItems(g.before);
      else if (g.started) commit(itemsRef.current, g.before);
    } else if (g.type === "band") {
      setBand(undefined);
      if (!cancelled) {
        const box = boxOf(g.start, p);
        const next = new Set(g.add);
        if (box.w * s > 3 || box.h * s > 3) for (const i of itemsIn(itemsRef.current, box, measured.current)) next.add(i.id);
        setSelected(next);
      }
    } else if (g.type === "draw") {
      setDraft(undefined);
      if (cancelled) return;
      let it = g.item;
      const tiny = Math.hypot(p.x - g.start.x, p.y - g.start.y) * s < 4;
      if (it.kind === "pen") it = { ...it, pts: it.pts.length === 2 ? [...it.pts, ...it.pts] : simplify(it.pts, 1.5 / s) };
      else if (tiny && it.kind === "rect") it = { ...it, x: g.start.x - 80, y: g.start.y - 50, w: 160, h: 100 };
      else if (tiny && it.kind === "ellipse") it = { ...it, rx: 80, ry: 50 };
      else if (tiny && it.kind === "arrow") it = { ...it, x2: g.start.x + 160, y2: g.start.y };
      commit([...itemsRef.current, it]);
    } else if (g.type === "place" && !cancelled) {
      if (tool === "text") {
        const hit = hitTest(itemsRef.current, p, 4 / s, measured.current);
        if (hit?.kind === "text") return editItem(hit);
        startEditing({ kind: "text", x: p.x, y: p.y + textSize(sw) * 0.35, value: "" });
      } else if (tool === "sticky") {
        startEditing({ kind: "sticky", x: p.x - 100, y: p.y - 60, value: "" });
      }
    }
  };

  const dblclick = (e: MouseEvent) => {
    if (tool !== "select" && tool !== "text") return;
    const hit = hitTest(itemsRef.current, toWorld(e.clientX, e.clientY), 6 / viewRef.current.s, measured.current);
    if (hit) editItem(hit);
  };

  const wheel = (e: WheelEvent) => {
    if (!meta) return;
    e.preventDefault();
    const r = stage.current!.getBoundingClientRect();
    if (e.ctrlKey || e.metaKey) zoomAt(Math.exp(-e.deltaY * 0.002), e.clientX - r.left, e.clientY - r.top);
    else {
      const v = viewRef.current;
      setView({ ...v, x: v.x + e.deltaX / v.s, y: v.y + e.deltaY / v.s });
    }
  };

  const { keys, keyUp } = boardKeys(input, setSpaceHeld);

  return { draft, band, spaceHeld, down, move, up, dblclick, wheel, keys, keyUp };
}
