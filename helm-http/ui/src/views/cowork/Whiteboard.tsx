// Cowork's whiteboard: a plain SVG file of the workspace (whiteboards/*.svg)
// drawn on and saved back through the files API, so the agent reads and
// writes the same file with its own tools. Pen, rectangle, ellipse, arrow,
// text and sticky notes are the editor's own shapes (resized by handles,
// copied, pasted, filled); anything else the file holds is kept exactly,
// shown sanitised, and can be moved, copied or deleted whole.
// The model, the file format and the geometry are in lib/whiteboard/.
//
// Here: the component (its state, loading and saving, editing, the board
// drawn). Beside it: whiteboardTools.ts (tools, inks, shared types),
// WhiteboardToolbar.tsx, useBoardPointer.ts (pointer) and boardKeys.ts
// (keyboard), WhiteboardItems.tsx (the items drawn, the selection and its
// handles, the text box), whiteboardClipboard.ts and whiteboardFile.ts (the
// file through the API).
import type { JSX } from "preact";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { ApiError, describeError } from "../../api/client";
import { ErrorNote } from "../../components/Field";
import { bounds, moved, stickyHeight, type Box } from "../../lib/whiteboard/geometry";
import { cloneItems } from "../../lib/whiteboard/clone";
import { EMPTY_BOARD, markerId, markers, newId, parseBoard, serializeBoard, type Board, type Item } from "../../lib/whiteboard/model";
import { filled, inked, isClosed } from "../../lib/whiteboard/style";
import { channelByName } from "../../state/channels";
import { toast } from "../../state/toasts";
import { useBoardPointer } from "./useBoardPointer";
import { canPaste, copyItems, pasteItems } from "./whiteboardClipboard";
import { changedMeanwhile, changedMessage, loadProblem, readBoardFile, tooBig, writeBoardFile } from "./whiteboardFile";
import { ItemView, SelectionMarks, TextOverlay } from "./WhiteboardItems";
import { WhiteboardToolbar } from "./WhiteboardToolbar";
import { COLORS, FILLS, HISTORY, PASTE_OFFSET, textSize, wrap, type Editing, type Tool, type View } from "./whiteboardTools";

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
  // The file's version as read or last saved: what a save is made over.
  const version = useRef<string | undefined>(undefined);
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
  const [fill, setFill] = useState(FILLS[0]!.fill);
  const [view, setViewState] = useState<View>({ x: 0, y: 0, s: 1 });
  const viewRef = useRef(view);
  const [size, setSize] = useState<{ w: number; h: number }>();
  const [editing, setEditing] = useState<Editing>();
  const editingRef = useRef<Editing | undefined>(undefined);
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
    readBoardFile(channel, path)
      .then((file) => {
        version.current = file.version ?? undefined;
        overwrite.current = false;
        if (!live) return;
        if (file.truncated) throw tooBig();
        open(file.content, false);
      })
      .catch((e) => {
        if (!live) return;
        if (e instanceof ApiError && e.status === 404) return open(EMPTY_BOARD, true);
        const problem = loadProblem(e, path);
        setRetryable(problem.retryable);
        setLoadError(problem.message);
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
      // A note grows to hold its text and keeps a size it was given.
      commit(current.map((i) => (i.id !== e.id ? i : i.kind === "sticky" ? { ...i, text, h: Math.max(i.h, stickyHeight(text, i.w)) } : { ...i, text })));
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
      const base = missing || overwrite.current ? undefined : version.current;
      const written = await writeBoardFile(channel, path, content, base);
      version.current = written.version ?? undefined;
      overwrite.current = false;
      savedRef.current = snapshot;
      setMissing(false);
      toast(`Saved ${name}.`);
    } catch (e) {
      if (changedMeanwhile(e)) {
        // The next Save replaces their version, as the message says.
        overwrite.current = true;
        setSaveError(changedMessage(name));
      } else if (e instanceof ApiError && (e.status === 403 || e.status === 409)) setRefused(`${e.message} The whiteboard is read-only.`);
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
    restyle((i) => inked(i, c.ink, c.note));
  };
  const pickFill = (value: string) => {
    setFill(value);
    restyle((i) => filled(i, value));
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
  const chosen = () => itemsRef.current.filter((i) => selected.has(i.id));
  // Copies go on top, and become the selection (so a move or a second paste acts on them).
  const add = (copies: Item[]) => {
    if (readOnly || copies.length === 0) return;
    commit([...itemsRef.current, ...copies]);
    setSelected(new Set(copies.map((c) => c.id)));
  };
  const copy = () => {
    copyItems(chosen());
    // Paste's button reads the clipboard when drawn.
    setTick((t) => t + 1);
  };
  const cut = () => {
    if (readOnly) return;
    copy();
    remove();
  };
  // (Read-only: nothing taken from the clipboard, so the next paste elsewhere is not pushed further off.)
  const paste = () => !readOnly && add(pasteItems(itemsRef.current));
  const duplicate = () => add(cloneItems(chosen(), PASTE_OFFSET, PASTE_OFFSET, itemsRef.current, wrap));
  const chooseTool = (t: Tool) => {
    finishEditing(true);
    setTool(t);
    if (t !== "select") setSelected(new Set());
  };

  const { draft, band, spaceHeld, down, move, up, dblclick, wheel, keys, keyUp } = useBoardPointer({
    board: { meta, readOnly, itemsRef, measured, setItems, commit },
    tools: { tool, setTool, chooseTool, ink, sw, fill, selected, setSelected },
    view: { viewRef, stage, canvas, setView, zoomAt, fit },
    text: { editingRef, startEditing, finishEditing, editItem },
    commands: { save, undo, redo, remove, nudge, copy, cut, paste, duplicate },
  });

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
  // One filled shape selected: the palette shows its fill.
  const only = selected.size === 1 ? items.find((i) => selected.has(i.id)) : undefined;
  const shownFill = only && isClosed(only) ? only.fill : fill;
  const status = readOnly ? "Read-only" : saving ? "Saving…" : missing ? "New, not saved yet" : dirty ? "Unsaved changes" : "Saved";
  return (
    <div class="wb" onKeyDown={keys} onKeyUp={keyUp}>
      <WhiteboardToolbar
        state={{
          tool,
          ink,
          sw,
          fill: shownFill,
          readOnly,
          selectedCount: selected.size,
          canUndo: past.current.length > 0,
          canRedo: future.current.length > 0,
          canPaste: canPaste(),
          zoom: view.s,
          status,
          dirty,
          saving,
          loaded: meta !== undefined,
        }}
        actions={{
          onTool: chooseTool,
          onColor: pickColor,
          onWidth: pickWidth,
          onFill: pickFill,
          onUndo: undo,
          onRedo: redo,
          onRemove: remove,
          onCopy: copy,
          onPaste: paste,
          onDuplicate: duplicate,
          onZoom: zoomAt,
          onFit: fit,
          onSave: () => void save(),
        }}
      />
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
            <SelectionMarks items={items} selected={selected} hidden={editing?.id} measured={measured.current} scale={view.s} handles={!readOnly && !draft} />
            {band && <rect x={band.x} y={band.y} width={band.w} height={band.h} fill="#2456c91a" stroke="#2456c9" stroke-width={lineW} pointer-events="none" />}
          </svg>
        )}
        {editing && <TextOverlay editing={editing} view={view} size={textSize(sw)} fill={ink.note} editingSize={items.find((i) => i.id === editing.id)} onChange={(value) => startEditing({ ...editing, value })} onDone={finishEditing} />}
      </div>
      <p class="visually-hidden" id="wb-help">
        Tools: V select, P pen, R rectangle, O ellipse, A arrow, T text, N sticky note, H pan. Drag a handle of the selection to resize it (Shift keeps its proportions). Arrow keys move the selection (Shift: 10 steps), Enter edits its text, Delete removes it, Ctrl+C copies, Ctrl+X cuts, Ctrl+V pastes, Ctrl+D duplicates.
      </p>
    </div>
  );
}
