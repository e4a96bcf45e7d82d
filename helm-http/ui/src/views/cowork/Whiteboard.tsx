// Cowork's whiteboard: a plain SVG file of the workspace (whiteboards/*.svg)
// drawn on and saved back through the files API, so the agent reads and
// writes the same file with its own tools. Pen, rectangle, ellipse, arrow,
// text and sticky notes are the editor's own shapes; anything else the file
// holds is kept exactly, shown sanitised, and can be moved or deleted whole.
// The model, the file format and the geometry are in lib/whiteboard/.
import type { JSX } from "preact";
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { ApiError, api, describeError } from "../../api/client";
import { ErrorNote } from "../../components/Field";
import { Icon } from "../../components/Icon";
import { bounds, boxOf, hitTest, itemsIn, moved, simplify, snapAngle, stickyHeight, wrapText, type Box, type Point } from "../../lib/whiteboard/geometry";
import {
  BoardError,
  EMPTY_BOARD,
  FONT,
  STICKY,
  markerId,
  markers,
  newId,
  parseBoard,
  penPath,
  serializeBoard,
  type Board,
  type Foreign,
  type Item,
} from "../../lib/whiteboard/model";
import { sanitizeSvg } from "../../lib/whiteboard/sanitize";
import { channelByName } from "../../state/channels";
import { toast } from "../../state/toasts";

type Tool = "select" | "pen" | "rect" | "ellipse" | "arrow" | "text" | "sticky" | "pan";

const TOOLS: { tool: Tool; label: string; key: string; path: string }[] = [
  { tool: "select", label: "Select and move", key: "V", path: "M6 3l12 8-5.5 1.5L10 18z" },
  { tool: "pen", label: "Pen", key: "P", path: "M4 20l4-1L19 8l-3-3L5 16zM14 7l3 3" },
  { tool: "rect", label: "Rectangle", key: "R", path: "M4 6h16v12H4z" },
  { tool: "ellipse", label: "Ellipse", key: "O", path: "M12 18c4.4 0 8-2.7 8-6s-3.6-6-8-6-8 2.7-8 6 3.6 6 8 6z" },
  { tool: "arrow", label: "Arrow", key: "A", path: "M5 19L19 5M10 5h9v9" },
  { tool: "text", label: "Text", key: "T", path: "M5 7V5h14v2M12 5v14M9 19h6" },
  { tool: "sticky", label: "Sticky note", key: "N", path: "M5 4h14v10l-6 6H5zM13 20v-6h6" },
  { tool: "pan", label: "Pan", key: "H", path: "M12 3v18M3 12h18M9 6l3-3 3 3M9 18l3 3 3-3M6 9l-3 3 3 3M18 9l3 3-3 3" },
];

/** Inks that read on the white page, and the note colour each gives a sticky. */
const COLORS: { name: string; ink: string; note: string }[] = [
  { name: "Black", ink: "#1d1f23", note: "#fde68a" },
  { name: "Red", ink: "#c0392b", note: "#fecaca" },
  { name: "Orange", ink: "#c26a00", note: "#fed7aa" },
  { name: "Green", ink: "#1e7a46", note: "#bbf7d0" },
  { name: "Blue", ink: "#2456c9", note: "#bfdbfe" },
  { name: "Purple", ink: "#6b3fa0", note: "#e9d5ff" },
];
const WIDTHS = [
  { label: "Thin", sw: 2, text: 20 },
  { label: "Medium", sw: 4, text: 28 },
  { label: "Thick", sw: 8, text: 40 },
];
const textSize = (sw: number) => WIDTHS.find((w) => w.sw === sw)?.text ?? 28;
const wrap = (text: string, width: number, size: number) => wrapText(text, width, size);
const HISTORY = 200;

type View = { x: number; y: number; s: number };
type Editing = { id?: number; kind: "text" | "sticky"; x: number; y: number; value: string };
type Gesture =
  | { type: "pan"; sx: number; sy: number; view: View }
  | { type: "pinch"; d: number; mx: number; my: number; view: View; before: Item[] }
  | { type: "move"; start: Point; before: Item[]; ids: Set<number>; started: boolean }
  | { type: "band"; start: Point; add: Set<number> }
  | { type: "draw"; start: Point; item: Item }
  | { type: "place"; start: Point };

function isTyping(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return !!el && ["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName);
}

export function Whiteboard({
  channel,
  path,
  onDirty,
}: {
  channel: string;
  path: string;
  /** Told whenever the board's unsaved state changes (Cowork asks before a change on disk replaces it). */
  onDirty?: (dirty: boolean) => void;
}): JSX.Element {
  const name = path.split("/").pop() || path;
  const archived = channelByName(channel)?.channel.status === "archived";
  const [meta, setMeta] = useState<Omit<Board, "items">>();
  const [items, setItemsState] = useState<Item[]>([]);
  const itemsRef = useRef<Item[]>([]);
  const savedRef = useRef<Item[]>([]);
  // When the file we have was last changed: a save over someone else's
  // newer version (the agent's, say) asks for a second Save first.
  const version = useRef<string | null | undefined>(undefined);
  const overwrite = useRef(false);
  const past = useRef<Item[][]>([]);
  const future = useRef<Item[][]>([]);
  const [loadError, setLoadError] = useState<string>();
  const [retryable, setRetryable] = useState(false);
  const [attempt, setAttempt] = useState(0);
  const [missing, setMissing] = useState(false);
  const [saveError, setSaveError] = useState<string>();
  const [refused, setRefused] = useState<string>();
  const [saving, setSaving] = useState(false);
  const [, setTick] = useState(0);
  const [selected, setSelected] = useState<Set<number>>(new Set());
  const [tool, setTool] = useState<Tool>("select");
  const [ink, setInk] = useState(COLORS[0]!);
  const [sw, setSw] = useState(4);
  const [view, setViewState] = useState<View>({ x: 0, y: 0, s: 1 });
  const viewRef = useRef(view);
  const [size, setSize] = useState<{ w: number; h: number }>();
  const [draft, setDraft] = useState<Item>();
  const [band, setBand] = useState<Box>();
  const [editing, setEditing] = useState<Editing>();
  const editingRef = useRef<Editing | undefined>(undefined);
  const [spaceHeld, setSpaceHeld] = useState(false);
  const gesture = useRef<Gesture | undefined>(undefined);
  const pointers = useRef(new Map<number, Point>());
  const measured = useRef(new Map<number, Box>());
  const stage = useRef<HTMLDivElement>(null);
  const canvas = useRef<SVGSVGElement>(null);
  // Fitted to the stage until someone pans or zooms: a resize (a phone
  // turned, the window narrowed) fits again.
  const fitted = useRef(false);
  const autoFit = useRef(true);

  const readOnlyReason = archived ? `#${channel} is archived; restore it to change its workspace. The whiteboard is read-only.` : refused;
  const readOnly = readOnlyReason !== undefined;
  const dirty = missing || items !== savedRef.current;

  const setItems = (next: Item[]) => {
    itemsRef.current = next;
    setItemsState(next);
  };
  const setView = (next: View, auto = false) => {
    autoFit.current = auto;
    viewRef.current = next;
    setViewState(next);
  };
  const commit = (next: Item[], before = itemsRef.current) => {
    if (next === before) return;
    past.current.push(before);
    if (past.current.length > HISTORY) past.current.shift();
    future.current = [];
    setItems(next);
  };

  // Load (and load again on Retry).
  useEffect(() => {
    let live = true;
    setLoadError(undefined);
    setMeta(undefined);
    const stat = api.get("/api/channels/{channel}/files/stat", { path: { channel }, query: { path } }).catch(() => undefined);
    api
      .get("/api/channels/{channel}/files/read", { path: { channel }, query: { path } })
      .then(async (file) => {
        version.current = (await stat)?.modified;
        overwrite.current = false;
        if (!live) return;
        if (file.truncated) throw new BoardError("This whiteboard is larger than the 1 MiB Helm opens here. Download it to open it in another program.");
        open(file.content, false);
      })
      .catch((e) => {
        if (!live) return;
        if (e instanceof ApiError && e.status === 404) return open(EMPTY_BOARD, true);
        setRetryable(!(e instanceof BoardError) && !(e instanceof ApiError && e.status === 422));
        setLoadError(
          e instanceof ApiError && e.status === 422 ? `${path} is not a text file, so it is not a whiteboard Helm can open.` : describeError(e),
        );
      });
    const open = (content: string, isNew: boolean) => {
      try {
        const board = parseBoard(content);
        const { items: loaded, ...rest } = board;
        past.current = [];
        future.current = [];
        savedRef.current = loaded;
        measured.current = new Map();
        fitted.current = false;
        setItems(loaded);
        setSelected(new Set());
        setMissing(isNew);
        setMeta(rest);
      } catch (e) {
        setRetryable(false);
        setLoadError(describeError(e));
      }
    };
    return () => {
      live = false;
    };
  }, [channel, path, attempt]);

  // The stage's size, and the page fitted into it once both are known.
  useLayoutEffect(() => {
    const el = stage.current;
    if (!el) return;
    const observer = new ResizeObserver(([entry]) => {
      const box = entry?.contentRect;
      if (box) setSize({ w: box.width, h: box.height });
    });
    observer.observe(el);
    return () => observer.disconnect();
  }, [meta !== undefined]);
  useEffect(() => {
    if (meta && size && size.w > 0 && (!fitted.current || autoFit.current)) {
      fitted.current = true;
      fit();
    }
  }, [meta, size]);

  // Unsaved changes: the browser asks before the page goes.
  useEffect(() => {
    onDirty?.(dirty && !readOnly);
    if (!dirty || readOnly) return;
    const warn = (e: BeforeUnloadEvent) => {
      e.preventDefault();
      e.returnValue = "";
    };
    window.addEventListener("beforeunload", warn);
    return () => window.removeEventListener("beforeunload", warn);
  }, [dirty, readOnly]);

  // Foreign elements are measured by the browser once drawn (for hit tests and the rubber band).
  useLayoutEffect(() => {
    const svg = canvas.current;
    if (!svg) return;
    for (const item of items) {
      if (item.kind !== "foreign" || !item.visual || measured.current.has(item.id)) continue;
      const el = svg.querySelector<SVGGraphicsElement>(`[data-wb="${item.id}"]`);
      if (!el) continue;
      try {
        const b = el.getBBox();
        measured.current.set(item.id, { x: b.x, y: b.y, w: b.width, h: b.height });
      } catch {
        // Not rendered (display: none, say): it cannot be picked by a click.
      }
    }
  });

  const toWorld = (clientX: number, clientY: number): Point => {
    const r = stage.current!.getBoundingClientRect();
    const v = viewRef.current;
    return { x: v.x + (clientX - r.left) / v.s, y: v.y + (clientY - r.top) / v.s };
  };

  const zoomAt = (factor: number, sx?: number, sy?: number) => {
    const v = viewRef.current;
    const w = size?.w ?? 800;
    const h = size?.h ?? 600;
    const px = sx ?? w / 2;
    const py = sy ?? h / 2;
    const s = Math.min(8, Math.max(0.1, v.s * factor));
    const wx = v.x + px / v.s;
    const wy = v.y + py / v.s;
    setView({ x: wx - px / s, y: wy - py / s, s });
  };

  const fit = () => {
    const el = stage.current;
    if (!meta || !el) return;
    const w = el.clientWidth || 800;
    const h = el.clientHeight || 600;
    let box: Box = meta.page;
    for (const item of itemsRef.current) {
      const b = bounds(item, measured.current);
      if (!b) continue;
      const x = Math.min(box.x, b.x);
      const y = Math.min(box.y, b.y);
      box = { x, y, w: Math.max(box.x + box.w, b.x + b.w) - x, h: Math.max(box.y + box.h, b.y + b.h) - y };
    }
    const s = Math.min(8, Math.max(0.1, Math.min(w / box.w, h / box.h) * 0.94));
    setView({ x: box.x - (w / s - box.w) / 2, y: box.y - (h / s - box.h) / 2, s }, true);
  };

  // Text being typed (a new text or sticky, or one being edited).
  const startEditing = (next: Editing) => {
    editingRef.current = next;
    setEditing(next);
  };
  const finishEditing = (keep: boolean) => {
    const e = editingRef.current;
    if (!e) return;
    editingRef.current = undefined;
    setEditing(undefined);
    if (!keep) return;
    const text = e.kind === "text" ? e.value.replace(/\s*\n\s*/g, " ") : e.value.replace(/\s+$/, "");
    const current = itemsRef.current;
    if (e.id !== undefined) {
      const old = current.find((i) => i.id === e.id);
      if (!old || (old.kind !== "text" && old.kind !== "sticky") || old.text === text) return;
      if (text.trim() === "") return commit(current.filter((i) => i.id !== e.id));
      commit(current.map((i) => (i.id !== e.id ? i : i.kind === "sticky" ? { ...i, text, h: stickyHeight(text, i.w) } : { ...i, text })));
    } else if (text.trim() !== "") {
      const item: Item =
        e.kind === "text"
          ? { id: newId(), kind: "text", x: e.x, y: e.y, text, color: ink.ink, size: textSize(sw) }
          : { id: newId(), kind: "sticky", x: e.x, y: e.y, w: 200, h: stickyHeight(text, 200), text, fill: ink.note };
      commit([...current, item]);
    }
  };
  const editItem = (item: Item) => {
    if (readOnly) return;
    if (item.kind === "text" || item.kind === "sticky") {
      setSelected(new Set([item.id]));
      startEditing({ id: item.id, kind: item.kind, x: item.x, y: item.y, value: item.text });
    }
  };

  const save = async () => {
    if (readOnly || saving || !meta) return;
    finishEditing(true);
    // Nothing changed: the agent's file keeps its own formatting.
    if (!missing && itemsRef.current === savedRef.current) return;
    const snapshot = itemsRef.current;
    const content = serializeBoard({ ...meta, items: snapshot }, wrap);
    setSaving(true);
    setSaveError(undefined);
    try {
      if (!missing && !overwrite.current && version.current) {
        const now = await api.get("/api/channels/{channel}/files/stat", { path: { channel }, query: { path } }).catch(() => undefined);
        if (now?.modified && now.modified !== version.current) {
          overwrite.current = true;
          setSaveError(`${name} was changed by someone else (the agent, perhaps) since you opened it. Save again to replace their version with yours, or reload the page to see theirs (your changes would be lost).`);
          return;
        }
      }
      const written = await api.put("/api/channels/{channel}/files", { path: { channel }, body: { path, content } });
      version.current = written?.modified;
      overwrite.current = false;
      savedRef.current = snapshot;
      setMissing(false);
      toast(`Saved ${name}.`);
    } catch (e) {
      if (e instanceof ApiError && (e.status === 403 || e.status === 409)) setRefused(`${e.message} The whiteboard is read-only.`);
      else setSaveError(describeError(e));
    } finally {
      setSaving(false);
    }
  };

  const undo = () => {
    const prev = past.current.pop();
    if (!prev) return;
    future.current.push(itemsRef.current);
    setItems(prev);
    setTick((t) => t + 1);
  };
  const redo = () => {
    const next = future.current.pop();
    if (!next) return;
    past.current.push(itemsRef.current);
    setItems(next);
    setTick((t) => t + 1);
  };
  const remove = () => {
    if (selected.size === 0 || readOnly) return;
    commit(itemsRef.current.filter((i) => !selected.has(i.id)));
    setSelected(new Set());
  };
  const restyle = (change: (i: Item) => Item) => {
    if (selected.size === 0 || readOnly) return;
    const next = itemsRef.current.map((i) => (selected.has(i.id) ? change(i) : i));
    if (next.some((item, k) => item !== itemsRef.current[k])) commit(next);
  };
  const pickColor = (c: (typeof COLORS)[number]) => {
    setInk(c);
    restyle((i) => {
      switch (i.kind) {
        case "rect":
        case "ellipse":
        case "pen":
        case "arrow":
          return i.stroke === c.ink ? i : { ...i, stroke: c.ink };
        case "text":
          return i.color === c.ink ? i : { ...i, color: c.ink };
        case "sticky":
          return i.fill === c.note ? i : { ...i, fill: c.note };
        default:
          return i;
      }
    });
  };
  const pickWidth = (value: number) => {
    setSw(value);
    restyle((i) => {
      if (i.kind === "rect" || i.kind === "ellipse" || i.kind === "pen" || i.kind === "arrow") return i.sw === value ? i : { ...i, sw: value };
      if (i.kind === "text") return i.size === textSize(value) ? i : { ...i, size: textSize(value) };
      return i;
    });
  };
  const nudge = (dx: number, dy: number) => restyle((i) => moved(i, dx, dy));
  const chooseTool = (t: Tool) => {
    finishEditing(true);
    setTool(t);
    if (t !== "select") setSelected(new Set());
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
      if (g?.type === "move" || g?.type === "draw") setItems(g.type === "move" ? g.before : itemsRef.current);
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
    else if (tool === "rect") item = { ...common, kind: "rect", x: p.x, y: p.y, w: 0, h: 0, fill: "none" };
    else if (tool === "ellipse") item = { ...common, kind: "ellipse", cx: p.x, cy: p.y, rx: 0, ry: 0, fill: "none" };
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
    if (g.type === "move") {
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

  const keys = (e: KeyboardEvent) => {
    const mod = e.ctrlKey || e.metaKey;
    const key = e.key.toLowerCase();
    let handled = true;
    if (mod && key === "s") void save();
    else if (isTyping(e.target)) return;
    else if (mod && (key === "y" || (key === "z" && e.shiftKey))) redo();
    else if (mod && key === "z") undo();
    else if (mod && key === "a") setSelected(new Set(itemsRef.current.filter((i) => bounds(i, measured.current)).map((i) => i.id)));
    else if (mod || e.altKey) handled = false;
    else if (key === "delete" || key === "backspace") remove();
    else if (key === "escape") {
      if (selected.size) setSelected(new Set());
      else if (tool !== "select") setTool("select");
      else handled = false;
    } else if (key === "enter" && selected.size === 1) {
      const item = itemsRef.current.find((i) => selected.has(i.id));
      if (item) editItem(item);
    } else if (key === "+" || key === "=") zoomAt(1.25);
    else if (key === "-" || key === "_") zoomAt(0.8);
    else if (key === "0") fit();
    else if (key.startsWith("arrow") && selected.size) {
      const step = e.shiftKey ? 10 : 1;
      nudge(key === "arrowleft" ? -step : key === "arrowright" ? step : 0, key === "arrowup" ? -step : key === "arrowdown" ? step : 0);
    } else if (key === " " && e.target === canvas.current) setSpaceHeld(true);
    else {
      const t = TOOLS.find((x) => x.key.toLowerCase() === key);
      if (t && (!readOnly || t.tool === "select" || t.tool === "pan")) chooseTool(t.tool);
      else handled = false;
    }
    if (handled) {
      e.preventDefault();
      e.stopPropagation();
    }
  };
  const keyUp = (e: KeyboardEvent) => {
    if (e.key === " ") setSpaceHeld(false);
  };

  if (loadError) {
    return (
      <div class="wb wb-failed">
        <ErrorNote error={loadError} onRetry={retryable ? () => setAttempt((a) => a + 1) : undefined} />
      </div>
    );
  }

  const shown = editing?.id !== undefined ? items.filter((i) => i.id !== editing.id) : items;
  const all = draft ? [...shown, draft] : shown;
  const w = size?.w ?? 0;
  const h = size?.h ?? 0;
  const lineW = 1.5 / view.s;
  const status = readOnly ? "Read-only" : saving ? "Saving…" : missing ? "New, not saved yet" : dirty ? "Unsaved changes" : "Saved";
  return (
    <div class="wb" onKeyDown={keys} onKeyUp={keyUp}>
      <div class="wb-bar" role="toolbar" aria-label="Whiteboard tools">
        <div class="wb-group" role="group" aria-label="Tools">
          {TOOLS.map((t) => (
            <button
              key={t.tool}
              type="button"
              class={tool === t.tool ? "wb-tool current" : "wb-tool"}
              aria-label={t.label}
              aria-pressed={tool === t.tool}
              aria-keyshortcuts={t.key}
              title={`${t.label} (${t.key})`}
              disabled={readOnly && t.tool !== "select" && t.tool !== "pan"}
              onClick={() => chooseTool(t.tool)}
            >
              <ToolIcon path={t.path} />
            </button>
          ))}
        </div>
        <div class="wb-group" role="group" aria-label="Colour">
          {COLORS.map((c) => (
            <button
              key={c.name}
              type="button"
              class="wb-swatch"
              aria-label={c.name}
              aria-pressed={ink.name === c.name}
              title={`${c.name}${selected.size ? " (also the selection)" : ""}`}
              disabled={readOnly}
              onClick={() => pickColor(c)}
            >
              <span style={{ background: c.ink }} />
            </button>
          ))}
          <select class="wb-width" aria-label="Stroke width" title="Stroke width (and text size)" value={sw} disabled={readOnly} onChange={(e) => pickWidth(Number(e.currentTarget.value))}>
            {WIDTHS.map((x) => (
              <option key={x.sw} value={x.sw}>
                {x.label}
              </option>
            ))}
          </select>
        </div>
        <div class="wb-group" role="group" aria-label="Edit">
          <button type="button" class="wb-tool" aria-label="Undo" title="Undo (Ctrl+Z)" aria-keyshortcuts="Control+Z Meta+Z" disabled={readOnly || past.current.length === 0} onClick={undo}>
            <ToolIcon path="M9 14L4 9l5-5M4 9h10.5a5.5 5.5 0 0 1 0 11H11" />
          </button>
          <button type="button" class="wb-tool" aria-label="Redo" title="Redo (Shift+Ctrl+Z)" aria-keyshortcuts="Shift+Control+Z Shift+Meta+Z" disabled={readOnly || future.current.length === 0} onClick={redo}>
            <ToolIcon path="M15 14l5-5-5-5M20 9H9.5a5.5 5.5 0 0 0 0 11H13" />
          </button>
          <button type="button" class="wb-tool" aria-label="Delete selection" title="Delete (Delete)" aria-keyshortcuts="Delete Backspace" disabled={readOnly || selected.size === 0} onClick={remove}>
            <Icon name="trash" size={18} />
          </button>
        </div>
        <div class="wb-group" role="group" aria-label="Zoom">
          <button type="button" class="wb-tool" aria-label="Zoom out" title="Zoom out (−)" aria-keyshortcuts="-" onClick={() => zoomAt(0.8)}>
            <ToolIcon path="M5 12h14" />
          </button>
          <span class="wb-zoom" title="Zoom (Ctrl+wheel, or pinch)">{Math.round(view.s * 100)}%</span>
          <button type="button" class="wb-tool" aria-label="Zoom in" title="Zoom in (+)" aria-keyshortcuts="+" onClick={() => zoomAt(1.25)}>
            <ToolIcon path="M12 5v14M5 12h14" />
          </button>
          <button type="button" class="btn btn-small btn-ghost" title="Fit the board to the window (0)" aria-keyshortcuts="0" onClick={fit}>
            Fit
          </button>
        </div>
        <span class={dirty && !readOnly ? "wb-status changed" : "wb-status"} role="status">
          {status}
        </span>
        {!readOnly && (
          <button type="button" class="btn btn-small btn-primary wb-save" title="Save (Ctrl+S)" aria-keyshortcuts="Control+S Meta+S" disabled={saving || !meta || !dirty} onClick={() => void save()}>
            {saving ? "Saving…" : "Save"}
          </button>
        )}
      </div>
      {readOnlyReason && (
        <p class="wb-note" role="note">
          {readOnlyReason}
        </p>
      )}
      <ErrorNote error={saveError} />
      <div ref={stage} class={`wb-stage tool-${spaceHeld ? "pan" : tool}`} onWheel={wheel}>
        {!meta && <p class="muted pad">Loading {name}…</p>}
        {meta && (
          <svg
            ref={canvas}
            class="wb-canvas"
            xmlns="http://www.w3.org/2000/svg"
            viewBox={`${view.x} ${view.y} ${w / view.s || 1} ${h / view.s || 1}`}
            tabindex={0}
            role="application"
            aria-roledescription="whiteboard"
            aria-describedby="wb-help"
            aria-label={`Whiteboard ${name}: ${items.length} ${items.length === 1 ? "item" : "items"}${selected.size ? `, ${selected.size} selected` : ""}`}
            onMouseDown={(e) => e.button === 1 && e.preventDefault() /* no autoscroll: a middle drag pans */}
            onPointerDown={down}
            onPointerMove={move}
            onPointerUp={up}
            onPointerCancel={up}
            onDblClick={dblclick}
          >
            <defs>
              {markers(all).map((stroke) => (
                <marker key={stroke} id={markerId(stroke)} viewBox="0 0 10 10" refX="7" refY="5" markerWidth="4" markerHeight="4" orient="auto-start-reverse">
                  <path d="M0 0L10 5L0 10z" fill={stroke} />
                </marker>
              ))}
            </defs>
            <rect class="wb-page" x={meta.page.x} y={meta.page.y} width={meta.page.w} height={meta.page.h} fill="#ffffff" stroke="#d7d7d3" stroke-width={lineW} />
            {all.map((item) => (
              <ItemView key={item.id} item={item} />
            ))}
            {[...selected].map((id) => {
              const item = items.find((i) => i.id === id);
              const b = item && item.id !== editing?.id && bounds(item, measured.current);
              if (!b) return null;
              const pad = 4 / view.s;
              return <rect key={id} x={b.x - pad} y={b.y - pad} width={b.w + 2 * pad} height={b.h + 2 * pad} fill="none" stroke="#2456c9" stroke-width={lineW} stroke-dasharray={`${4 / view.s} ${3 / view.s}`} pointer-events="none" />;
            })}
            {band && <rect x={band.x} y={band.y} width={band.w} height={band.h} fill="#2456c91a" stroke="#2456c9" stroke-width={lineW} pointer-events="none" />}
          </svg>
        )}
        {editing && <TextOverlay editing={editing} view={view} size={textSize(sw)} fill={ink.note} editingSize={items.find((i) => i.id === editing.id)} onChange={(value) => startEditing({ ...editing, value })} onDone={finishEditing} />}
      </div>
      <p class="visually-hidden" id="wb-help">
        Tools: V select, P pen, R rectangle, O ellipse, A arrow, T text, N sticky note, H pan. Arrow keys move the selection, Enter edits its text, Delete removes it.
      </p>
    </div>
  );
}

function ToolIcon({ path }: { path: string }) {
  return (
    <svg class="icon" width="18" height="18" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true" focusable="false">
      <path d={path} />
    </svg>
  );
}

function TextOverlay({
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

function ItemView({ item }: { item: Item }) {
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
  return <g ref={ref} data-wb={item.id} transform={item.dx || item.dy ? `translate(${item.dx} ${item.dy})` : undefined} />;
}
